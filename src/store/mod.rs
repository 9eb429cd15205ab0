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

pub mod admin;
pub mod mail;
pub mod rsm;

use std::path::Path;

use chrono::{DateTime, SecondsFormat, Utc};
use rusqlite::{params, Connection, OptionalExtension};

use crate::referee::{Failure, GameRecord};
use crate::seed::SeedKey;
use crate::tournament::{GameKey, ScheduledGame, TeamId};

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
];

/// Store faults (infrastructure, never a participant's mistake).
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error(
        "database holds schema version {found}, newer than this program's {known}; upgrade knobeln"
    )]
    TooNew { found: i64, known: i64 },
    #[error("database record is corrupt: {0}")]
    Corrupt(String),
    #[error("database file {path}: {source}")]
    File {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    #[error("no contest database at {} (run `knobeln init` or check --config)", path.display())]
    NoDatabase { path: std::path::PathBuf },
}

pub type Result<T> = std::result::Result<T, StoreError>;

/// An open database.
pub struct Store {
    conn: Connection,
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
    Left,
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

pub fn timestamp(now: DateTime<Utc>) -> String {
    now.to_rfc3339_opts(SecondsFormat::Millis, true)
}

fn seed_to_sql(seed: u64) -> i64 {
    seed as i64
}

fn seed_from_sql(v: i64) -> u64 {
    v as u64
}

/// The stored format of a game's throws (column `throws_format`): 0, i32
/// little-endian pairs; 1, [`encode_throws`]; 2, [`THROWS_REPLAY`].
pub const THROWS_FORMAT: i64 = 1;

/// Format 2: the throws are not stored; the column holds their
/// [`throws_digest`], and the game is replayed from its programs, seed and
/// the tournament's key when its throws are wanted
/// ([`crate::engine::replay`]), then checked against the digest.
pub const THROWS_REPLAY: i64 = 2;

/// The first 16 bytes of the SHA-256 of the throws' format-1 encoding.
pub fn throws_digest(throws: &[[i64; 2]]) -> [u8; 16] {
    use sha2::{Digest, Sha256};
    let d = Sha256::digest(encode_throws(throws));
    let mut out = [0u8; 16];
    out.copy_from_slice(&d[..16]);
    out
}

/// Encodes the throws compactly (format 1): for each throw, each player's
/// difference to its own previous throw, zigzag-encoded as an LEB128
/// varint. Series climb in small steps, so most throws take one or two bytes.
pub fn encode_throws(throws: &[[i64; 2]]) -> Vec<u8> {
    let mut out = Vec::with_capacity(throws.len() * 3);
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

/// Decodes stored throws of either format; a corrupt blob is an error,
/// never a panic.
pub fn decode_throws(bytes: &[u8], format: i64) -> Result<Vec<[i64; 2]>> {
    match format {
        0 => decode_throws_v0(bytes),
        1 => decode_throws_v1(bytes),
        f => Err(StoreError::Corrupt(format!("unknown throws format {f}"))),
    }
}

fn decode_throws_v1(bytes: &[u8]) -> Result<Vec<[i64; 2]>> {
    let mut out = Vec::with_capacity(bytes.len() / 3);
    let mut prev = [0i64; 2];
    let mut pair = [0i64; 2];
    let mut i = 0usize;
    let mut n = 0usize;
    while i < bytes.len() {
        let mut z = 0u64;
        let mut shift = 0u32;
        loop {
            let Some(&b) = bytes.get(i) else {
                return Err(StoreError::Corrupt(
                    "throws blob ends inside a number".into(),
                ));
            };
            i += 1;
            if shift >= 64 {
                return Err(StoreError::Corrupt(
                    "throws blob holds an overlong number".into(),
                ));
            }
            z |= u64::from(b & 0x7f) << shift;
            shift += 7;
            if b & 0x80 == 0 {
                break;
            }
        }
        let d = ((z >> 1) as i64) ^ -((z & 1) as i64);
        let p = n % 2;
        prev[p] = prev[p].wrapping_add(d);
        pair[p] = prev[p];
        n += 1;
        if p == 1 {
            out.push(pair);
        }
    }
    if !n.is_multiple_of(2) {
        return Err(StoreError::Corrupt("throws blob with half a throw".into()));
    }
    Ok(out)
}

fn decode_throws_v0(bytes: &[u8]) -> Result<Vec<[i64; 2]>> {
    if !bytes.len().is_multiple_of(8) {
        return Err(StoreError::Corrupt(format!(
            "throws blob of {} bytes",
            bytes.len()
        )));
    }
    Ok(bytes
        .chunks_exact(8)
        .map(|c| {
            [
                i32::from_le_bytes([c[0], c[1], c[2], c[3]]) as i64,
                i32::from_le_bytes([c[4], c[5], c[6], c[7]]) as i64,
            ]
        })
        .collect())
}

fn json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).expect("serializable")
}

fn from_json<T: serde::de::DeserializeOwned>(s: &str) -> Result<T> {
    serde_json::from_str(s).map_err(|e| StoreError::Corrupt(format!("{e}: {s:.80}")))
}

/// Stores a strategy version (on any connection or transaction).
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
    Ok(VersionId(conn.last_insert_rowid()))
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

    fn setup(conn: Connection) -> Result<Store> {
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "secure_delete", "ON")?;
        let mut store = Store { conn };
        store.migrate()?;
        Ok(store)
    }

    /// The schema version of the open database.
    pub fn schema_version(&self) -> Result<i64> {
        Ok(self
            .conn
            .pragma_query_value(None, "user_version", |r| r.get(0))?)
    }

    fn migrate(&mut self) -> Result<()> {
        let known = MIGRATIONS.len() as i64;
        let found = self.schema_version()?;
        if found > known {
            return Err(StoreError::TooNew { found, known });
        }
        for (i, (_name, sql)) in MIGRATIONS.iter().enumerate().skip(found as usize) {
            let tx = self.conn.transaction()?;
            tx.execute_batch(sql)?;
            tx.pragma_update(None, "user_version", i as i64 + 1)?;
            tx.commit()?;
        }
        Ok(())
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
        Ok(self
            .conn
            .query_row("SELECT name FROM teams WHERE id = ?1", [team.0], |r| {
                r.get(0)
            })?)
    }

    /// A version of this team with exactly this source, if one was stored.
    pub fn version_by_source(&self, team: TeamId, sha256: &str) -> Result<Option<VersionRow>> {
        Ok(self
            .conn
            .query_row(
                "SELECT id, team_id, accepted, lexical_elements, report FROM strategy_versions
                 WHERE team_id = ?1 AND source_sha256 = ?2 ORDER BY id DESC LIMIT 1",
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
    /// lexical count, description and report (a compile cache).
    #[allow(clippy::type_complexity)]
    pub fn compiled_by_source(
        &self,
        sha256: &str,
    ) -> Result<Option<(Vec<u8>, Option<u64>, Option<String>, String)>> {
        Ok(self
            .conn
            .query_row(
                "SELECT binary, lexical_elements, description, report FROM strategy_versions
                 WHERE source_sha256 = ?1 AND accepted = 1 ORDER BY id DESC LIMIT 1",
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
        Ok(VersionId(self.conn.last_insert_rowid()))
    }

    pub fn insert_version(&self, v: &NewVersion<'_>, now: DateTime<Utc>) -> Result<VersionId> {
        insert_version_conn(&self.conn, v, now)
    }

    pub fn version_binary(&self, id: VersionId) -> Result<Vec<u8>> {
        let b: Option<Vec<u8>> = self.conn.query_row(
            "SELECT binary FROM strategy_versions WHERE id = ?1",
            [id.0],
            |r| r.get(0),
        )?;
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

    // ---- tournaments ----

    /// The most recent tournament with these entries (and this seed, if given).
    pub fn find_tournament(
        &self,
        entries_key: &str,
        seed: Option<u64>,
    ) -> Result<Option<TournamentRow>> {
        let sql = format!("SELECT {TOURNAMENT_COLUMNS} FROM tournaments WHERE entries_key = ?1");
        Ok(match seed {
            Some(s) => self
                .conn
                .query_row(
                    &format!("{sql} AND seed = ?2 ORDER BY id DESC LIMIT 1"),
                    params![entries_key, seed_to_sql(s)],
                    tournament_row,
                )
                .optional()?,
            None => self
                .conn
                .query_row(
                    &format!("{sql} AND state = 'running' ORDER BY id DESC LIMIT 1"),
                    params![entries_key],
                    tournament_row,
                )
                .optional()?,
        })
    }

    pub fn tournament(&self, id: i64) -> Result<TournamentRow> {
        Ok(self.conn.query_row(
            &format!("SELECT {TOURNAMENT_COLUMNS} FROM tournaments WHERE id = ?1"),
            [id],
            tournament_row,
        )?)
    }

    /// Creates a tournament with its entries, in one transaction.
    pub fn create_tournament(
        &mut self,
        seed: u64,
        key: &SeedKey,
        config_json: &str,
        entries_key: &str,
        entries: &[(TeamId, VersionId)],
        now: DateTime<Utc>,
    ) -> Result<i64> {
        let tx = self.conn.transaction()?;
        tx.execute(
            "INSERT INTO tournaments (seed, config, entries_key, state, started_at, secret)
             VALUES (?1, ?2, ?3, 'running', ?4, ?5)",
            params![
                seed_to_sql(seed),
                config_json,
                entries_key,
                timestamp(now),
                &key.to_bytes()[..]
            ],
        )?;
        let id = tx.last_insert_rowid();
        for (team, version) in entries {
            tx.execute(
                "INSERT INTO tournament_entries (tournament_id, team_id, version_id) VALUES (?1, ?2, ?3)",
                params![id, team.0, version.0],
            )?;
        }
        tx.commit()?;
        Ok(id)
    }

    pub fn entries(&self, tournament: i64) -> Result<Vec<Entry>> {
        let mut st = self.conn.prepare(
            "SELECT e.team_id, t.name, e.version_id FROM tournament_entries e
             JOIN teams t ON t.id = e.team_id WHERE e.tournament_id = ?1 ORDER BY e.team_id",
        )?;
        let rows = st.query_map([tournament], |r| {
            Ok(Entry {
                team: TeamId(r.get::<_, i64>(0)? as u32),
                name: r.get(1)?,
                version: VersionId(r.get(2)?),
            })
        })?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    pub fn finish_tournament(&self, tournament: i64, now: DateTime<Utc>) -> Result<()> {
        self.conn.execute(
            "UPDATE tournaments SET state = 'finished', finished_at = ?2 WHERE id = ?1",
            params![tournament, timestamp(now)],
        )?;
        Ok(())
    }

    // ---- rounds and groups ----

    pub fn round(&self, tournament: i64, number: u32) -> Result<Option<RoundRow>> {
        let row: Option<(String, bool, Option<String>)> = self
            .conn
            .query_row(
                "SELECT field, is_final, finished_at FROM rounds WHERE tournament_id = ?1 AND number = ?2",
                params![tournament, number],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()?;
        row.map(|(field, is_final, finished)| {
            Ok(RoundRow {
                number,
                field: from_json(&field)?,
                is_final,
                finished: finished.is_some(),
            })
        })
        .transpose()
    }

    /// Stores a round and its groups, in one transaction.
    pub fn insert_round(
        &mut self,
        tournament: i64,
        number: u32,
        field: &[TeamId],
        is_final: bool,
        groups: &[Vec<TeamId>],
    ) -> Result<()> {
        let tx = self.conn.transaction()?;
        tx.execute(
            "INSERT INTO rounds (tournament_id, number, field, is_final) VALUES (?1, ?2, ?3, ?4)",
            params![tournament, number, json(&field), is_final],
        )?;
        for (g, members) in groups.iter().enumerate() {
            tx.execute(
                "INSERT INTO groups (tournament_id, round, number, members) VALUES (?1, ?2, ?3, ?4)",
                params![tournament, number, g as u32 + 1, json(members)],
            )?;
        }
        tx.commit()?;
        Ok(())
    }

    pub fn groups(&self, tournament: i64, round: u32) -> Result<Vec<Vec<TeamId>>> {
        let mut st = self.conn.prepare(
            "SELECT members FROM groups WHERE tournament_id = ?1 AND round = ?2 ORDER BY number",
        )?;
        let rows = st.query_map(params![tournament, round], |r| r.get::<_, String>(0))?;
        let mut out = Vec::new();
        for r in rows {
            out.push(from_json(&r?)?);
        }
        Ok(out)
    }

    pub fn finish_group(
        &self,
        tournament: i64,
        round: u32,
        group: u32,
        now: DateTime<Utc>,
    ) -> Result<()> {
        self.conn.execute(
            "UPDATE groups SET finished_at = ?4 WHERE tournament_id = ?1 AND round = ?2 AND number = ?3
             AND finished_at IS NULL",
            params![tournament, round, group, timestamp(now)],
        )?;
        Ok(())
    }

    pub fn group_finished(&self, tournament: i64, round: u32, group: u32) -> Result<bool> {
        let f: Option<String> = self.conn.query_row(
            "SELECT finished_at FROM groups WHERE tournament_id = ?1 AND round = ?2 AND number = ?3",
            params![tournament, round, group],
            |r| r.get(0),
        )?;
        Ok(f.is_some())
    }

    /// Marks a round finished and records its disqualifications, in one transaction.
    pub fn finish_round(
        &mut self,
        tournament: i64,
        round: u32,
        disqualified: &[(TeamId, GameKey, String)],
        now: DateTime<Utc>,
    ) -> Result<()> {
        let tx = self.conn.transaction()?;
        for (team, key, reason) in disqualified {
            tx.execute(
                "INSERT OR IGNORE INTO disqualifications (tournament_id, team_id, round, grp, slot, reason)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![tournament, team.0, key.round, key.group, key.slot, reason],
            )?;
        }
        tx.execute(
            "UPDATE rounds SET finished_at = ?3 WHERE tournament_id = ?1 AND number = ?2",
            params![tournament, round, timestamp(now)],
        )?;
        tx.commit()?;
        Ok(())
    }

    // ---- games ----

    /// Commits one finished game attempt. Storing the same key twice is a
    /// no-op (the first record wins), so a replayed write is harmless.
    pub fn insert_game(
        &self,
        tournament: i64,
        game: &ScheduledGame,
        record: &GameRecord,
        now: DateTime<Utc>,
    ) -> Result<()> {
        // A game the watchdog ended (a fault of the engine, wall clock)
        // would not replay to the same record: its throws are kept.
        let replayable = !record
            .failures
            .iter()
            .any(|f| matches!(f.kind, crate::referee::FailureKind::WallClock { .. }));
        let (throws, format) = if replayable {
            (throws_digest(&record.throws).to_vec(), THROWS_REPLAY)
        } else {
            (encode_throws(&record.throws), THROWS_FORMAT)
        };
        self.conn.execute(
            "INSERT OR IGNORE INTO games (tournament_id, round, grp, slot, attempt, player_p, player_q,
               seed, points_p, points_q, throws, failures, finished_at, throws_format)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
            params![
                tournament,
                game.key.round,
                game.key.group,
                game.key.slot,
                game.attempt,
                game.players[0].0,
                game.players[1].0,
                seed_to_sql(game.seed),
                record.points[0] as i64,
                record.points[1] as i64,
                throws,
                json(&record.failures),
                timestamp(now),
                format
            ],
        )?;
        Ok(())
    }

    /// All stored attempts of a group, in slot order, with their throws
    /// where they are stored; a game stored for replay has none and its
    /// [`StoredGame::throws_digest`] (see [`crate::engine::replay`]).
    pub fn games(&self, tournament: i64, round: u32, group: u32) -> Result<Vec<StoredGame>> {
        self.read_games(tournament, round, group, Throws::Decoded)
    }

    /// All stored attempts of a group without their throws (empty): what
    /// results, rankings and schedules need, at a fraction of the cost.
    pub fn game_outcomes(
        &self,
        tournament: i64,
        round: u32,
        group: u32,
    ) -> Result<Vec<StoredGame>> {
        self.read_games(tournament, round, group, Throws::Left)
    }

    fn read_games(
        &self,
        tournament: i64,
        round: u32,
        group: u32,
        throws_wanted: Throws,
    ) -> Result<Vec<StoredGame>> {
        let throws_column = match throws_wanted {
            Throws::Decoded => "throws",
            Throws::Left => "x''",
        };
        let mut st = self.conn.prepare_cached(&format!(
            "SELECT slot, attempt, player_p, player_q, seed, points_p, points_q, {throws_column},
                    failures, throws_format
             FROM games WHERE tournament_id = ?1 AND round = ?2 AND grp = ?3 ORDER BY slot"
        ))?;
        let rows = st.query_map(params![tournament, round, group], |r| {
            Ok((
                r.get::<_, u32>(0)?,
                r.get::<_, u32>(1)?,
                r.get::<_, i64>(2)?,
                r.get::<_, i64>(3)?,
                r.get::<_, i64>(4)?,
                r.get::<_, i64>(5)?,
                r.get::<_, i64>(6)?,
                r.get::<_, Vec<u8>>(7)?,
                r.get::<_, String>(8)?,
                r.get::<_, i64>(9)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (slot, attempt, p, q, seed, pp, pq, throws, failures, format) = row?;
            let failures: Vec<Failure> = from_json(&failures)?;
            let replay = throws_wanted == Throws::Decoded && format == THROWS_REPLAY;
            let throws_digest = if replay {
                Some(<[u8; 16]>::try_from(throws.as_slice()).map_err(|_| {
                    StoreError::Corrupt(format!("a game's throws digest of {} bytes", throws.len()))
                })?)
            } else {
                None
            };
            out.push(StoredGame {
                key: GameKey { round, group, slot },
                attempt,
                players: [TeamId(p as u32), TeamId(q as u32)],
                record: GameRecord {
                    seed: seed_from_sql(seed),
                    points: [pp as u64, pq as u64],
                    throws: match throws_wanted {
                        Throws::Decoded if !replay => decode_throws(&throws, format)?,
                        _ => Vec::new(),
                    },
                    failures,
                },
                throws_digest,
            });
        }
        Ok(out)
    }

    // ---- evolution ----

    pub fn save_evolution(
        &mut self,
        tournament: i64,
        generations: &[Vec<(TeamId, u64)>],
    ) -> Result<()> {
        let tx = self.conn.transaction()?;
        tx.execute(
            "DELETE FROM evolution_generations WHERE tournament_id = ?1",
            [tournament],
        )?;
        for (g, counts) in generations.iter().enumerate() {
            let map: std::collections::BTreeMap<String, u64> =
                counts.iter().map(|(t, c)| (t.0.to_string(), *c)).collect();
            tx.execute(
                "INSERT INTO evolution_generations (tournament_id, generation, counts) VALUES (?1, ?2, ?3)",
                params![tournament, g as u32, json(&map)],
            )?;
        }
        tx.commit()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests;
