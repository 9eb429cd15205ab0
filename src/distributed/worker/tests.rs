//! Unit tests of the worker: the cache refuses a file of another content, a
//! canned record passes the coordinator's check, the pulling task is let
//! go when the games held fall below the mark.

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
