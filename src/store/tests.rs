//! Unit tests of the store: migrations and opening, games stored for
//! replay, the throws' encoding, seeds.

use super::*;

/// A database at `path` as a server left it that knew only the first
/// `migrations` of [`MIGRATIONS`]: their schema and their version.
fn database_of_migrations(path: &std::path::Path, migrations: usize) -> Connection {
    let c = Connection::open(path).unwrap();
    for (_, sql) in &MIGRATIONS[..migrations] {
        c.execute_batch(sql).unwrap();
    }
    c.pragma_update(None, "user_version", migrations as i64)
        .unwrap();
    c
}

/// How many of [`MIGRATIONS`] come before the one named `name`: a
/// database of that many is one as a server left it before `name`.
fn migrations_before(name: &str) -> usize {
    MIGRATIONS
        .iter()
        .position(|(n, _)| *n == name)
        .unwrap_or_else(|| panic!("no migration {name}"))
}

/// Every row `sql` reads, each column as SQLite holds it.
fn rows_of(c: &Connection, sql: &str) -> Vec<Vec<rusqlite::types::Value>> {
    let mut st = c.prepare(sql).unwrap();
    let n = st.column_count();
    st.query_map([], |r| (0..n).map(|i| r.get(i)).collect())
        .unwrap()
        .map(|r| r.unwrap())
        .collect()
}

/// The first column of every row `sql` reads.
fn column<T: rusqlite::types::FromSql>(c: &Connection, sql: &str) -> Vec<T> {
    c.prepare(sql)
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<std::result::Result<_, _>>()
        .unwrap()
}

/// A transaction that reads and then writes while another connection
/// writes (the contest lease's heartbeat beside a round's mails): it holds
/// the write lock from its start, so the other writer waits for it, and
/// its own write is never refused for a snapshot gone stale (before, the
/// deferred transaction's write failed at once: "database is locked").
#[test]
fn a_transaction_holds_the_write_lock_from_its_start() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("k.db");
    let store = Store::open(&path).unwrap();
    let other = Connection::open(&path).unwrap();
    let tx = store.conn().unchecked_transaction().unwrap();
    let before: i64 = tx
        .query_row("SELECT COUNT(*) FROM teams", [], |r| r.get(0))
        .unwrap();
    // Another connection that does not wait cannot write meanwhile...
    let refused = other.execute("DELETE FROM teams WHERE id = -1", []);
    assert!(
        matches!(&refused, Err(rusqlite::Error::SqliteFailure(f, _)) if f.code == rusqlite::ErrorCode::DatabaseBusy),
        "{refused:?}"
    );
    // ...so the transaction's own write after its read goes through.
    tx.execute(
        "INSERT INTO teams (name, created_at) VALUES ('late', '2026-11-30T00:00:00Z')",
        [],
    )
    .unwrap();
    tx.commit().unwrap();
    let after: i64 = other
        .query_row("SELECT COUNT(*) FROM teams", [], |r| r.get(0))
        .unwrap();
    assert_eq!(after, before + 1);
}

#[test]
fn a_reading_transaction_lets_others_write_and_keeps_its_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("k.db");
    let store = Store::open(&path).unwrap();
    let other = Store::open(&path).unwrap();
    let count = |c: &Connection| -> i64 {
        c.query_row("SELECT COUNT(*) FROM teams", [], |r| r.get(0))
            .unwrap()
    };
    let reading = store
        .reading_transaction()
        .unwrap()
        .expect("outside a transaction");
    let before = count(&reading);
    // Another store writes meanwhile without waiting: the reader holds no
    // write lock (the site's team pages read while the mail loop writes).
    other
        .conn()
        .busy_timeout(std::time::Duration::ZERO)
        .unwrap();
    let tx = other.conn().unchecked_transaction().unwrap();
    tx.execute(
        "INSERT INTO teams (name, created_at) VALUES ('meanwhile', '2026-11-30T00:00:00Z')",
        [],
    )
    .unwrap();
    tx.commit().unwrap();
    // The reader still reads the snapshot of its first read.
    assert_eq!(count(&reading), before);
    drop(reading);
    assert_eq!(count(store.conn()), before + 1);
    // Inside another transaction there is none of its own.
    let outer = store.conn().unchecked_transaction().unwrap();
    assert!(store.reading_transaction().unwrap().is_none());
    drop(outer);
}

#[test]
fn migrations_apply_once_and_record_the_version() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("k.db");
    let s = Store::open(&path).unwrap();
    assert_eq!(s.schema_version().unwrap(), MIGRATIONS.len() as i64);
    drop(s);
    // Reopening does not re-apply (which would fail on CREATE TABLE).
    let s = Store::open(&path).unwrap();
    assert_eq!(s.schema_version().unwrap(), MIGRATIONS.len() as i64);
    let fk: i64 = s
        .conn()
        .pragma_query_value(None, "foreign_keys", |r| r.get(0))
        .unwrap();
    assert_eq!(fk, 1);
    let mode: String = s
        .conn()
        .pragma_query_value(None, "journal_mode", |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
}

#[test]
fn open_existing_never_creates_a_database() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("knobeln.db");
    let err = Store::open_existing(&path).err().expect("no database");
    assert!(matches!(err, StoreError::NoDatabase { .. }));
    assert!(err.to_string().contains("no contest database at"), "{err}");
    assert!(!path.exists(), "nothing was created");
    drop(Store::open(&path).unwrap());
    let s = Store::open_existing(&path).unwrap();
    assert_eq!(s.schema_version().unwrap(), MIGRATIONS.len() as i64);
}

#[test]
fn a_database_of_an_older_version_is_migrated_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("k.db");
    {
        // A database as version 1 wrote it, with a team in it.
        let c = Connection::open(&path).unwrap();
        c.execute_batch(MIGRATIONS[0].1).unwrap();
        c.pragma_update(None, "user_version", 1).unwrap();
        c.execute(
            "INSERT INTO teams (name, created_at) VALUES ('old_team', 'x')",
            [],
        )
        .unwrap();
    }
    let s = Store::open(&path).unwrap();
    assert_eq!(s.schema_version().unwrap(), MIGRATIONS.len() as i64);
    let name: String = s
        .conn()
        .query_row("SELECT name FROM teams", [], |r| r.get(0))
        .unwrap();
    assert_eq!(name, "old_team");
    let n: i64 = s
        .conn()
        .query_row("SELECT COUNT(*) FROM inbox", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 0);
}

/// Registrations stored before their address could be proven keep the
/// places they held (schema 0021): counted as proven, new ones wait.
#[test]
fn registrations_from_before_proofs_keep_their_places() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("k.db");
    let before = migrations_before("0021_proven_registrations.sql");
    {
        let c = database_of_migrations(&path, before);
        c.execute_batch(
            "INSERT INTO teams (id, name, created_at) VALUES (1, 'old_team', 'x');
             INSERT INTO registrations (team_id, mail_address, requested_name, preferences,
                 organization, members, record, auth_salt, auth_hash, registered_at)
             VALUES (1, 'old@x.example', 'old_team', '', 'Org', '[]', '', x'00', x'00',
                 '1994-05-01T00:00:00Z');",
        )
        .unwrap();
    }
    let s = Store::open(&path).unwrap();
    let count = crate::store::mail::count_registrations(s.conn(), None).unwrap();
    assert_eq!(count.proven, 1);
    assert_eq!(count.waiting, 0);
}

/// Outgoing mails stored before bodies were kept apart (schema 0022) are
/// whole in their rows: sent as they are.
#[test]
fn outgoing_mails_from_before_shared_bodies_are_sent_whole() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("k.db");
    let before = migrations_before("0022_outbox_bodies.sql");
    let raw = format!(
        "Subject: s\r\n\r\n{}\r\n",
        "line of a long list\r\n".repeat(200)
    );
    {
        let c = database_of_migrations(&path, before);
        c.execute(
            "INSERT INTO outbox (kind, recipients, subject, message_id, raw, state,
                 next_attempt_at, created_at)
             VALUES ('lap', '[\"a@x.example\"]', 's', '<old@x>', ?1, 'queued',
                 '1994-05-01T00:00:00Z', '1994-05-01T00:00:00Z')",
            [raw.as_bytes()],
        )
        .unwrap();
    }
    let s = Store::open(&path).unwrap();
    let due = crate::store::mail::due_outgoing(s.conn(), chrono::Utc::now(), 10).unwrap();
    assert_eq!(due.len(), 1);
    assert!(due[0].raw == raw.as_bytes());
}

#[test]
fn a_newer_database_is_refused_not_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("k.db");
    {
        let c = Connection::open(&path).unwrap();
        c.pragma_update(None, "user_version", 999).unwrap();
    }
    assert!(matches!(
        Store::open(&path),
        Err(StoreError::TooNew { found: 999, .. })
    ));
}

/// A store with one team, `a`, alone in a tournament's round 1, group 1:
/// the store, the team and the tournament.
fn one_group_of_one_team() -> (Store, TeamId, i64) {
    let mut store = Store::open_in_memory().unwrap();
    let now = Utc::now();
    let team = store.ensure_team("a", now).unwrap();
    let v = store
        .insert_version(
            &NewVersion {
                team,
                source: b"x",
                source_sha256: "x",
                binary: Some(b"\0asm"),
                lexical_elements: None,
                description: None,
                report_json: "{}",
            },
            now,
        )
        .unwrap();
    let t = store
        .create_tournament(
            1,
            &SeedKey::public_from_seed(1),
            "{}",
            "k",
            &[(team, v)],
            now,
        )
        .unwrap();
    store
        .insert_round(t, 1, &[team], true, &[vec![team]])
        .unwrap();
    (store, team, t)
}

/// The game at `slot` of round 1, group 1, `team` against itself (seed 7).
fn game_of(team: TeamId, slot: u32) -> crate::tournament::schedule::ScheduledGame {
    use crate::tournament::schedule::{GameKey, ScheduledGame};
    ScheduledGame {
        key: GameKey {
            round: 1,
            group: 1,
            slot,
        },
        players: [team, team],
        members: [0, 0],
        attempt: 1,
        seed: 7,
    }
}

#[test]
fn a_game_is_stored_for_replay_unless_the_watchdog_ended_it() {
    use crate::referee::{Failure, FailureKind};
    let (store, team, t) = one_group_of_one_team();
    let now = Utc::now();
    let game = |slot| game_of(team, slot);
    let throws = vec![[100, 100]; 5];
    let plain = GameRecord {
        seed: 7,
        points: [0, 0],
        throws: throws.clone(),
        failures: vec![],
    };
    let mut watched = plain.clone();
    watched.failures = vec![Failure {
        player: 0,
        throw: 6,
        kind: FailureKind::WallClock { limit_ms: 10_000 },
        reason: "throw 6: …".into(),
    }];
    store.insert_game(t, &game(0), &plain, now).unwrap();
    store.insert_game(t, &game(1), &watched, now).unwrap();
    // Until another group finishes after this one, the throws of the game
    // stored for replay are kept by the connection that stored it.
    store.finish_group(t, 1, 1, now).unwrap();
    let games = store.games(t, 1, 1).unwrap();
    assert_eq!(games[0].throws_digest, None);
    assert_eq!(games[0].record.throws, throws);
    assert_eq!(games[1].record.throws, throws);
    // Read for the DGP protocols: the kept game's throws in their bytes
    // (format 1, not decoded), the watched game's (stored in format 1) too.
    let packed = store.games_packed(t, 1, 1).unwrap();
    for g in &packed {
        assert_eq!(g.packed.as_deref(), Some(&encode_throws(&throws)[..]));
        assert!(g.game.record.throws.is_empty());
        assert_eq!(g.game.throws_digest, None);
    }
    store.finish_group(t, 1, 2, now).unwrap();
    // Let go: the game stored for replay is read with its digest, as
    // `games` reads it, to be replayed.
    let packed = store.games_packed(t, 1, 1).unwrap();
    assert_eq!(packed[0].packed, None);
    assert_eq!(packed[0].game.throws_digest, Some(throws_digest(&throws)));
    assert!(packed[0].game.record.throws.is_empty());
    assert_eq!(
        packed[1].packed.as_deref(),
        Some(&encode_throws(&throws)[..])
    );
    let games = store.games(t, 1, 1).unwrap();
    assert_eq!(games[0].throws_digest, Some(throws_digest(&throws)));
    assert!(games[0].record.throws.is_empty());
    assert_eq!(games[1].throws_digest, None);
    assert_eq!(games[1].record.throws, throws);
}

/// Hostile review (F6): a game stored twice under one key keeps the first
/// record's row (`INSERT OR IGNORE`), and the connection keeps only the
/// record whose row it inserted; reading the group never shows the second
/// record's throws beside the first record's row, whichever of them was
/// stored for replay.
#[test]
fn a_row_that_another_record_won_never_shows_the_others_throws() {
    use crate::referee::{Failure, FailureKind};
    let (store, team, t) = one_group_of_one_team();
    let now = Utc::now();
    let game = |slot| game_of(team, slot);
    let record = |t: i64, watched: bool| GameRecord {
        seed: 7,
        points: [t as u64, 0],
        throws: vec![[t, t + 1]; 4],
        failures: if watched {
            vec![Failure {
                player: 0,
                throw: 5,
                kind: FailureKind::WallClock { limit_ms: 10_000 },
                reason: "throw 5: …".into(),
            }]
        } else {
            vec![]
        },
    };
    // Slot 0: both for replay; slot 1: the first kept whole (the
    // watchdog), the second for replay; slot 2: the first for replay, the
    // second kept whole.
    let pairs = [(false, false), (true, false), (false, true)];
    for (slot, &(first_watched, second_watched)) in pairs.iter().enumerate() {
        let slot = slot as u32;
        store
            .insert_game(t, &game(slot), &record(10, first_watched), now)
            .unwrap();
        store
            .insert_game(t, &game(slot), &record(20, second_watched), now)
            .unwrap();
    }
    let first = record(10, false).throws;
    // Red team G16: the games a group's DGP protocols are written from at
    // its end (the connection's kept ones, `group-end-reads`) are the
    // first records too, byte for byte what the store reads back.
    let kept = store
        .with_kept_games_packed(t, 1, 1, &[(0, 1), (1, 1), (2, 1)], |gs| {
            gs.iter().map(|g| g.to_packed_game()).collect::<Vec<_>>()
        })
        .expect("every game kept");
    let read = store.games_packed(t, 1, 1).unwrap();
    assert_eq!(kept.len(), read.len());
    for (k, r) in kept.iter().zip(&read) {
        assert_eq!(k.game.record.points, [10, 0], "slot {}", k.game.key.slot);
        assert_eq!(k.game.record.points, r.game.record.points);
        assert_eq!(k.game.record.failures, r.game.record.failures);
        assert_eq!(k.game.players, r.game.players);
        assert_eq!(k.packed.as_deref(), Some(&encode_throws(&first)[..]));
        assert_eq!(k.packed, r.packed, "slot {}", k.game.key.slot);
    }
    for games in [store.games(t, 1, 1).unwrap(), {
        store.finish_group(t, 1, 1, now).unwrap();
        store.games(t, 1, 1).unwrap()
    }] {
        assert_eq!(games.len(), 3);
        for g in &games {
            assert_eq!(g.record.points, [10, 0], "slot {}", g.key.slot);
            match g.throws_digest {
                // To be replayed: the first record's digest, no throws.
                Some(d) => {
                    assert_eq!(d, throws_digest(&first), "slot {}", g.key.slot);
                    assert!(g.record.throws.is_empty(), "slot {}", g.key.slot);
                }
                None => assert_eq!(g.record.throws, first, "slot {}", g.key.slot),
            }
        }
    }
}

#[test]
fn kept_throws_are_used_only_under_their_digest() {
    let mut recent = super::throws::RecentThrows::default();
    let throws = vec![[3, 4], [5, 6]];
    let encoded = super::throws::encode_throws(&throws);
    let digest = throws_digest(&throws);
    recent.keep(
        (1, 1, 1),
        (1, 1),
        super::throws::KeptGame {
            digest,
            encoded,
            players: [TeamId(1), TeamId(2)],
            record: GameRecord {
                seed: 7,
                points: [0, 0],
                throws: Vec::new(),
                failures: Vec::new(),
            },
        },
    );
    assert_eq!(
        recent.throws((1, 1, 1), (1, 1), &digest),
        Some(throws.clone())
    );
    assert_eq!(
        recent.throws((1, 1, 1), (1, 2), &digest),
        None,
        "another attempt"
    );
    let other = throws_digest(&[[3, 4]]);
    assert_eq!(
        recent.throws((1, 1, 1), (1, 1), &other),
        None,
        "another digest"
    );
    recent.finished((1, 1, 1));
    recent.finished((1, 1, 1));
    assert!(
        recent.throws((1, 1, 1), (1, 1), &digest).is_some(),
        "its group just finished"
    );
    recent.finished((1, 1, 2));
    assert_eq!(recent.throws((1, 1, 1), (1, 1), &digest), None, "let go");
}

/// The runs of the same throw read from format 1's bytes
/// (`packed_runs`, what the DGP protocols are written from) are the
/// decoded throws, and a blob the decoder refuses is refused (an error,
/// never a panic): random throws with runs and extremes, random bytes.
#[test]
fn packed_runs_are_the_decoded_throws() {
    let mut g = crate::seed::SplitMix64::new(38);
    let expand = |bytes: &[u8]| -> Result<Vec<[i64; 2]>> {
        let (count, runs) = packed_runs(bytes)?;
        let mut out = Vec::new();
        for run in runs {
            let (pair, n) = run?;
            assert!(n >= 1);
            out.extend(std::iter::repeat_n(pair, n));
        }
        assert_eq!(out.len(), count);
        Ok(out)
    };
    for case in 0..2000 {
        let len = g.below(200) as usize;
        let mut throws: Vec<[i64; 2]> = Vec::with_capacity(len);
        while throws.len() < len {
            let number = |g: &mut crate::seed::SplitMix64| match g.below(8) {
                0 => [0, -1, i64::MIN, i64::MAX][g.below(4) as usize],
                1 => g.next_u64() as i64,
                _ => 1 + g.below(12288) as i64,
            };
            let p = number(&mut g);
            let pair = if g.below(3) == 0 {
                [p, p]
            } else {
                [p, number(&mut g)]
            };
            // Runs of every length, some longer than a word of zero
            // bytes many times over (a constant strategy's).
            let run = if g.below(8) == 0 {
                1 + g.below(1000)
            } else {
                1 + g.below(40)
            };
            for _ in 0..run {
                throws.push(pair);
            }
        }
        let bytes = encode_throws(&throws);
        assert_eq!(expand(&bytes).unwrap(), throws, "case {case}");
        // Random bytes: refused exactly when decoding refuses them.
        let mut junk = Vec::new();
        for _ in 0..g.below(40) {
            match g.below(4) {
                0 => junk.push(0),
                1 => junk.push(0xff),
                // Stretches of zero bytes across words.
                2 => junk.extend(std::iter::repeat_n(0, g.below(20) as usize)),
                _ => junk.push(g.below(256) as u8),
            }
        }
        match decode_throws(&junk, THROWS_FORMAT) {
            Ok(t) => assert_eq!(expand(&junk).unwrap(), t, "{junk:?}"),
            Err(_) => assert!(expand(&junk).is_err(), "{junk:?}"),
        }
    }
    assert!(expand(&[0x80]).is_err());
    assert!(expand(&[2]).is_err());
    assert!(expand(&[0xff; 11]).is_err());
    assert!(expand(&[0xff; 12]).is_err());
    assert_eq!(expand(&[]).unwrap(), Vec::<[i64; 2]>::new());
}

#[test]
fn throws_round_trip() {
    let t = vec![[1, 12288], [100, 7], [-5, i32::MAX as i64], [i64::MIN, 0]];
    assert_eq!(decode_throws(&encode_throws(&t), THROWS_FORMAT).unwrap(), t);
    // Corrupt blobs are errors, never panics.
    assert!(decode_throws(&[0x80], 1).is_err());
    assert!(decode_throws(&[2], 1).is_err());
    assert!(decode_throws(&[0xff; 11], 1).is_err());
    assert!(decode_throws(&[1, 2, 3], 0).is_err());
    assert!(decode_throws(&[], 7).is_err());
    // The old format still reads.
    assert_eq!(
        decode_throws(&[1, 0, 0, 0, 0, 0x30, 0, 0], 0).unwrap(),
        vec![[1, 12288]]
    );
}

/// The quick reader of format 1 reads every blob as the first one did
/// (number by number): the same throws, or an error where it gave one.
#[test]
fn the_quick_throws_reader_reads_as_the_first_one() {
    fn number_by_number(bytes: &[u8]) -> Option<Vec<[i64; 2]>> {
        let (mut out, mut prev, mut pair, mut i, mut n) = (Vec::new(), [0i64; 2], [0i64; 2], 0, 0);
        while i < bytes.len() {
            let (mut z, mut shift) = (0u64, 0u32);
            loop {
                let b = *bytes.get(i)?;
                i += 1;
                if shift >= 64 {
                    return None;
                }
                z |= u64::from(b & 0x7f) << shift;
                shift += 7;
                if b & 0x80 == 0 {
                    break;
                }
            }
            let p = n % 2;
            prev[p] = prev[p].wrapping_add(((z >> 1) as i64) ^ -((z & 1) as i64));
            pair[p] = prev[p];
            n += 1;
            if p == 1 {
                out.push(pair);
            }
        }
        n.is_multiple_of(2).then_some(out)
    }
    let mut blobs: Vec<Vec<u8>> = (0..=0xffffu32)
        .map(|x| x.to_le_bytes()[..2].to_vec())
        .collect();
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for len in 0..4000usize {
        let blob = (0..len % 40)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                // Mostly short numbers, as throws are; some long ones.
                if x.is_multiple_of(5) {
                    (x >> 8) as u8 | 0x80
                } else {
                    (x >> 8) as u8 & 0x7f
                }
            })
            .collect();
        blobs.push(blob);
    }
    blobs.push(vec![0xff; 10]);
    blobs.push([vec![0xff; 9], vec![1, 0]].concat());
    // Runs of the same throw (zero bytes in pairs, read in one step),
    // between other throws, at the ends, of odd length.
    for len in 0..200usize {
        let zeros = vec![0u8; len % 23];
        blobs.push(zeros.clone());
        blobs.push([&[4u8, 0x81, 0x01][..], &zeros, &[6]].concat());
        blobs.push([&[0u8, 2][..], &zeros, &[0, 0x83, 0x02], &zeros].concat());
        blobs.push([&zeros[..], &[0x80]].concat());
    }
    for b in &blobs {
        assert_eq!(
            decode_throws(b, THROWS_FORMAT).ok(),
            number_by_number(b),
            "{b:?}"
        );
    }
}

#[test]
fn a_game_of_climbing_series_takes_under_three_bytes_a_throw() {
    let mut t = Vec::new();
    let (mut p, mut q) = (1000i64, 3000i64);
    for i in 0..1000 {
        if i % 12 == 0 {
            p = 1 + (i * 7919) % 12288;
            q = 1 + (i * 104_729) % 12288;
        }
        p = (p + 37).min(12288);
        q = (q + 411).min(12288);
        t.push([p, q]);
    }
    let bytes = encode_throws(&t);
    assert!(bytes.len() < 3000, "{} bytes", bytes.len());
    assert_eq!(decode_throws(&bytes, THROWS_FORMAT).unwrap(), t);
}

/// Format 1's bytes, number by number, as the stored games and their
/// digests were written: a faster encoder must give exactly these.
#[test]
fn the_throws_encoding_is_format_1_byte_for_byte() {
    fn one_number_at_a_time(throws: &[[i64; 2]]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut prev = [0i64; 2];
        for pair in throws {
            for (i, &t) in pair.iter().enumerate() {
                let d = t.wrapping_sub(prev[i]);
                prev[i] = t;
                let mut z = ((d << 1) ^ (d >> 63)) as u64;
                loop {
                    let byte = (z & 0x7f) as u8;
                    z >>= 7;
                    if z == 0 {
                        out.push(byte);
                        break;
                    }
                    out.push(byte | 0x80);
                }
            }
        }
        out
    }
    let mut t = vec![
        [i64::MIN, i64::MAX],
        [i64::MAX, i64::MIN],
        [0, 0],
        [63, -64],
        [64, -65],
        [12288, 1],
    ];
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..1000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        t.push([(x % 12289) as i64, (x >> 20) as i64 % 5000 - 2500]);
    }
    for n in [0, 1, 6, t.len()] {
        assert_eq!(
            encode_throws(&t[..n]),
            one_number_at_a_time(&t[..n]),
            "{n} throws"
        );
    }
}

#[test]
fn seeds_keep_all_64_bits() {
    for s in [0u64, 1, u64::MAX, 1 << 63] {
        assert_eq!(seed_from_sql(seed_to_sql(s)), s);
    }
}

/// Issue 38: while a tournament plays, the log is checkpointed off the
/// writing thread; the writer's own automatic checkpoint stays as a
/// backstop (the log bounded), and is given back when play ends. A
/// database in memory has no log to checkpoint. What is committed
/// meanwhile is all there.
#[test]
fn checkpoints_in_the_background_keep_a_backstop_and_give_the_writer_its_own_back() {
    let autocheckpoint = |s: &Store| -> i64 {
        s.conn()
            .pragma_query_value(None, "wal_autocheckpoint", |r| r.get(0))
            .unwrap()
    };
    assert!(Store::open_in_memory()
        .unwrap()
        .checkpoint_in_background()
        .unwrap()
        .is_none());
    let dir = tempfile::tempdir().unwrap();
    let s = Store::open(&dir.path().join("k.db")).unwrap();
    assert_eq!(autocheckpoint(&s), 1000);
    let c = s.checkpoint_in_background().unwrap().expect("a file");
    assert_eq!(autocheckpoint(&s), checkpoints::BACKSTOP_PAGES);
    s.conn().execute_batch("CREATE TABLE t (x BLOB)").unwrap();
    for _ in 0..200 {
        s.conn()
            .execute("INSERT INTO t VALUES (zeroblob(8000))", [])
            .unwrap();
    }
    c.stop(&s).unwrap();
    assert_eq!(autocheckpoint(&s), 1000);
    let n: i64 = s
        .conn()
        .query_row("SELECT COUNT(*) FROM t", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 200);
    // Dropped without being stopped: the thread ends, the backstop stays.
    let c = s.checkpoint_in_background().unwrap().expect("a file");
    drop(c);
    assert_eq!(autocheckpoint(&s), checkpoints::BACKSTOP_PAGES);
}

/// Games stored before schema 0025 (a rowid table, the time as text, no
/// failures as '[]') read back exactly after the migration copied them
/// into the WITHOUT ROWID table: each throws format, failures, seeds of
/// all 64 bits, attempts, players, and the games' times.
#[test]
fn games_from_before_compact_rows_read_back_exactly() {
    use crate::referee::{Failure, FailureKind};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("k.db");
    let before = migrations_before("0025_compact_games.sql");
    let v0_throws = vec![[1, 2], [3, -4], [i32::MAX as i64, i32::MIN as i64]];
    let v1_throws = vec![[100, 100], [101, 99], [-7, 1 << 40]];
    let replayed = vec![[5, 6], [7, 8]];
    let v0: Vec<u8> = v0_throws
        .iter()
        .flat_map(|[p, q]| {
            let mut b = (*p as i32).to_le_bytes().to_vec();
            b.extend((*q as i32).to_le_bytes());
            b
        })
        .collect();
    let failures = vec![Failure {
        player: 1,
        throw: 3,
        kind: FailureKind::WallClock { limit_ms: 10_000 },
        reason: "throw 3: …".into(),
    }];
    {
        let c = database_of_migrations(&path, before);
        c.execute_batch(
            "INSERT INTO teams (id, name, created_at) VALUES (1, 'a', 'x'), (2, 'b', 'x');
             INSERT INTO tournaments (id, seed, config, entries_key, state, started_at)
             VALUES (1, 7, '{}', 'k', 'running', '2026-01-01T00:00:00.000Z');
             INSERT INTO rounds (tournament_id, number, field, is_final) VALUES (1, 1, '[1,2]', 1);
             INSERT INTO groups (tournament_id, round, number, members) VALUES (1, 1, 1, '[1,2]');",
        )
        .unwrap();
        let mut st = c
            .prepare(
                "INSERT INTO games (tournament_id, round, grp, slot, attempt, player_p, player_q,
                     seed, points_p, points_q, throws, failures, finished_at, throws_format)
                 VALUES (1, 1, 1, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            )
            .unwrap();
        // slot, attempt, players, seed, points, throws, failures, time, format
        let none = "[]".to_string();
        st.execute(params![
            0,
            1,
            1,
            1,
            11,
            3,
            0,
            v0,
            none,
            "2026-01-01T00:00:02.345Z",
            0
        ])
        .unwrap();
        st.execute(params![
            1,
            1,
            1,
            2,
            -5,
            0,
            9,
            encode_throws(&v1_throws),
            none,
            "2026-01-01T00:00:01.999Z",
            1
        ])
        .unwrap();
        st.execute(params![
            2,
            2,
            2,
            1,
            i64::MIN,
            4,
            4,
            throws_digest(&replayed).to_vec(),
            none,
            "2026-01-01T00:01:00.000Z",
            2
        ])
        .unwrap();
        st.execute(params![
            3,
            1,
            2,
            2,
            3,
            0,
            0,
            encode_throws(&v1_throws),
            json(&failures),
            "2026-01-01T00:01:00Z",
            1
        ])
        .unwrap();
    }
    let s = Store::open(&path).unwrap();
    assert_eq!(s.schema_version().unwrap(), MIGRATIONS.len() as i64);
    let games = s.games(1, 1, 1).unwrap();
    assert_eq!(games.len(), 4);
    let g = &games[0];
    assert_eq!(
        (g.key.slot, g.attempt, g.players),
        (0, 1, [TeamId(1), TeamId(1)])
    );
    assert_eq!((g.record.seed, g.record.points), (11, [3, 0]));
    assert_eq!(g.record.throws, v0_throws);
    assert!(g.record.failures.is_empty() && g.throws_digest.is_none());
    let g = &games[1];
    assert_eq!(
        (g.players, g.record.seed, g.record.points),
        ([TeamId(1), TeamId(2)], -5i64 as u64, [0, 9])
    );
    assert_eq!(g.record.throws, v1_throws);
    let g = &games[2];
    assert_eq!((g.attempt, g.record.seed), (2, 1u64 << 63));
    assert_eq!(g.throws_digest, Some(throws_digest(&replayed)));
    assert!(g.record.throws.is_empty());
    let g = &games[3];
    assert_eq!(g.record.failures, failures);
    assert_eq!(g.record.throws, v1_throws);
    // The times: the earliest to the millisecond, and counted since.
    let first = admin::first_game_at(s.conn(), 1).unwrap().unwrap();
    assert_eq!(timestamp(first), "2026-01-01T00:00:01.999Z");
    let at = |t: &str| admin::parse_timestamp(t).unwrap();
    assert_eq!(
        admin::games_since(s.conn(), 1, at("2026-01-01T00:00:02.345Z")).unwrap(),
        3
    );
    assert_eq!(
        admin::games_since(s.conn(), 1, at("2026-01-01T00:00:02.346Z")).unwrap(),
        2
    );
    assert_eq!(
        admin::games_since(s.conn(), 1, at("2026-01-01T00:01:00.000Z")).unwrap(),
        2
    );
    // No failures: NULL, no longer '[]'; the table has no rowid, so its
    // key is stored once (no index beside it).
    let nulls: i64 = s
        .conn()
        .query_row(
            "SELECT COUNT(*) FROM games WHERE failures IS NULL",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(nulls, 3);
    let indexes: i64 = s
        .conn()
        .query_row(
            "SELECT COUNT(*) FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'games'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(indexes, 0);
    assert!(s.conn().prepare("SELECT rowid FROM games").is_err());
}

/// A game stored now reads back with its time to the millisecond and
/// without failures as NULL.
#[test]
fn a_game_stored_now_keeps_its_time_to_the_millisecond() {
    let t = "2026-03-04T05:06:07.089Z";
    let now = admin::parse_timestamp(t).unwrap();
    assert_eq!(game_time_from_sql(game_time(now)), Some(now));
    assert_eq!(timestamp(game_time_from_sql(game_time(now)).unwrap()), t);
}

/// The encoding's one-step path for small differences writes exactly the
/// bytes of a varint per number, whatever the mix of small and large.
#[test]
fn encoding_throws_in_one_step_writes_the_same_bytes() {
    let reference = |throws: &[[i64; 2]]| {
        let mut out = Vec::new();
        let mut prev = [0i64; 2];
        for pair in throws {
            for i in 0..2 {
                put_varint(&mut out, zigzag(pair[i].wrapping_sub(prev[i])));
                prev[i] = pair[i];
            }
        }
        out
    };
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut throws = Vec::new();
    for i in 0..5000i64 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let big = (x as i64) >> (x % 64);
        throws.push(match i % 5 {
            0 => [i, i + 1],
            1 => [i - 63, i + 64],
            2 => [big, i],
            3 => [i, big],
            _ => [i64::MIN, i64::MAX],
        });
        if i % 250 == 0 {
            assert_eq!(encode_throws(&throws), reference(&throws));
        }
    }
    assert_eq!(encode_throws(&throws), reference(&throws));
    assert_eq!(decode_throws(&encode_throws(&throws), 1).unwrap(), throws);
    // A game's usual throws (small steps, written in blocks) with a large
    // difference now and then, at every place in a block and across two;
    // every length, so the last block is cut anywhere.
    let mut game = Vec::new();
    let mut at = [1i64, 1];
    for i in 0..1000i64 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let step = [(x % 128) as i64 - 64, ((x >> 8) % 127) as i64 - 63];
        at = if i % 37 == 36 || i % 53 == 0 {
            [at[0] + 5000, at[1] - 64]
        } else {
            [at[0] + step[0], at[1] + step[1]]
        };
        game.push(at);
    }
    for n in (0..game.len()).step_by(7).chain([game.len()]) {
        assert_eq!(
            encode_throws(&game[..n]),
            reference(&game[..n]),
            "{n} throws"
        );
    }
    assert_eq!(decode_throws(&encode_throws(&game), 1).unwrap(), game);
    let small: Vec<[i64; 2]> = (0..1000).map(|i| [i % 64 - 32, 63 - i % 64]).collect();
    assert_eq!(encode_throws(&small), reference(&small));
    // Red team (F10): throws chosen to sit on the block's edges. One
    // difference of each size around a byte's end (zigzag 126 to 129) at
    // every place of a block of steps of one, on either number, and steps
    // that wrap from the largest number to the smallest (a difference of
    // one when wrapped, written in the block): the same bytes as throw by
    // throw, read back to the same throws.
    for edge in [63i64, -64, 64, -65] {
        for at in 0..BLOCK_EDGE {
            for side in 0..2 {
                let mut game: Vec<[i64; 2]> = Vec::new();
                let mut t = [i64::MAX - 20, i64::MIN + 20];
                for i in 0..3 * BLOCK_EDGE {
                    let mut step = [1i64, -1];
                    if i == BLOCK_EDGE + at {
                        step[side] = edge;
                    }
                    t = [t[0].wrapping_add(step[0]), t[1].wrapping_add(step[1])];
                    game.push(t);
                }
                let bytes = encode_throws(&game);
                assert_eq!(bytes, reference(&game), "{edge} at {at}, number {side}");
                assert_eq!(decode_throws(&bytes, 1).unwrap(), game);
            }
        }
    }
}

/// The throws `encode_throws` takes together (its `BLOCK`).
const BLOCK_EDGE: usize = 16;

thread_local! {
    /// Run once by the next [`Store::open`] on this thread right after it
    /// read the schema's version (a test's stand-in for another process
    /// that opens the same database at that moment).
    static AFTER_VERSION_READ: std::cell::RefCell<Option<Box<dyn FnOnce()>>> =
        const { std::cell::RefCell::new(None) };
}

/// See [`AFTER_VERSION_READ`].
pub(super) fn after_version_read() {
    if let Some(f) = AFTER_VERSION_READ.with_borrow_mut(Option::take) {
        f();
    }
}

/// A database of the schema before 0025 holding `times` as its games'
/// finished_at texts (one game each), and the path of its file.
fn games_of_schema_24(dir: &std::path::Path, times: &[&str]) -> std::path::PathBuf {
    let path = dir.join("k.db");
    let before = migrations_before("0025_compact_games.sql");
    let c = database_of_migrations(&path, before);
    c.execute_batch(
        "INSERT INTO teams (id, name, created_at) VALUES (1, 'a', 'x');
         INSERT INTO tournaments (id, seed, config, entries_key, state, started_at)
         VALUES (1, 7, '{}', 'k', 'running', '2026-01-01T00:00:00.000Z');
         INSERT INTO rounds (tournament_id, number, field, is_final) VALUES (1, 1, '[1]', 1);
         INSERT INTO groups (tournament_id, round, number, members) VALUES (1, 1, 1, '[1]');",
    )
    .unwrap();
    for (slot, t) in times.iter().enumerate() {
        c.execute(
            "INSERT INTO games (tournament_id, round, grp, slot, attempt, player_p, player_q,
                 seed, points_p, points_q, throws, failures, finished_at, throws_format)
             VALUES (1, 1, 1, ?1, 1, 1, 1, 5, 3, 0, x'', '[]', ?2, 1)",
            params![slot as i64, t],
        )
        .unwrap();
    }
    path
}

/// Hostile review (issue 38's leftovers): migration 0025 read exactly
/// three digits after the decimal point ('.5Z' became 5 ms) and a time
/// it could not read became 1970. Any fraction of 0 to 9 digits and any
/// offset read as the time they say, cut to the millisecond.
#[test]
fn the_compact_games_migration_reads_any_fraction_and_offset() {
    let dir = tempfile::tempdir().unwrap();
    let times = [
        ("2026-01-01T10:00:00.5Z", "2026-01-01T10:00:00.500Z"),
        ("2026-01-01T10:00:01Z", "2026-01-01T10:00:01.000Z"),
        ("2026-01-01T10:00:02.07Z", "2026-01-01T10:00:02.070Z"),
        ("2026-01-01T10:00:03.123Z", "2026-01-01T10:00:03.123Z"),
        ("2026-01-01T10:00:04.123456789Z", "2026-01-01T10:00:04.123Z"),
        ("2026-01-01T12:00:05.25+02:00", "2026-01-01T10:00:05.250Z"),
        ("2026-01-01T10:00:06.000001Z", "2026-01-01T10:00:06.000Z"),
        // Hostile review (F5): more than three digits are cut, never
        // rounded (as `store::timestamp` cuts), so no time crosses into
        // the next second, minute or day, nor half of it ('%s' and '%f'
        // of one reading).
        ("2026-01-01T10:00:59.9996Z", "2026-01-01T10:00:59.999Z"),
        ("2026-01-01T10:00:07.9999Z", "2026-01-01T10:00:07.999Z"),
        ("2026-01-01T23:59:59.99951Z", "2026-01-01T23:59:59.999Z"),
        ("2026-01-01T10:00:08.0004Z", "2026-01-01T10:00:08.000Z"),
    ];
    let stored: Vec<&str> = times.iter().map(|(t, _)| *t).collect();
    let path = games_of_schema_24(dir.path(), &stored);
    let s = Store::open(&path).unwrap();
    let ms: Vec<i64> = column(s.conn(), "SELECT finished_at FROM games ORDER BY slot");
    let read: Vec<String> = ms
        .iter()
        .map(|&m| timestamp(game_time_from_sql(m).unwrap()))
        .collect();
    let want: Vec<String> = times.iter().map(|(_, w)| w.to_string()).collect();
    assert_eq!(read, want);
}

/// A time the migration cannot read refuses it: the database stays at the
/// schema before, its row as it was (never a game of 1970), and the error
/// says which column to correct.
#[test]
fn the_compact_games_migration_refuses_a_time_it_cannot_read() {
    for bad in [
        "yesterday",
        "",
        "2026-01-01",
        "2026-01-01T10:00:00.Zulu",
        "12345",
    ] {
        let dir = tempfile::tempdir().unwrap();
        let path = games_of_schema_24(dir.path(), &["2026-01-01T10:00:00.5Z", bad]);
        let err = Store::open(&path).err().expect("refused");
        assert!(err.to_string().contains("finished_at"), "{bad:?}: {err}");
        let c = Connection::open(&path).unwrap();
        let version: i64 = c
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .unwrap();
        let compact = migrations_before("0025_compact_games.sql");
        assert_eq!(version as usize, compact, "{bad:?}");
        let kept: String = c
            .query_row("SELECT finished_at FROM games WHERE slot = 1", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(kept, bad);
    }
}

/// Two processes upgraded together (the mail front end and the engine,
/// started at once) open a database of the previous schema: the other
/// one migrates it between this one's reading the version and its
/// migrating. Each migration is applied once: the games' times (which
/// 0025 applied a second time would read as 1970) and the schema's
/// version are as one process's upgrade leaves them.
#[test]
fn two_processes_opening_an_old_database_at_once_migrate_it_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("k.db");
    // Before 0025, the migration that reads the games' times.
    let before = migrations_before("0025_compact_games.sql");
    {
        let c = database_of_migrations(&path, before);
        c.execute_batch(
            "INSERT INTO teams (id, name, created_at) VALUES (1, 'a', 'x');
             INSERT INTO tournaments (id, seed, config, entries_key, state, started_at)
             VALUES (1, 7, '{}', 'k', 'running', '2026-01-01T00:00:00.000Z');
             INSERT INTO rounds (tournament_id, number, field, is_final) VALUES (1, 1, '[1]', 1);
             INSERT INTO groups (tournament_id, round, number, members) VALUES (1, 1, 1, '[1]');
             INSERT INTO games (tournament_id, round, grp, slot, attempt, player_p, player_q,
                 seed, points_p, points_q, throws, failures, finished_at, throws_format)
             VALUES (1, 1, 1, 0, 1, 1, 1, 5, 3, 0, x'', '[]', '2026-01-01T00:00:02.345Z', 1);",
        )
        .unwrap();
    }
    let other = path.clone();
    AFTER_VERSION_READ.with_borrow_mut(|f| {
        *f = Some(Box::new(move || {
            let s = Store::open(&other).unwrap();
            assert_eq!(s.schema_version().unwrap(), MIGRATIONS.len() as i64);
        }))
    });
    let s = Store::open(&path).unwrap();
    assert!(
        AFTER_VERSION_READ.with_borrow(Option::is_none),
        "the other process ran"
    );
    assert_eq!(s.schema_version().unwrap(), MIGRATIONS.len() as i64);
    let first = admin::first_game_at(s.conn(), 1).unwrap().unwrap();
    assert_eq!(timestamp(first), "2026-01-01T00:00:02.345Z");
    assert_eq!(s.games(1, 1, 1).unwrap().len(), 1);
}

/// Mails queued at schema 0025 (a contest mail with its event key and a
/// shared body, a stranger's reply, a digest) read back byte for byte after
/// migration 0026 made the index by kind hold only mails without an event
/// key; the reply caps and the digest's last time count what they counted
/// before, and an event's mail is still queued once.
#[test]
fn mails_from_before_the_partial_kind_index_read_back_and_count() {
    use crate::store::mail::{
        due_outgoing, event_queued, last_queued_at, queue_outgoing, replies, Budget, NewOutgoing,
        ReplyTarget, SharedPart,
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("k.db");
    let before = migrations_before("0026_outbox_kind_without_events.sql");
    let now = chrono::Utc::now();
    let body = vec![b'g'; 3000];
    let sha = [7u8; 32];
    let mut grg = b"Subject: KNOBELN GRG\r\n\r\n".to_vec();
    grg.extend_from_slice(&body);
    grg.extend_from_slice(b"\r\n");
    let reply = b"Subject: software\r\n\r\nthe kit\r\n".to_vec();
    let digest = b"Subject: digest\r\n\r\nall quiet\r\n".to_vec();
    let to = vec!["a@example.org".to_string()];
    let mail = |kind, raw, budget, sender_key, message_id, shared, event_key| NewOutgoing {
        inbox_id: None,
        kind,
        recipients: &to,
        budget,
        sender_key,
        subject: "s",
        message_id,
        raw,
        text_at: None,
        shared,
        event_key,
    };
    let shared = [SharedPart {
        bytes: &body,
        sha256: &sha,
    }];
    {
        let c = database_of_migrations(&path, before);
        for m in [
            mail(
                "grg",
                &grg[..],
                Budget::Contest,
                None,
                "<1@k>",
                &shared[..],
                Some("GRG:r1:g1:a"),
            ),
            mail(
                "software",
                &reply[..],
                Budget::Strangers,
                Some("x@y.org"),
                "<2@k>",
                &[],
                None,
            ),
            mail(
                "digest",
                &digest[..],
                Budget::Contest,
                None,
                "<3@k>",
                &[],
                None,
            ),
        ] {
            assert!(queue_outgoing(&c, &m, now).unwrap());
        }
    }
    let s = Store::open(&path).unwrap();
    assert_eq!(s.schema_version().unwrap(), MIGRATIONS.len() as i64);
    let c = s.conn();
    let index: String = c
        .query_row(
            "SELECT sql FROM sqlite_master WHERE name = 'outbox_kind'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(index.ends_with("WHERE event_key IS NULL"), "{index}");
    let rows = due_outgoing(c, now, 10).unwrap();
    let raws: Vec<(&str, &[u8])> = rows.iter().map(|r| (r.kind.as_str(), &r.raw[..])).collect();
    assert_eq!(
        raws,
        vec![
            ("grg", &grg[..]),
            ("software", &reply[..]),
            ("digest", &digest[..])
        ]
    );
    let day_ago = now - chrono::Duration::days(1);
    let everyone = ReplyTarget::Everyone;
    let kits = |to| replies(to).of_kind("software").since(c, day_ago).unwrap();
    assert_eq!(kits(everyone), 1);
    assert_eq!(kits(ReplyTarget::Sender("x@y.org")), 1);
    let strangers = replies(everyone)
        .on(&[Budget::Strangers])
        .of_kind("software")
        .since(c, day_ago);
    assert_eq!(strangers.unwrap(), 1);
    assert!(last_queued_at(c, "digest").unwrap().is_some());
    // The contest's mail is not counted as a reply of its kind, and its
    // event is queued once.
    assert_eq!(
        replies(everyone).of_kind("grg").since(c, day_ago).unwrap(),
        0
    );
    assert!(event_queued(c, "GRG:r1:g1:a").unwrap());
    let again = mail(
        "grg",
        &grg[..],
        Budget::Contest,
        None,
        "<4@k>",
        &shared[..],
        Some("GRG:r1:g1:a"),
    );
    assert!(!queue_outgoing(c, &again, now).unwrap());
}

/// Stores version `i` of `team`: 1000 bytes of source and, accepted, a
/// 2000-byte program.
fn version_number(store: &Store, team: TeamId, i: usize, accepted: bool) -> VersionId {
    let source = format!("{i:>1000}");
    let sha = crate::hash::sha256_hex(source.as_bytes());
    let binary = vec![i as u8; 2000];
    store
        .insert_version(
            &NewVersion {
                team,
                source: source.as_bytes(),
                source_sha256: &sha,
                binary: accepted.then_some(binary.as_slice()),
                lexical_elements: Some(i as u64),
                description: Some("kept"),
                report_json: &format!("{{\"version\":{i}}}"),
            },
            Utc::now(),
        )
        .unwrap()
}

/// The team's versions whose source or program is still kept, and the
/// bytes of sources and programs the team holds in all.
fn kept_whole(store: &Store, team: TeamId) -> (Vec<i64>, i64) {
    let mut st = store
        .conn()
        .prepare(
            "SELECT id FROM strategy_versions WHERE team_id = ?1
               AND (length(source) > 0 OR length(binary) > 0) ORDER BY id",
        )
        .unwrap();
    let ids = st
        .query_map([team.0], |r| r.get(0))
        .unwrap()
        .collect::<std::result::Result<Vec<i64>, _>>()
        .unwrap();
    let bytes = store
        .conn()
        .query_row(
            "SELECT sum(length(source) + coalesce(length(binary), 0))
               FROM strategy_versions WHERE team_id = ?1",
            [team.0],
            |r| r.get(0),
        )
        .unwrap();
    (ids, bytes)
}

#[test]
fn a_teams_old_versions_keep_their_hash_and_report_only() {
    let mut store = Store::open_in_memory().unwrap();
    let now = Utc::now();
    let team = store.ensure_team("a", now).unwrap();
    let other = store.ensure_team("b", now).unwrap();
    // Version 1 accepted and entered in a tournament; 2 to 4 accepted;
    // 5 to 25 rejected: 4 is what plays next, older than the newest 20.
    let entered = version_number(&store, team, 1, true);
    store
        .create_tournament(
            1,
            &SeedKey::public_from_seed(1),
            "{}",
            "k",
            &[(team, entered)],
            now,
        )
        .unwrap();
    let v: Vec<VersionId> = (2..=25)
        .map(|i| version_number(&store, team, i, i <= 4))
        .collect();
    let others = version_number(&store, other, 1, true);
    let id = |i: usize| if i == 1 { entered.0 } else { v[i - 2].0 };
    let mut expected: Vec<i64> = vec![id(1), id(4)];
    expected.extend((6..=25).map(id));
    let (ids, bytes) = kept_whole(&store, team);
    assert_eq!(
        ids, expected,
        "the newest 20, the entered one, the one that plays"
    );
    assert_eq!(bytes, 22 * 1000 + 2 * 2000);
    // A trimmed version keeps its row: hash, verdict, report, description.
    let (accepted, report, description, lexical, sha): (bool, String, String, i64, String) = store
        .conn()
        .query_row(
            "SELECT accepted, report, description, lexical_elements, source_sha256
               FROM strategy_versions WHERE id = ?1",
            [id(2)],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
        )
        .unwrap();
    assert_eq!(
        (accepted, report.as_str(), description.as_str(), lexical),
        (true, "{\"version\":2}", "kept", 2)
    );
    // Its source is no compile cache and no version of the team any more
    // (it would play with an empty program); a trimmed rejected one still
    // says its verdict.
    assert!(store.compiled_by_source(&sha).unwrap().is_none());
    assert!(store.version_by_source(team, &sha).unwrap().is_none());
    let rejected_sha = crate::hash::sha256_hex(format!("{:>1000}", 5).as_bytes());
    let r = store
        .version_by_source(team, &rejected_sha)
        .unwrap()
        .unwrap();
    assert_eq!((r.id.0, r.accepted), (id(5), false));
    // The entered version still plays whole, whatever its age.
    assert_eq!(store.version_binary(entered).unwrap(), vec![1u8; 2000]);
    // A hundred compiles more: the team's bytes stay bounded.
    for i in 26..126 {
        version_number(&store, team, i, false);
    }
    let (ids, bytes) = kept_whole(&store, team);
    assert_eq!(ids.len(), 22);
    assert_eq!(&ids[..2], &[id(1), id(4)]);
    assert_eq!(bytes, 22 * 1000 + 2 * 2000);
    // Another team's versions are its own business.
    assert_eq!(kept_whole(&store, other).0, vec![others.0]);
}

#[test]
fn strangers_mails_processed_before_0028_lose_their_heads_7_days_after_processing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("k.db");
    {
        let before = migrations_before("0028_strangers_mail_heads.sql");
        let c = database_of_migrations(&path, before);
        // Five processed mails as the version before left them: a
        // stranger's (a reply on the strangers' budget), a registered
        // mailbox's claim, a proven team's, one passed on to the organizer,
        // an ignored one without a reply; and a set-aside one.
        let rows = [
            (1, "done", Some("strangers"), "reply"),
            (2, "done", Some("confirmed"), "reply"),
            (3, "done", Some("team"), "reply"),
            (4, "done", Some("strangers"), "forward"),
            (5, "ignored", None, ""),
            (6, "failed", None, ""),
        ];
        for (id, state, budget, kind) in rows {
            c.execute(
                "INSERT INTO inbox (id, origin, dedupe_key, raw, received_at, state, processed_at)
                 VALUES (?1, 'old', ?2, x'4142', 'x', ?3, '2026-11-01T10:00:00.000Z')",
                params![id, format!("sha256:{id}"), state],
            )
            .unwrap();
            if let Some(budget) = budget {
                c.execute(
                    "INSERT INTO outbox (inbox_id, kind, recipients, subject, message_id, raw, state,
                                         next_attempt_at, created_at, budget)
                     VALUES (?1, ?2, '[]', 's', ?3, x'00', 'sent', 'x', 'x', ?4)",
                    params![id, kind, format!("<{id}@x>"), budget],
                )
                .unwrap();
            }
        }
    }
    let s = Store::open(&path).unwrap();
    let due: Vec<(i64, Option<String>)> = {
        let mut st = s
            .conn()
            .prepare("SELECT id, forget_head_at FROM inbox ORDER BY id")
            .unwrap();
        st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<std::result::Result<_, _>>()
            .unwrap()
    };
    let week_later = Some("2026-11-08T10:00:00.000Z".to_string());
    assert_eq!(
        due,
        vec![
            (1, week_later.clone()),
            (2, week_later.clone()),
            (3, None),
            (4, None),
            (5, week_later),
            (6, None)
        ]
    );
}

/// Mails of both kinds the outbox holds, for the migrations that rebuild
/// it: a contest's GRG (its body shared, an event key) and a reply to a
/// mail (its own body, a sender key).
struct OutboxSample {
    body: Vec<u8>,
    sha: [u8; 32],
    grg: Vec<u8>,
    reply: Vec<u8>,
    to: Vec<String>,
}

impl OutboxSample {
    fn new() -> OutboxSample {
        let body = vec![b'g'; 3000];
        OutboxSample {
            grg: [&b"Subject: KNOBELN GRG\r\n\r\n"[..], &body, b"\r\n"].concat(),
            body,
            sha: [7u8; 32],
            reply: b"Subject: software\r\n\r\nthe kit\r\n".to_vec(),
            to: vec!["a@example.org".to_string()],
        }
    }

    /// Queues a GRG under `event`, else a reply (to `inbox_id` if any):
    /// whether a row was added.
    fn queue(
        &self,
        c: &Connection,
        message_id: &str,
        event: Option<&str>,
        inbox_id: Option<i64>,
        now: chrono::DateTime<chrono::Utc>,
    ) -> bool {
        use crate::store::mail::{queue_outgoing, Budget, NewOutgoing, SharedPart};
        let shared = [SharedPart {
            bytes: &self.body,
            sha256: &self.sha,
        }];
        let m = NewOutgoing {
            inbox_id,
            kind: if event.is_some() { "grg" } else { "software" },
            recipients: &self.to,
            budget: if event.is_some() {
                Budget::Contest
            } else {
                Budget::Strangers
            },
            sender_key: event.is_none().then_some("x@y.org"),
            subject: "s",
            message_id,
            raw: if event.is_some() {
                &self.grg
            } else {
                &self.reply
            },
            text_at: None,
            shared: if event.is_some() {
                &shared[..]
            } else {
                &[][..]
            },
            event_key: event,
        };
        queue_outgoing(c, &m, now).unwrap()
    }

    /// A mail taken in over IMAP, for a reply to refer to: its id.
    fn inbox(c: &Connection, now: chrono::DateTime<chrono::Utc>) -> i64 {
        let arrival = crate::store::mail::Arrival {
            origin: "imap",
            imap: Some((1, 1)),
            message_id: Some("<in@x>"),
            raw: b"Subject: x\r\n\r\nhi\r\n",
            content_sha256: "00",
            full_size: None,
        };
        crate::store::mail::insert_inbox(c, &arrival, now)
            .unwrap()
            .unwrap()
    }
}

/// Every row and index of the outbox from before migration 0027 (which
/// rebuilt the table without its `CHECK` on the state) is there after it:
/// mails in each of the three states, one with a shared body (its parts
/// refer to the row by id) and one answering an inbox mail. A state the
/// code does not know, which the table no longer refuses, is an error
/// when it is read back.
#[test]
fn the_outbox_rebuilt_without_its_check_keeps_every_row_and_index() {
    use crate::store::mail::{due_outgoing, mark_failed, mark_sent, outgoing_state, OutState};
    use rusqlite::types::Value;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("k.db");
    let before = migrations_before("0027_outbox_without_state_check.sql");
    let now = chrono::Utc::now();
    let sample = OutboxSample::new();
    // The indexes of 0027's time (0029 added `outbox_sent_bodies`, 0030
    // `outbox_inbox`; 0035 dropped the unique one on `message_id`).
    let schema = "SELECT type, name, tbl_name, sql FROM sqlite_master \
                  WHERE tbl_name IN ('outbox', 'outbox_parts', 'outbox_bodies') \
                  AND type = 'index' AND name NOT IN ('outbox_sent_bodies', 'outbox_inbox', \
                  'sqlite_autoindex_outbox_1') \
                  ORDER BY name";
    let (rows, parts, bodies, indexes) = {
        let c = database_of_migrations(&path, before);
        c.pragma_update(None, "foreign_keys", "ON").unwrap();
        let inbox = OutboxSample::inbox(&c, now);
        for (i, event, inbox_id) in [
            (1, Some("GRG:r1:g1:a"), None),
            (2, None, Some(inbox)),
            (3, Some("GRG:r1:g1:b"), None),
            (4, None, None),
        ] {
            assert!(sample.queue(&c, &format!("<{i}@k>"), event, inbox_id, now));
        }
        mark_sent(&c, 2, now).unwrap();
        mark_failed(&c, 3, "550 no such user").unwrap();
        let check: String = c
            .query_row(
                "SELECT sql FROM sqlite_master WHERE name = 'outbox'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert!(check.contains("CHECK (state IN"), "{check}");
        (
            rows_of(&c, "SELECT * FROM outbox ORDER BY id"),
            rows_of(&c, "SELECT * FROM outbox_parts ORDER BY outbox_id, seq"),
            rows_of(&c, "SELECT * FROM outbox_bodies ORDER BY id"),
            rows_of(&c, schema),
        )
    };
    assert_eq!(rows.len(), 4);
    assert_eq!(parts.len(), 2);
    let s = Store::open(&path).unwrap();
    assert_eq!(s.schema_version().unwrap(), MIGRATIONS.len() as i64);
    let c = s.conn();
    let table: String = c
        .query_row(
            "SELECT sql FROM sqlite_master WHERE name = 'outbox'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(!table.contains("CHECK"), "{table}");
    // Every column of 0027's time as it was (0029 added two at the end,
    // empty in these rows).
    let now_rows: Vec<Vec<Value>> = rows_of(c, "SELECT * FROM outbox ORDER BY id")
        .into_iter()
        .map(|mut r| {
            assert!(r[rows[0].len()..].iter().all(|v| *v == Value::Null));
            r.truncate(rows[0].len());
            r
        })
        .collect();
    assert_eq!(now_rows, rows);
    assert_eq!(
        rows_of(c, "SELECT * FROM outbox_parts ORDER BY outbox_id, seq"),
        parts
    );
    assert_eq!(
        rows_of(c, "SELECT * FROM outbox_bodies ORDER BY id"),
        bodies
    );
    assert_eq!(rows_of(c, schema), indexes);
    assert!(rows_of(c, "SELECT * FROM pragma_foreign_key_check").is_empty());
    let fk: i64 = c
        .pragma_query_value(None, "foreign_keys", |r| r.get(0))
        .unwrap();
    assert_eq!(fk, 1, "foreign keys are on again after migrating");
    // The queued mails read back whole (the shared body put back in).
    let due = due_outgoing(c, now, 10).unwrap();
    let raws: Vec<(i64, &[u8])> = due.iter().map(|r| (r.id, &r.raw[..])).collect();
    assert_eq!(raws, vec![(1, &sample.grg[..]), (4, &sample.reply[..])]);
    let states: Vec<_> = (1..=5).map(|id| outgoing_state(c, id).unwrap()).collect();
    assert_eq!(
        states,
        [
            Some(OutState::Queued),
            Some(OutState::Sent),
            Some(OutState::Failed),
            Some(OutState::Queued),
            None
        ]
    );
    // The table takes any state now; the code refuses one it does not know.
    c.execute("UPDATE outbox SET state = 'lost' WHERE id = 4", [])
        .unwrap();
    match outgoing_state(c, 4) {
        Err(StoreError::Corrupt(e)) => assert!(e.contains("\"lost\""), "{e}"),
        other => panic!("an unknown state read back: {other:?}"),
    }
}

/// Schema 0035 rebuilds the outbox without the unique index on
/// `message_id`: a database at 0034 with a queued, a sent (its bytes
/// removed), a failed and a reply's mail, a shared body and an inbox
/// reference keeps every row of the outbox, its parts and bodies, every
/// other index as it was, and its foreign keys; the event key still
/// queues a mail once; the same Message-ID twice is no longer refused.
#[test]
fn the_outbox_rebuilt_without_its_message_id_index_keeps_every_row_and_index() {
    use crate::store::mail::{due_outgoing, mark_failed, mark_sent};
    use rusqlite::types::Value;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("k.db");
    let before = migrations_before("0035_outbox_message_id_not_unique.sql");
    let now = chrono::Utc::now();
    let sample = OutboxSample::new();
    let indexes = "SELECT type, name, tbl_name, sql FROM sqlite_master \
                   WHERE tbl_name IN ('outbox', 'outbox_parts', 'outbox_bodies') \
                   AND type = 'index' AND name != 'sqlite_autoindex_outbox_1' ORDER BY name";
    let queue =
        |c: &Connection, id: &str, event, inbox_id| sample.queue(c, id, event, inbox_id, now);
    let (rows, parts, bodies, index_sql) = {
        let c = database_of_migrations(&path, before);
        c.pragma_update(None, "foreign_keys", "ON").unwrap();
        let inbox = OutboxSample::inbox(&c, now);
        assert!(queue(&c, "<1@k>", Some("GRG:r1:g1:a"), None));
        assert!(queue(&c, "<2@k>", None, Some(inbox)));
        assert!(queue(&c, "<3@k>", Some("GRG:r1:g1:b"), None));
        assert!(queue(&c, "<4@k>", None, None));
        // Before: the same Message-ID again is ignored by the unique index.
        assert!(!queue(&c, "<4@k>", None, None));
        mark_sent(&c, 2, now).unwrap();
        c.execute(
            "UPDATE outbox SET raw = x'', full_size = 31, body_removed_at = ?1 WHERE id = 2",
            [crate::store::timestamp(now)],
        )
        .unwrap();
        mark_failed(&c, 3, "550 no such user").unwrap();
        (
            rows_of(&c, "SELECT * FROM outbox ORDER BY id"),
            rows_of(&c, "SELECT * FROM outbox_parts ORDER BY outbox_id, seq"),
            rows_of(&c, "SELECT * FROM outbox_bodies ORDER BY id"),
            rows_of(&c, indexes),
        )
    };
    assert_eq!(rows.len(), 4);
    assert_eq!(parts.len(), 2);
    let names: Vec<&Value> = index_sql.iter().map(|r| &r[1]).collect();
    for name in [
        "outbox_queue",
        "outbox_event_key",
        "outbox_strangers",
        "outbox_team",
        "outbox_sender",
        "outbox_sender_domain",
        "outbox_kind",
        "outbox_sent_bodies",
        "outbox_inbox",
        "outbox_parts_body",
    ] {
        assert!(
            names.contains(&&Value::Text(name.into())),
            "{name}: {names:?}"
        );
    }
    let s = Store::open(&path).unwrap();
    assert_eq!(s.schema_version().unwrap(), MIGRATIONS.len() as i64);
    let c = s.conn();
    assert_eq!(rows_of(c, "SELECT * FROM outbox ORDER BY id"), rows);
    assert_eq!(
        rows_of(c, "SELECT * FROM outbox_parts ORDER BY outbox_id, seq"),
        parts
    );
    assert_eq!(
        rows_of(c, "SELECT * FROM outbox_bodies ORDER BY id"),
        bodies
    );
    assert_eq!(rows_of(c, indexes), index_sql);
    // No index of the outbox names `message_id` any more.
    let on_message_id: i64 = c
        .query_row(
            "SELECT count(*) FROM sqlite_master m, pragma_index_info(m.name) i
             WHERE m.type = 'index' AND m.tbl_name = 'outbox' AND i.name = 'message_id'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(on_message_id, 0);
    assert!(rows_of(c, "SELECT * FROM pragma_foreign_key_check").is_empty());
    let fk: i64 = c
        .pragma_query_value(None, "foreign_keys", |r| r.get(0))
        .unwrap();
    assert_eq!(fk, 1, "foreign keys are on again after migrating");
    // The queued mails read back whole (the shared body put back in).
    let due = due_outgoing(c, now, 10).unwrap();
    let raws: Vec<(i64, &[u8])> = due.iter().map(|r| (r.id, &r.raw[..])).collect();
    assert_eq!(raws, vec![(1, &sample.grg[..]), (4, &sample.reply[..])]);
    // An event's mail is still queued once; a Message-ID is not checked.
    assert!(!queue(c, "<5@k>", Some("GRG:r1:g1:a"), None));
    assert!(queue(c, "<4@k>", None, None));
}

/// The sent mails of a version before schema 0029 keep their bytes 30
/// days after they were sent, as those sent after it: the index of the
/// sent rows whose bytes are kept holds them from the migration on. A
/// pass empties the mail sent 40 days before (its row kept, with its
/// size) and leaves whole the one sent 10 days before, and a queued and
/// a failed mail of 40 days; the body they share stays for them.
#[test]
fn sent_mails_from_before_0029_keep_their_bytes_30_days_after_they_were_sent() {
    use crate::store::mail::{
        due_outgoing, forget_sent_bodies_due, mark_failed, mark_sent, queue_outgoing, NewOutgoing,
        SharedPart,
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("k.db");
    let before = migrations_before("0029_outbox_sent_bytes.sql");
    let now = chrono::Utc::now();
    let days = chrono::Duration::days;
    let body = vec![b'r'; 2000];
    let sha = [9u8; 32];
    let raw = [&b"Subject: results\r\n\r\n"[..], &body, b"\r\n"].concat();
    let own = (raw.len() - body.len()) as i64;
    {
        let c = database_of_migrations(&path, before);
        c.pragma_update(None, "foreign_keys", "ON").unwrap();
        let to = vec!["a@example.org".to_string()];
        let shared = [SharedPart {
            bytes: &body,
            sha256: &sha,
        }];
        for (n, sent) in [(1, Some(40)), (2, Some(10)), (3, None), (4, None)] {
            let id = format!("<{n}@k>");
            let m = NewOutgoing::help_for_tests(&to, &id, &raw, &shared);
            assert!(queue_outgoing(&c, &m, now - days(40)).unwrap());
            if let Some(d) = sent {
                mark_sent(&c, n, now - days(d)).unwrap();
            }
        }
        mark_failed(&c, 4, "550 no such user").unwrap();
    }
    let s = Store::open(&path).unwrap();
    assert_eq!(s.schema_version().unwrap(), MIGRATIONS.len() as i64);
    let c = s.conn();
    let ids = |sql: &str| -> Vec<i64> { column(c, sql) };
    assert_eq!(
        ids("SELECT id FROM outbox INDEXED BY outbox_sent_bodies
              WHERE state = 'sent' AND body_removed_at IS NULL ORDER BY sent_at"),
        [1, 2],
        "the sent rows of the version before are in the index"
    );
    assert_eq!(
        forget_sent_bodies_due(c, now - days(30), now, 500).unwrap(),
        1
    );
    let rows: Vec<(i64, i64, Option<i64>)> = c
        .prepare("SELECT id, length(raw), full_size FROM outbox ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<std::result::Result<_, _>>()
        .unwrap();
    assert_eq!(
        rows,
        [
            (1, 0, Some(raw.len() as i64)),
            (2, own, None),
            (3, own, None),
            (4, own, None)
        ]
    );
    assert_eq!(
        ids("SELECT outbox_id FROM outbox_parts ORDER BY outbox_id"),
        [2, 3, 4]
    );
    assert_eq!(ids("SELECT COUNT(*) FROM outbox_bodies"), [1]);
    let queued = due_outgoing(c, now, 10).unwrap();
    assert_eq!(queued.len(), 1);
    assert!(queued[0].id == 3 && queued[0].raw == raw);
}

/// The processed mails of a version before schema 0030 keep their rows
/// 90 days after their processing, as those processed after it: the
/// index of the processed rows holds them from the migration on. A pass
/// deletes the mail done 100 days before and the one ignored 95 days
/// before (their reply stays, naming none), and leaves the one done 10
/// days before, a waiting and a set-aside mail of 100 days.
#[test]
fn processed_mails_from_before_0030_keep_their_rows_90_days_after_processing() {
    use crate::store::mail::{
        finish_inbox, forget_processed_due, insert_inbox, queue_outgoing, Arrival, NewOutgoing,
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("k.db");
    let before = migrations_before("0030_inbox_retention.sql");
    let now = chrono::Utc::now();
    let days = chrono::Duration::days;
    {
        let c = database_of_migrations(&path, before);
        c.pragma_update(None, "foreign_keys", "ON").unwrap();
        for (n, state) in [
            (1, Some(("done", 100))),
            (2, Some(("ignored", 95))),
            (3, Some(("done", 10))),
            (4, None),
            (5, Some(("failed", 100))),
        ] {
            let mid = format!("<{n}@x>");
            let sha = format!("{n:064}");
            let a = Arrival {
                origin: "imap",
                imap: Some((1, n)),
                message_id: Some(&mid),
                raw: b"Subject: x\r\n\r\nhi\r\n",
                content_sha256: &sha,
                full_size: None,
            };
            let id = insert_inbox(&c, &a, now - days(100)).unwrap().unwrap();
            if let Some((state, d)) = state {
                finish_inbox(&c, id, state, "ok", now - days(d)).unwrap();
            }
        }
        let to = vec!["a@example.org".to_string()];
        let m = NewOutgoing {
            inbox_id: Some(1),
            ..NewOutgoing::help_for_tests(&to, "<r1@k>", b"Subject: s\r\n\r\nhi\r\n", &[])
        };
        assert!(queue_outgoing(&c, &m, now - days(100)).unwrap());
    }
    let s = Store::open(&path).unwrap();
    assert_eq!(s.schema_version().unwrap(), MIGRATIONS.len() as i64);
    let c = s.conn();
    let ids = |sql: &str| -> Vec<Option<i64>> { column(c, sql) };
    assert_eq!(
        ids("SELECT id FROM inbox INDEXED BY inbox_processed
              WHERE state IN ('done', 'ignored') ORDER BY processed_at"),
        [Some(1), Some(2), Some(3)],
        "the processed rows of the version before are in the index"
    );
    assert_eq!(forget_processed_due(c, now - days(90), 500).unwrap(), 2);
    assert_eq!(
        ids("SELECT id FROM inbox ORDER BY id"),
        [Some(3), Some(4), Some(5)]
    );
    assert_eq!(ids("SELECT inbox_id FROM outbox"), [None]);
}

/// A game's throws encoded where it was played ([`EncodedThrows::of`],
/// the pool's workers) are format 1's bytes and their digest, as the
/// server's thread made them before: throws with small and with large
/// differences, in and out of whole blocks of 16.
#[test]
fn encoded_throws_are_format_1_and_the_digest_of_their_bytes() {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for len in [0usize, 1, 15, 16, 17, 40, 1000] {
        for spread in [3i64, 200, 1 << 40] {
            let mut throws = Vec::with_capacity(len);
            let mut at = [100i64, 100];
            for _ in 0..len {
                for a in &mut at {
                    *a += (next() % (2 * spread as u64 + 1)) as i64 - spread;
                }
                throws.push(at);
            }
            let encoded = EncodedThrows::of(&throws);
            assert_eq!(
                encoded.bytes(),
                &encode_throws(&throws)[..],
                "{len} {spread}"
            );
            assert_eq!(encoded.digest(), throws_digest(&throws), "{len} {spread}");
            assert_eq!(
                decode_throws(encoded.bytes(), THROWS_FORMAT).unwrap(),
                throws,
                "{len} {spread}"
            );
        }
    }
}

/// A game stored with throws encoded elsewhere has the row it has when the
/// store encodes them itself ([`Store::insert_game`]): the same digest
/// (for replay), the same kept throws, the same bytes where the watchdog
/// ended it.
#[test]
fn a_game_stored_with_throws_encoded_elsewhere_has_the_same_row() {
    use crate::referee::{Failure, FailureKind};
    let rows = |encoded_elsewhere: bool| {
        let (store, team, t) = one_group_of_one_team();
        let now = Utc::now();
        let plain = GameRecord {
            seed: 7,
            points: [3, 4],
            throws: vec![[100, 101], [102, 99], [1 << 33, 5]],
            failures: vec![],
        };
        let mut watched = plain.clone();
        watched.failures = vec![Failure {
            player: 1,
            throw: 4,
            kind: FailureKind::WallClock { limit_ms: 10_000 },
            reason: "throw 4: …".into(),
        }];
        for (slot, record) in [(0, &plain), (1, &watched)] {
            if encoded_elsewhere {
                let encoded = EncodedThrows::of(&record.throws);
                let at = game_time(now);
                store
                    .insert_game_at(t, &game_of(team, slot), record, encoded, at)
                    .unwrap();
            } else {
                store
                    .insert_game(t, &game_of(team, slot), record, now)
                    .unwrap();
            }
        }
        let stored: Vec<(Vec<u8>, i64, Option<String>)> = store
            .conn()
            .prepare("SELECT throws, throws_format, failures FROM games ORDER BY slot")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        let packed: Vec<Option<Vec<u8>>> = store
            .games_packed(t, 1, 1)
            .unwrap()
            .into_iter()
            .map(|g| g.packed)
            .collect();
        (stored, packed)
    };
    let (stored, packed) = rows(true);
    assert_eq!((stored.clone(), packed.clone()), rows(false));
    assert_eq!(stored[0].1, THROWS_REPLAY);
    assert_eq!(stored[1].1, THROWS_FORMAT);
    assert_eq!(
        packed[0],
        Some(encode_throws(&[[100, 101], [102, 99], [1 << 33, 5]]))
    );
}

/// A games row as the next test compares it: slot, points, throws, their
/// format, failures.
type StoredRow = (u32, i64, i64, Vec<u8>, i64, Option<String>);

/// Games stored a few to a statement ([`Store::insert_games_at`]: 16, 16,
/// 4 and 1 of 37) are the rows stored one statement each, in order: a key
/// stored before keeps its first record, the others are stored; the
/// games are kept for their group's readers only where every row of a
/// statement was the record's (else the readers read the store, as they
/// do after a restart), and what is kept is what is stored.
#[test]
fn games_stored_a_few_to_a_statement_are_the_rows_stored_one_by_one() {
    use crate::referee::{Failure, FailureKind};
    let record = |slot: u32| {
        let mut r = GameRecord {
            seed: 7,
            points: [u64::from(slot), 100 - u64::from(slot)],
            throws: vec![[100, 101 + i64::from(slot)], [102, 99]],
            failures: vec![],
        };
        if slot % 7 == 3 {
            r.failures = vec![Failure {
                player: 1,
                throw: 2,
                kind: FailureKind::WallClock { limit_ms: 10_000 },
                reason: "throw 2: …".into(),
            }];
        }
        r
    };
    let first = GameRecord {
        points: [1000, 1000],
        ..record(5)
    };
    let rows = |batched: bool| {
        let (store, team, t) = one_group_of_one_team();
        let games: Vec<_> = (0..37u32).map(|s| (game_of(team, s), record(s))).collect();
        let at = game_time(Utc::now());
        // Slot 5 was stored before (a resumed round) with another record.
        store
            .insert_game_at(t, &games[5].0, &first, EncodedThrows::of(&first.throws), at)
            .unwrap();
        if batched {
            let new: Vec<NewGame<'_>> = games
                .iter()
                .map(|(g, r)| NewGame {
                    game: g,
                    record: r,
                    encoded: EncodedThrows::of(&r.throws),
                    finished_at: at,
                })
                .collect();
            store.insert_games_at(t, new).unwrap();
        } else {
            for (g, r) in &games {
                store
                    .insert_game_at(t, g, r, EncodedThrows::of(&r.throws), at)
                    .unwrap();
            }
        }
        let stored: Vec<StoredRow> = store
            .conn()
            .prepare(
                "SELECT slot, points_p, points_q, throws, throws_format, failures
                 FROM games ORDER BY slot",
            )
            .unwrap()
            .query_map([], |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                ))
            })
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        let from_store: Vec<Option<Vec<u8>>> = store
            .games_packed(t, 1, 1)
            .unwrap()
            .into_iter()
            .map(|g| g.packed)
            .collect();
        // What the readers get of the games kept: the first statement's
        // 16 (slot 5 among them: none kept), the second's 16.
        let kept = |from: u32, to: u32| {
            let wanted: Vec<(u32, u32)> = (from..to).map(|s| (s, 1)).collect();
            store.with_kept_games_packed(t, 1, 1, &wanted, |gs| {
                gs.iter()
                    .map(|g| Some(g.packed.to_vec()))
                    .collect::<Vec<_>>()
            })
        };
        (stored, from_store, kept(0, 16), kept(16, 32), kept(32, 37))
    };
    let (stored, from_store, kept_first, kept_second, kept_rest) = rows(true);
    let one_by_one = rows(false);
    assert_eq!(stored, one_by_one.0, "the same rows");
    // (The first statement's games stored for replay are read without
    // their throws, to be replayed: none of them is kept.)
    assert_eq!(
        from_store[16..],
        one_by_one.1[16..],
        "the same throws read where kept"
    );
    assert_eq!(stored.len(), 37);
    assert_eq!(
        (stored[5].1, stored[5].2),
        (1000, 1000),
        "the first record wins"
    );
    assert_eq!(stored[6].1, 6);
    assert_eq!(
        stored[3].4, THROWS_FORMAT,
        "the watchdog's game keeps its throws"
    );
    assert_eq!(stored[4].4, THROWS_REPLAY);
    assert_eq!(
        kept_first, None,
        "a statement with a row ignored keeps none"
    );
    assert_eq!(kept_second.as_deref(), Some(&from_store[16..32]));
    assert_eq!(kept_rest.as_deref(), Some(&from_store[32..37]));
}
