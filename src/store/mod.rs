//! The SQLite store: teams, strategy versions, tournaments, rounds, groups,
//! games, disqualifications and evolution generations.
//!
//! The schema lives in `schema/NNNN_*.sql`, applied in order at start-up and
//! recorded in `PRAGMA user_version`: a database written by an older version
//! is migrated forward, never rebuilt. WAL journal, foreign keys on, a busy
//! timeout for the odd concurrent reader.
//!
//! The database file is private: created mode 0600 (SQLite gives its `-wal`
//! and `-shm` the same mode), and an existing one with wider permissions is
//! narrowed at open. `secure_delete` is on, so content that is overwritten
//! or deleted (a sealed mail) is zeroed, not left in free pages;
//! [`Store::forget_overwritten`] empties the write-ahead log, where old page
//! images stay until a checkpoint.
//!
//! This module stores and loads; it decides nothing. Times come from the
//! caller (`now`), never from a clock read here.
//!
//! This file opens the database and holds teams and strategy versions;
//! `tournaments.rs` the tournaments' tables, `throws.rs` the throws'
//! stored formats (and the throws of the games this connection stored for
//! replay lately, kept in memory until the group after theirs finishes, so
//! a group's readers need not replay it), `error.rs` the store's error,
//! `checkpoints.rs` the log's checkpoints off the writing thread while a
//! tournament plays, `tests.rs` the unit tests.

pub mod admin;
pub mod bots;
pub mod checkpoints;
mod error;
pub mod mail;
pub mod rsm;
mod throws;
mod tournaments;

use std::path::Path;

use chrono::{DateTime, SecondsFormat, Utc};
use rusqlite::{params, Connection, OptionalExtension};

use crate::referee::GameRecord;
use crate::seed::SeedKey;
use crate::tournament::{GameKey, TeamId};

pub use error::{Result, StoreError};
pub use throws::{
    decode_throws, encode_throws, packed_runs, put_varint, throws_digest, zigzag, EncodedThrows,
    NewGame, PackedRuns, THROWS_FORMAT, THROWS_REPLAY,
};

/// The migrations, in order. Never edit one that has shipped: add a new one.
pub const MIGRATIONS: &[(&str, &str)] = &[
    (
        "0001_tournament.sql",
        include_str!("../../schema/0001_tournament.sql"),
    ),
    ("0002_mail.sql", include_str!("../../schema/0002_mail.sql")),
    (
        "0003_contest.sql",
        include_str!("../../schema/0003_contest.sql"),
    ),
    (
        "0004_secret_and_compact_throws.sql",
        include_str!("../../schema/0004_secret_and_compact_throws.sql"),
    ),
    (
        "0006_organizer.sql",
        include_str!("../../schema/0006_organizer.sql"),
    ),
    ("0007_rsm.sql", include_str!("../../schema/0007_rsm.sql")),
    (
        "0008_seal_backlog.sql",
        include_str!("../../schema/0008_seal_backlog.sql"),
    ),
    (
        "0009_mail_robust.sql",
        include_str!("../../schema/0009_mail_robust.sql"),
    ),
    (
        "0011_bot_programs.sql",
        include_str!("../../schema/0011_bot_programs.sql"),
    ),
    (
        "0012_seal_bot_programs.sql",
        include_str!("../../schema/0012_seal_bot_programs.sql"),
    ),
    (
        "0013_transport_outages.sql",
        include_str!("../../schema/0013_transport_outages.sql"),
    ),
    (
        "0014_pending_registrations.sql",
        include_str!("../../schema/0014_pending_registrations.sql"),
    ),
    (
        "0015_bot_game_transcripts.sql",
        include_str!("../../schema/0015_bot_game_transcripts.sql"),
    ),
    (
        "0016_bot_folders.sql",
        include_str!("../../schema/0016_bot_folders.sql"),
    ),
    (
        "0017_contest_stops.sql",
        include_str!("../../schema/0017_contest_stops.sql"),
    ),
    (
        "0018_secret_index_and_mailbox.sql",
        include_str!("../../schema/0018_secret_index_and_mailbox.sql"),
    ),
    (
        "0019_inbox_queue_key.sql",
        include_str!("../../schema/0019_inbox_queue_key.sql"),
    ),
    (
        "0020_lanes.sql",
        include_str!("../../schema/0020_lanes.sql"),
    ),
    (
        "0021_proven_registrations.sql",
        include_str!("../../schema/0021_proven_registrations.sql"),
    ),
    (
        "0022_outbox_bodies.sql",
        include_str!("../../schema/0022_outbox_bodies.sql"),
    ),
    (
        "0023_packed_bot_moves.sql",
        include_str!("../../schema/0023_packed_bot_moves.sql"),
    ),
    (
        "0024_outbox_partial_indexes.sql",
        include_str!("../../schema/0024_outbox_partial_indexes.sql"),
    ),
    (
        "0025_compact_games.sql",
        include_str!("../../schema/0025_compact_games.sql"),
    ),
    (
        "0026_outbox_kind_without_events.sql",
        include_str!("../../schema/0026_outbox_kind_without_events.sql"),
    ),
    (
        "0027_outbox_without_state_check.sql",
        include_str!("../../schema/0027_outbox_without_state_check.sql"),
    ),
    (
        "0028_strangers_mail_heads.sql",
        include_str!("../../schema/0028_strangers_mail_heads.sql"),
    ),
    (
        "0029_outbox_sent_bytes.sql",
        include_str!("../../schema/0029_outbox_sent_bytes.sql"),
    ),
    (
        "0030_inbox_retention.sql",
        include_str!("../../schema/0030_inbox_retention.sql"),
    ),
    (
        "0031_strangers_budget.sql",
        include_str!("../../schema/0031_strangers_budget.sql"),
    ),
    (
        "0032_inbox_keys_bound.sql",
        include_str!("../../schema/0032_inbox_keys_bound.sql"),
    ),
    (
        "0033_team_mails.sql",
        include_str!("../../schema/0033_team_mails.sql"),
    ),
    (
        "0034_proven_once.sql",
        include_str!("../../schema/0034_proven_once.sql"),
    ),
    (
        "0035_outbox_message_id_not_unique.sql",
        include_str!("../../schema/0035_outbox_message_id_not_unique.sql"),
    ),
    (
        "0036_automatic_answered.sql",
        include_str!("../../schema/0036_automatic_answered.sql"),
    ),
];

/// An open database.
pub struct Store {
    conn: Connection,
    /// The throws of the games stored for replay lately (`throws.rs`).
    recent: std::cell::RefCell<throws::RecentThrows>,
}

/// Identifies a strategy version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct VersionId(pub i64);

/// A stored strategy version, without its blobs.
#[derive(Debug, Clone)]
pub struct VersionRow {
    pub id: VersionId,
    pub team: TeamId,
    pub accepted: bool,
    pub lexical_elements: Option<u64>,
    pub report: String,
}

/// What to store about a compiled (or rejected) source.
pub struct NewVersion<'a> {
    pub team: TeamId,
    pub source: &'a [u8],
    pub source_sha256: &'a str,
    pub binary: Option<&'a [u8]>,
    pub lexical_elements: Option<u64>,
    pub description: Option<&'a str>,
    pub report_json: &'a str,
}

/// A tournament row.
#[derive(Debug, Clone)]
pub struct TournamentRow {
    pub id: i64,
    pub seed: u64,
    /// The secret key of the players' seeds.
    pub key: SeedKey,
    pub config: String,
    pub entries_key: String,
    pub finished: bool,
}

const TOURNAMENT_COLUMNS: &str = "id, seed, config, entries_key, state, secret";

fn tournament_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<TournamentRow> {
    let seed = seed_from_sql(r.get(1)?);
    let secret: Option<Vec<u8>> = r.get(5)?;
    let key = match secret.as_deref().map(<[u8; 16]>::try_from) {
        Some(Ok(bytes)) => SeedKey::from_bytes(bytes),
        _ => SeedKey::public_from_seed(seed),
    };
    Ok(TournamentRow {
        id: r.get(0)?,
        seed,
        key,
        config: r.get(2)?,
        entries_key: r.get(3)?,
        finished: r.get::<_, String>(4)? == "finished",
    })
}

/// A tournament entry: who plays with which version.
#[derive(Debug, Clone)]
pub struct Entry {
    pub team: TeamId,
    pub name: String,
    pub version: VersionId,
}

/// Whether a read decodes the throws of games.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Throws {
    Decoded,
    /// Format 1's bytes as they are ([`PackedGame`]), others decoded.
    Packed,
    Left,
}

/// A stored game attempt read with its throws in format 1's bytes where
/// they are at hand ([`Store::games_packed`]).
#[derive(Debug, Clone)]
pub struct PackedGame {
    /// The game; its `record.throws` is empty when `packed` holds them.
    pub game: StoredGame,
    /// The throws as [`encode_throws`] wrote them (stored so, or kept from
    /// when the game was stored for replay and checked against its
    /// digest), else `None`: then the game is as [`Store::games`] reads it.
    pub packed: Option<Vec<u8>>,
}

/// A game as this connection stored it a moment ago, borrowed from the
/// store's keep ([`Store::with_kept_games_packed`]): what
/// [`Store::games_packed`] reads of it, not copied.
#[derive(Debug, Clone, Copy)]
pub struct KeptGameRef<'k> {
    pub key: GameKey,
    pub attempt: u32,
    pub players: [TeamId; 2],
    /// Its seed, points and failures; `throws` empty (they are `packed`).
    pub record: &'k GameRecord,
    /// The throws as [`encode_throws`] wrote them.
    pub packed: &'k [u8],
}

impl KeptGameRef<'_> {
    /// The game as [`Store::games_packed`] reads it (a copy).
    pub fn to_packed_game(&self) -> PackedGame {
        PackedGame {
            game: StoredGame {
                key: self.key,
                attempt: self.attempt,
                players: self.players,
                record: self.record.clone(),
                throws_digest: None,
            },
            packed: Some(self.packed.to_vec()),
        }
    }
}

/// A stored game attempt.
#[derive(Debug, Clone)]
pub struct StoredGame {
    pub key: GameKey,
    pub attempt: u32,
    pub players: [TeamId; 2],
    pub record: GameRecord,
    /// A game stored for replay ([`THROWS_REPLAY`]), read with its throws
    /// wanted: the digest its replayed throws must have (`record.throws`
    /// is empty until then).
    pub throws_digest: Option<[u8; 16]>,
}

/// A stored round.
#[derive(Debug, Clone)]
pub struct RoundRow {
    pub number: u32,
    pub field: Vec<TeamId>,
    pub is_final: bool,
    pub finished: bool,
}

/// Statements a [`Store`]'s connection keeps prepared.
const STATEMENT_CACHE: usize = 64;

pub fn timestamp(now: DateTime<Utc>) -> String {
    now.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// A game's time as the games table stores it (`finished_at`, schema
/// 0025): milliseconds since 1970-01-01 UTC, the precision of
/// [`timestamp`], in 6 bytes instead of 24.
pub fn game_time(now: DateTime<Utc>) -> i64 {
    now.timestamp_millis()
}

/// A stored [`game_time`] as a time (`None` if out of range).
pub fn game_time_from_sql(ms: i64) -> Option<DateTime<Utc>> {
    DateTime::from_timestamp_millis(ms)
}

fn seed_to_sql(seed: u64) -> i64 {
    seed as i64
}

fn seed_from_sql(v: i64) -> u64 {
    v as u64
}

fn json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).expect("serializable")
}

fn from_json<T: serde::de::DeserializeOwned>(s: &str) -> Result<T> {
    serde_json::from_str(s).map_err(|e| StoreError::Corrupt(format!("{e}: {s:.80}")))
}

/// How many of a team's newest versions keep their source and program
/// whole, whatever they are; see [`trim_old_versions`].
pub const VERSIONS_KEPT_WHOLE: usize = 20;

/// Forgets the source and program of a team's strategy versions that
/// nothing needs whole any more: those older than its
/// [`VERSIONS_KEPT_WHOLE`] newest, except its newest accepted one (what
/// plays next), any a tournament entered (its games, replays, resumption
/// and the organizer's commands read them) and bot versions (the results
/// site publishes every version's source of a bot; their programs are
/// already emptied once superseded, `compile_bot::commit`). A trimmed
/// version keeps its row: its id (compile requests name it), its hash, its
/// verdict, its report, description and lexical count (the team's status
/// and the organizer's `knobeln team` list them); its source becomes empty
/// and its program empty (accepted) or `NULL` (rejected). So a team's
/// stored sources and programs are bounded by 21 versions plus what it
/// entered, however often it compiles (`compiles_per_team_per_hour` allows
/// 480 a day), at about 1.3 MiB each at most.
///
/// Runs in the transaction that stores a new version, so the bound holds
/// at every commit.
pub fn trim_old_versions(conn: &Connection, team: TeamId) -> Result<usize> {
    Ok(conn.execute(
        "UPDATE strategy_versions
            SET source = X'', binary = CASE WHEN accepted = 1 THEN X'' ELSE NULL END
          WHERE team_id = ?1
            AND (length(source) > 0 OR length(binary) > 0)
            AND id NOT IN (SELECT id FROM strategy_versions WHERE team_id = ?1
                            ORDER BY id DESC LIMIT ?2)
            AND id IS NOT (SELECT max(id) FROM strategy_versions
                            WHERE team_id = ?1 AND accepted = 1)
            AND id NOT IN (SELECT version_id FROM tournament_entries)
            AND id NOT IN (SELECT version_id FROM bot_programs)",
        params![team.0, VERSIONS_KEPT_WHOLE as i64],
    )?)
}

/// Stores a strategy version (on any connection or transaction), and
/// trims the team's old ones ([`trim_old_versions`]).
pub fn insert_version_conn(
    conn: &Connection,
    v: &NewVersion<'_>,
    now: DateTime<Utc>,
) -> Result<VersionId> {
    conn.execute(
            "INSERT INTO strategy_versions
               (team_id, source, source_sha256, accepted, binary, lexical_elements, description, report, compiled_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            params![
                v.team.0,
                v.source,
                v.source_sha256,
                v.binary.is_some(),
                v.binary,
                v.lexical_elements.map(|n| n as i64),
                v.description,
                v.report_json,
                timestamp(now)
            ],
        )?;
    let id = VersionId(conn.last_insert_rowid());
    trim_old_versions(conn, v.team)?;
    Ok(id)
}

/// Creates the database file mode 0600 if it is missing; narrows an
/// existing one (and its `-wal`, `-shm`) to the owner when it is wider and
/// ours to change.
fn private_database_file(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
    {
        Ok(_) => return Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    narrow_database_files(path)
}

/// Takes away any permission of group and others from the database and
/// its `-wal` and `-shm` (a file an older version left readable).
fn narrow_database_files(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mut name = path.as_os_str().to_owned();
    let files = ["", "-wal", "-shm"].map(|suffix| {
        name.push(suffix);
        let p = std::path::PathBuf::from(&name);
        name = path.as_os_str().to_owned();
        p
    });
    for file in files {
        let Ok(meta) = std::fs::metadata(&file) else {
            continue;
        };
        let mode = meta.permissions().mode();
        if meta.is_file() && mode & 0o077 != 0 {
            match std::fs::set_permissions(&file, std::fs::Permissions::from_mode(mode & 0o700)) {
                // Another user's database (read by `status`): not ours to narrow.
                Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {}
                r => r?,
            }
        }
    }
    Ok(())
}

impl Store {
    /// Opens (creating if needed) and migrates the database at `path`.
    pub fn open(path: &Path) -> Result<Store> {
        private_database_file(path).map_err(|source| StoreError::File {
            path: path.to_path_buf(),
            source,
        })?;
        let conn = Connection::open(path)?;
        Self::setup(conn)
    }

    /// Opens and migrates the database at `path`, which must exist: the
    /// commands that only look at or act on a contest use this, so that one
    /// run in the wrong folder says so instead of creating an empty
    /// database ([`StoreError::NoDatabase`]).
    pub fn open_existing(path: &Path) -> Result<Store> {
        let missing = || StoreError::NoDatabase {
            path: path.to_path_buf(),
        };
        if !path.is_file() {
            return Err(missing());
        }
        narrow_database_files(path).map_err(|source| StoreError::File {
            path: path.to_path_buf(),
            source,
        })?;
        // Without SQLITE_OPEN_CREATE: a file removed since the check above
        // is an error, not a new empty database.
        let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE
            | rusqlite::OpenFlags::SQLITE_OPEN_URI
            | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags).map_err(|e| match e {
            rusqlite::Error::SqliteFailure(f, _) if f.code == rusqlite::ErrorCode::CannotOpen => {
                missing()
            }
            other => other.into(),
        })?;
        Self::setup(conn)
    }

    /// A private in-memory database (tests).
    pub fn open_in_memory() -> Result<Store> {
        Self::setup(Connection::open_in_memory()?)
    }

    fn setup(mut conn: Connection) -> Result<Store> {
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        // Every transaction takes the write lock when it begins, where the
        // busy timeout waits for it. A deferred one that read first and
        // then wrote got SQLITE_BUSY at once, no waiting, whenever another
        // connection had committed since its read (WAL's stale snapshot):
        // under load the contest lease's heartbeat did so during a round's
        // mails, and the contest stopped ("database is locked", F13).
        conn.set_transaction_behavior(rusqlite::TransactionBehavior::Immediate);
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "secure_delete", "ON")?;
        // The statements run per game and per mail are prepared once per
        // connection (rusqlite's default keeps 16).
        conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        let mut store = Store {
            conn,
            recent: Default::default(),
        };
        store.migrate()?;
        Ok(store)
    }

    /// The schema version of the open database.
    pub fn schema_version(&self) -> Result<i64> {
        Ok(self
            .conn
            .pragma_query_value(None, "user_version", |r| r.get(0))?)
    }

    /// Brings the schema up to [`MIGRATIONS`]. A database already up to
    /// date (every open but the first after an upgrade) is only read.
    /// Otherwise each step is a write transaction taken at once that reads
    /// the version again inside it: two processes upgraded together (the
    /// mail front end and the engine, started at once) apply each
    /// migration once, never one after the other (a migration is written
    /// to be applied once: its SQL is not asked to be idempotent).
    fn migrate(&mut self) -> Result<()> {
        let known = MIGRATIONS.len() as i64;
        let found = self.schema_version()?;
        if found > known {
            // Said before any lock is asked for (a read-only open too).
            return Err(StoreError::TooNew { found, known });
        }
        if found == known {
            return Ok(());
        }
        #[cfg(test)]
        tests::after_version_read();
        // A migration that rebuilds a table (SQLite's twelve steps, 0027)
        // drops the old one while other tables refer to it: foreign keys
        // are off while migrating (the pragma is a no-op inside a
        // transaction, so it is set here, outside), checked by
        // `foreign_key_check` before each migration commits, and on again
        // whatever the outcome.
        self.conn.pragma_update(None, "foreign_keys", "OFF")?;
        let migrated = self.apply_migrations(known);
        let on = self.conn.pragma_update(None, "foreign_keys", "ON");
        migrated?;
        Ok(on?)
    }

    /// [`Self::migrate`]'s steps, one transaction each.
    fn apply_migrations(&mut self, known: i64) -> Result<()> {
        loop {
            let tx = self
                .conn
                .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            let found: i64 = tx.pragma_query_value(None, "user_version", |r| r.get(0))?;
            if found > known {
                return Err(StoreError::TooNew { found, known });
            }
            if found == known {
                return Ok(());
            }
            let Some((name, sql)) = usize::try_from(found).ok().map(|i| MIGRATIONS[i]) else {
                return Err(StoreError::Corrupt(format!("schema version {found}")));
            };
            tx.execute_batch(sql)?;
            // No row may refer to one a migration left out (foreign keys
            // are off while migrating).
            let broken: Option<(String, Option<i64>, String)> = tx
                .query_row(
                    "SELECT \"table\", rowid, parent FROM pragma_foreign_key_check LIMIT 1",
                    [],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
                )
                .optional()?;
            if let Some((table, rowid, parent)) = broken {
                return Err(StoreError::Corrupt(format!(
                    "migration {name}: row {rowid:?} of {table} refers to a missing row of {parent}"
                )));
            }
            tx.pragma_update(None, "user_version", found + 1)?;
            tx.commit()?;
        }
    }

    /// Empties the write-ahead log into the database and truncates it, so
    /// that page images from before an overwrite (a sealed mail) are gone
    /// from the `-wal` file too. Returns `false` when a reader kept the log
    /// from being emptied (it is tried again after the next seal).
    pub fn forget_overwritten(&self) -> Result<bool> {
        let busy: i64 = self
            .conn
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| r.get(0))?;
        Ok(busy == 0)
    }

    /// The underlying connection (for modules that add their own tables).
    pub fn conn(&self) -> &Connection {
        &self.conn
    }

    pub fn conn_mut(&mut self) -> &mut Connection {
        &mut self.conn
    }

    /// A transaction that only reads, for work that reads many rows while
    /// it does something slow (the site's team pages read every
    /// description while the pages are written). Deferred, unlike every
    /// other transaction of the store: it never takes the write lock, so
    /// the mail loop, the lease's heartbeat and a contest write meanwhile;
    /// it reads one snapshot (WAL), the one of its first read. `None`
    /// inside another transaction, whose snapshot it already reads.
    pub fn reading_transaction(&self) -> Result<Option<rusqlite::Transaction<'_>>> {
        if !self.conn.is_autocommit() {
            return Ok(None);
        }
        let tx = rusqlite::Transaction::new_unchecked(
            &self.conn,
            rusqlite::TransactionBehavior::Deferred,
        )?;
        Ok(Some(tx))
    }

    // ---- teams and versions ----

    /// The team with this name, created if new.
    pub fn ensure_team(&self, name: &str, now: DateTime<Utc>) -> Result<TeamId> {
        self.conn.execute(
            "INSERT INTO teams (name, created_at) VALUES (?1, ?2) ON CONFLICT(name) DO NOTHING",
            params![name, timestamp(now)],
        )?;
        let id: i64 = self
            .conn
            .query_row("SELECT id FROM teams WHERE name = ?1", [name], |r| r.get(0))?;
        Ok(TeamId(id as u32))
    }

    pub fn team_name(&self, team: TeamId) -> Result<String> {
        // Prepared once per connection: asked for each member of a group
        // as it starts (the contest's LGP mails).
        Ok(self
            .conn
            .prepare_cached("SELECT name FROM teams WHERE id = ?1")?
            .query_row([team.0], |r| r.get(0))?)
    }

    /// A version of this team with exactly this source, if one was stored
    /// that can still play (or was rejected): an accepted version whose
    /// program [`trim_old_versions`] forgot is not one.
    pub fn version_by_source(&self, team: TeamId, sha256: &str) -> Result<Option<VersionRow>> {
        Ok(self
            .conn
            .query_row(
                "SELECT id, team_id, accepted, lexical_elements, report FROM strategy_versions
                 WHERE team_id = ?1 AND source_sha256 = ?2
                   AND (accepted = 0 OR length(binary) > 0)
                 ORDER BY id DESC LIMIT 1",
                params![team.0, sha256],
                |r| {
                    Ok(VersionRow {
                        id: VersionId(r.get(0)?),
                        team: TeamId(r.get::<_, i64>(1)? as u32),
                        accepted: r.get(2)?,
                        lexical_elements: r.get::<_, Option<i64>>(3)?.map(|n| n as u64),
                        report: r.get(4)?,
                    })
                },
            )
            .optional()?)
    }

    /// Any team's accepted version with exactly this source: its binary,
    /// lexical count, description and report (a compile cache; a version
    /// whose program was forgotten is not in it).
    #[allow(clippy::type_complexity)]
    pub fn compiled_by_source(
        &self,
        sha256: &str,
    ) -> Result<Option<(Vec<u8>, Option<u64>, Option<String>, String)>> {
        Ok(self
            .conn
            .query_row(
                "SELECT binary, lexical_elements, description, report FROM strategy_versions
                 WHERE source_sha256 = ?1 AND accepted = 1 AND length(binary) > 0
                 ORDER BY id DESC LIMIT 1",
                [sha256],
                |r| {
                    Ok((
                        r.get::<_, Vec<u8>>(0)?,
                        r.get::<_, Option<i64>>(1)?.map(|n| n as u64),
                        r.get::<_, Option<String>>(2)?,
                        r.get::<_, String>(3)?,
                    ))
                },
            )
            .optional()?)
    }

    /// Stores a copy of version `from` (same source, verdict, binary and
    /// report) as a version of `team`.
    pub fn copy_version(
        &self,
        from: VersionId,
        team: TeamId,
        now: DateTime<Utc>,
    ) -> Result<VersionId> {
        self.conn.execute(
            "INSERT INTO strategy_versions
               (team_id, source, source_sha256, accepted, binary, lexical_elements, description, report, compiled_at)
             SELECT ?2, source, source_sha256, accepted, binary, lexical_elements, description, report, ?3
             FROM strategy_versions WHERE id = ?1",
            params![from.0, team.0, timestamp(now)],
        )?;
        let id = VersionId(self.conn.last_insert_rowid());
        trim_old_versions(&self.conn, team)?;
        Ok(id)
    }

    pub fn insert_version(&self, v: &NewVersion<'_>, now: DateTime<Utc>) -> Result<VersionId> {
        insert_version_conn(&self.conn, v, now)
    }

    pub fn version_binary(&self, id: VersionId) -> Result<Vec<u8>> {
        // Prepared once per connection: read for every member of every
        // group that starts.
        let b: Option<Vec<u8>> = self
            .conn
            .prepare_cached("SELECT binary FROM strategy_versions WHERE id = ?1")?
            .query_row([id.0], |r| r.get(0))?;
        b.ok_or_else(|| StoreError::Corrupt(format!("version {} has no binary", id.0)))
    }

    /// The accepted KNOBELN versions whose stored program is a native ELF
    /// program (of a version before modules),
    /// with their stored sources: what [`crate::engine::upgrade`] rebuilds.
    pub fn native_knobeln_versions(&self) -> Result<Vec<(VersionId, Vec<u8>)>> {
        let mut stmt = self.conn.prepare(
            "SELECT v.id, v.source FROM strategy_versions v
             WHERE v.accepted AND v.binary IS NOT NULL
               AND substr(v.binary, 1, 4) = X'7F454C46'
               AND NOT EXISTS (SELECT 1 FROM bot_programs b WHERE b.version_id = v.id)
             ORDER BY v.id",
        )?;
        let rows = stmt.query_map([], |r| Ok((VersionId(r.get(0)?), r.get(1)?)))?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    /// Replaces a version's program (the same source, built again).
    pub fn replace_binary(&self, id: VersionId, binary: &[u8]) -> Result<()> {
        self.conn.execute(
            "UPDATE strategy_versions SET binary = ?2 WHERE id = ?1",
            params![id.0, binary],
        )?;
        Ok(())
    }
}

#[cfg(test)]
mod tests;
