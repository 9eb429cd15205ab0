//! Unit tests of the worker: the cache refuses a file of another content, a
//! canned record passes the coordinator's check, the pulling task is let
//! go when the games held fall below the mark, a game that panics loses
//! itself only.

use super::cache::{read_verified, store_file};
use super::*;
use crate::engine::prepare::sha256_hex;

#[test]
fn a_canned_record_passes_the_coordinators_check() {
    let cfg = RefereeConfig::default();
    let r = canned_record(&cfg, 42);
    assert_eq!(wire::check_record(&cfg, 42, r.clone()), Ok(r));
}

#[test]
fn a_cached_file_with_another_content_is_not_used() {
    let dir = tempfile::tempdir().unwrap();
    let good = b"program".to_vec();
    let sha = sha256_hex(&good);
    let path = dir.path().join(&sha);
    store_file(dir.path(), &path, &good);
    assert_eq!(read_verified(&path, &sha), Some(good));
    std::fs::write(&path, b"another program").unwrap();
    assert_eq!(read_verified(&path, &sha), None);
    assert!(!path.exists(), "the bad file is removed");
}

#[test]
fn the_pulling_task_goes_on_only_once_fewer_games_than_the_mark_are_held() {
    use futures_util::FutureExt;
    let places = GamePlaces::new(2);
    assert_eq!(places.free().now_or_never(), Some(2));
    // A job of five games: no pull until four of them are done.
    places.take(5);
    for _ in 0..4 {
        assert_eq!(places.free().now_or_never(), None);
        places.give_back(1);
    }
    assert_eq!(places.free().now_or_never(), Some(1));
    places.give_back(1);
    assert_eq!(places.free().now_or_never(), Some(2));
}

/// Games of two programs that cannot play (no module to run: the referee
/// records both players' failures at once), each of its own seed.
fn unplayable_games(seeds: std::ops::Range<u64>) -> Vec<Game> {
    let nothing: Arc<Loaded> = Arc::new(Err(crate::wasm::NotPlayable("no module".into())));
    seeds
        .map(|s| {
            (
                Referee::new(RefereeConfig::default()),
                [nothing.clone(), nothing.clone()],
                GameSeeds {
                    game: s,
                    players: [s + 100, s + 200],
                },
            )
        })
        .collect()
}

#[test]
fn a_game_that_panics_loses_itself_only_and_the_thread_plays_on() {
    use futures_util::FutureExt;
    let threads = GameThreads::start(1, Some(3));
    let places = Arc::new(GamePlaces::new(2));
    places.take(5);
    let records =
        futures_executor_block_on(threads.play_batch(unplayable_games(1..6), Some(places.clone())))
            .expect("the batch is answered");
    assert_eq!(records.len(), 5);
    for (i, r) in records.iter().enumerate() {
        if i == 2 {
            let e = r.as_ref().unwrap_err();
            assert!(e.contains("panicked") && e.contains("engine fault"), "{e}");
        } else {
            assert_eq!(r.as_ref().unwrap().seed, i as u64 + 1, "{r:?}");
        }
    }
    // Every game's place came back, the panicking one's too.
    assert_eq!(places.free().now_or_never(), Some(2));
    // The thread lives on: the next batch is played.
    let again =
        futures_executor_block_on(threads.play_batch(unplayable_games(6..8), None)).unwrap();
    assert!(again.iter().all(|r| r.is_ok()), "{again:?}");
}

/// Waits for a future on a runtime of its own (the game threads answer
/// through a oneshot).
fn futures_executor_block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(f)
}

#[test]
fn a_worker_with_a_nats_user_is_named_by_it_and_names_are_subject_tokens() {
    let host = || "lab-3.example.org-77".to_string();
    assert_eq!(
        worker_name(Some("worker-1"), None, host),
        Ok("worker-1".into())
    );
    assert_eq!(
        worker_name(Some("worker-1"), Some("worker-1"), host),
        Ok("worker-1".into())
    );
    // A name the server does not vouch for is refused, not used.
    assert!(worker_name(Some("worker-1"), Some("worker-2"), host).is_err());
    assert!(worker_name(Some("worker.1"), None, host).is_err());
    assert!(worker_name(None, Some("a.b"), host).is_err());
    assert!(worker_name(None, Some("*"), host).is_err());
    assert_eq!(worker_name(None, Some("w1"), host), Ok("w1".into()));
    // The default, from the host's name, is made a valid token.
    assert_eq!(
        worker_name(None, None, host),
        Ok("lab-3-example-org-77".into())
    );
}
