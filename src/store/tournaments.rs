//! The tournaments' tables on [`Store`]: tournaments and their entries,
//! rounds, groups, games with their outcomes and throws, and the
//! Evolution's generations.
//!
//! Not here: teams and strategy versions (`mod.rs`), the mail and
//! organizer's tables (`mail.rs`, `admin.rs`), deciding anything.

use chrono::{DateTime, Utc};
use rusqlite::{params, OptionalExtension};

use super::throws::{
    decode_throws, EncodedThrows, KeptGame, NewGame, THROWS_FORMAT, THROWS_REPLAY,
};
use super::{
    from_json, game_time, json, seed_from_sql, seed_to_sql, timestamp, tournament_row, Entry,
    KeptGameRef, PackedGame, Result, RoundRow, Store, StoreError, StoredGame, Throws,
    TournamentRow, VersionId, TOURNAMENT_COLUMNS,
};

/// A game's throws kept since it was stored for replay, as a read wants them.
enum Kept {
    Decoded(Vec<[i64; 2]>),
    Packed(Vec<u8>),
}
use crate::referee::{Failure, GameRecord};
use crate::seed::SeedKey;
use crate::tournament::{GameKey, ScheduledGame, TeamId};

impl Store {
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
        self.recent
            .borrow_mut()
            .finished((tournament, round, group));
        Ok(())
    }

    /// How many groups round `round` has (without reading their members).
    pub fn group_count(&self, tournament: i64, round: u32) -> Result<u32> {
        Ok(self.conn.query_row(
            "SELECT COUNT(*) FROM groups WHERE tournament_id = ?1 AND round = ?2",
            params![tournament, round],
            |r| r.get(0),
        )?)
    }

    /// Every finished group `(round, group)` of the tournament, in one
    /// query.
    pub fn finished_groups(
        &self,
        tournament: i64,
    ) -> Result<std::collections::BTreeSet<(u32, u32)>> {
        let mut st = self.conn.prepare_cached(
            "SELECT round, number FROM groups WHERE tournament_id = ?1 AND finished_at IS NOT NULL",
        )?;
        let rows = st.query_map([tournament], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    pub fn group_finished(&self, tournament: i64, round: u32, group: u32) -> Result<bool> {
        // Prepared once per connection: asked at every group's end.
        let f: Option<String> = self
            .conn
            .prepare_cached(
                "SELECT finished_at FROM groups WHERE tournament_id = ?1 AND round = ?2 AND number = ?3",
            )?
            .query_row(params![tournament, round, group], |r| r.get(0))?;
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
        let encoded = EncodedThrows::of(&record.throws);
        self.insert_game_at(tournament, game, record, encoded, game_time(now))
    }

    /// [`Store::insert_game`] with the record's throws already encoded
    /// (`encoded`, [`EncodedThrows::of`] `record.throws`: the engine's pool
    /// encodes them on the game's thread) and its time already in the
    /// games' form ([`super::game_time`]): the engine stores the games that
    /// finished together with one time, read once.
    pub fn insert_game_at(
        &self,
        tournament: i64,
        game: &ScheduledGame,
        record: &GameRecord,
        encoded: EncodedThrows,
        finished_at: i64,
    ) -> Result<()> {
        self.insert_games_at(
            tournament,
            vec![NewGame {
                game,
                record,
                encoded,
                finished_at,
            }],
        )
    }

    /// [`Store::insert_game_at`] of each of `games`, in their order, a
    /// few rows to a statement ([`GAMES_PER_INSERT`]: the engine stores
    /// the games that finished together in one transaction, and a
    /// statement's own work, its look-up in the connection's cache, its
    /// start and reset, is shared by the rows it inserts). The same rows
    /// as one statement each: `INSERT OR IGNORE`, in order, so a key stored
    /// before (or twice in `games`) keeps its first record.
    pub fn insert_games_at(&self, tournament: i64, games: Vec<NewGame<'_>>) -> Result<()> {
        let mut games = games.into_iter();
        let mut left = games.len();
        while left > 0 {
            let n = GAMES_PER_INSERT
                .into_iter()
                .find(|&n| n <= left)
                .unwrap_or(1);
            let chunk: Vec<NewGame<'_>> = games.by_ref().take(n).collect();
            left -= n;
            self.insert_game_rows(tournament, chunk)?;
        }
        Ok(())
    }

    /// One statement inserting `games` (`INSERT OR IGNORE`, in order); the
    /// games are kept for their group's readers
    /// ([`Store::with_kept_games_packed`]) when every row was inserted (a row
    /// ignored keeps its first record, so the chunk's records are not all
    /// the stored ones: none is kept, and readers read the store).
    fn insert_game_rows(&self, tournament: i64, games: Vec<NewGame<'_>>) -> Result<()> {
        // Prepared once per connection and size (the sizes are few).
        let mut st = self.conn.prepare_cached(insert_games_sql(games.len()))?;
        let mut rows = Vec::with_capacity(games.len());
        for (i, g) in games.into_iter().enumerate() {
            let NewGame {
                game,
                record,
                encoded,
                finished_at,
            } = g;
            // A game the watchdog ended (a fault of the engine, wall
            // clock) would not replay to the same record: its throws are
            // kept.
            let replayable = !record
                .failures
                .iter()
                .any(|f| matches!(f.kind, crate::referee::FailureKind::WallClock { .. }));
            // The digest was taken of these very bytes when they were
            // encoded. Kept with the throws, so a reader compares digests
            // instead of hashing the throws again.
            let (encoded, digest) = encoded.into_parts();
            let at = i * GAME_COLUMNS;
            let (throws, format): (&[u8], i64) = if replayable {
                (&digest, THROWS_REPLAY)
            } else {
                (&encoded, THROWS_FORMAT)
            };
            st.raw_bind_parameter(at + 1, tournament)?;
            st.raw_bind_parameter(at + 2, game.key.round)?;
            st.raw_bind_parameter(at + 3, game.key.group)?;
            st.raw_bind_parameter(at + 4, game.key.slot)?;
            st.raw_bind_parameter(at + 5, game.attempt)?;
            st.raw_bind_parameter(at + 6, game.players[0].0)?;
            st.raw_bind_parameter(at + 7, game.players[1].0)?;
            st.raw_bind_parameter(at + 8, seed_to_sql(game.seed))?;
            st.raw_bind_parameter(at + 9, record.points[0] as i64)?;
            st.raw_bind_parameter(at + 10, record.points[1] as i64)?;
            st.raw_bind_parameter(at + 11, throws)?;
            // Almost every game has no failure: NULL, no serializer.
            st.raw_bind_parameter(
                at + 12,
                (!record.failures.is_empty()).then(|| json(&record.failures)),
            )?;
            st.raw_bind_parameter(at + 13, finished_at)?;
            st.raw_bind_parameter(at + 14, format)?;
            rows.push((game, record, encoded, digest));
        }
        let inserted = st.raw_execute()?;
        if inserted == rows.len() {
            let mut recent = self.recent.borrow_mut();
            for (game, record, encoded, digest) in rows {
                recent.keep(
                    (tournament, game.key.round, game.key.group),
                    (game.key.slot, game.attempt),
                    KeptGame {
                        digest,
                        encoded,
                        players: game.players,
                        record: GameRecord {
                            seed: record.seed,
                            points: record.points,
                            throws: Vec::new(),
                            failures: record.failures.clone(),
                        },
                    },
                );
            }
        }
        Ok(())
    }

    /// The games `wanted` (`(slot, attempt)`, in this order) of a group
    /// as this connection stored them, their throws in format 1's bytes,
    /// handed to `visit` borrowed from the store's keep, not copied: what
    /// [`Self::games_packed`] reads of them ([`KeptGameRef::to_packed_game`]),
    /// without reading the group's rows back (the DGP protocols of a group
    /// that just finished). `None`, and `visit` not called, unless every
    /// one of them is kept (a game stored by another process, before a
    /// restart, or a group let go): then the caller reads the store.
    /// The keep stays borrowed while `visit` runs: it may read the store,
    /// not store games or mark a group finished (both take the keep
    /// mutably: a panic).
    pub fn with_kept_games_packed<R>(
        &self,
        tournament: i64,
        round: u32,
        group: u32,
        wanted: &[(u32, u32)],
        visit: impl FnOnce(&[KeptGameRef<'_>]) -> R,
    ) -> Option<R> {
        let recent = self.recent.borrow();
        let at = (tournament, round, group);
        let games = wanted
            .iter()
            .map(|&(slot, attempt)| {
                let kept = recent.game(at, (slot, attempt))?;
                Some(KeptGameRef {
                    key: GameKey { round, group, slot },
                    attempt,
                    players: kept.players,
                    record: &kept.record,
                    packed: &kept.encoded,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(visit(&games))
    }

    /// All stored attempts of a group, in slot order, with their throws
    /// where they are stored; a game stored for replay has none and its
    /// [`StoredGame::throws_digest`] (see [`crate::engine::replay`]),
    /// unless this connection stored it lately and still keeps its throws
    /// (until another group finishes after its own; they are checked
    /// against the stored digest).
    pub fn games(&self, tournament: i64, round: u32, group: u32) -> Result<Vec<StoredGame>> {
        Ok(self
            .read_games(tournament, round, group, Throws::Decoded)?
            .into_iter()
            .map(|g| g.game)
            .collect())
    }

    /// [`Self::games`] with the throws left in format 1's bytes where they
    /// are stored so or kept ([`PackedGame::packed`]): not turned into
    /// numbers (the DGP protocols are written from the bytes,
    /// `store::throws::packed_runs`).
    pub fn games_packed(&self, tournament: i64, round: u32, group: u32) -> Result<Vec<PackedGame>> {
        self.read_games(tournament, round, group, Throws::Packed)
    }

    /// All stored attempts of a group without their throws (empty): what
    /// results, rankings and schedules need, at a fraction of the cost.
    pub fn game_outcomes(
        &self,
        tournament: i64,
        round: u32,
        group: u32,
    ) -> Result<Vec<StoredGame>> {
        Ok(self
            .read_games(tournament, round, group, Throws::Left)?
            .into_iter()
            .map(|g| g.game)
            .collect())
    }

    fn read_games(
        &self,
        tournament: i64,
        round: u32,
        group: u32,
        throws_wanted: Throws,
    ) -> Result<Vec<PackedGame>> {
        let throws_column = match throws_wanted {
            Throws::Decoded | Throws::Packed => "throws",
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
                r.get::<_, Option<String>>(8)?,
                r.get::<_, i64>(9)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (slot, attempt, p, q, seed, pp, pq, throws, failures, format) = row?;
            // NULL: no failures (schema 0025; '[]' before it).
            let failures: Vec<Failure> = match failures {
                None => Vec::new(),
                Some(f) => from_json(&f)?,
            };
            let wanted = throws_wanted != Throws::Left;
            let replay = wanted && format == THROWS_REPLAY;
            let mut throws_digest = if replay {
                Some(<[u8; 16]>::try_from(throws.as_slice()).map_err(|_| {
                    StoreError::Corrupt(format!("a game's throws digest of {} bytes", throws.len()))
                })?)
            } else {
                None
            };
            let packing = throws_wanted == Throws::Packed;
            // Stored for replay by this connection lately: its throws are
            // still here (checked against the digest), no replay needed.
            let kept = throws_digest.and_then(|d| {
                let recent = self.recent.borrow();
                let at = ((tournament, round, group), (slot, attempt), &d);
                if packing {
                    recent.packed(at.0, at.1, at.2).map(Kept::Packed)
                } else {
                    recent.throws(at.0, at.1, at.2).map(Kept::Decoded)
                }
            });
            if kept.is_some() {
                throws_digest = None;
            }
            let (decoded, packed) = match kept {
                Some(Kept::Decoded(t)) => (t, None),
                Some(Kept::Packed(b)) => (Vec::new(), Some(b)),
                None if packing && format == THROWS_FORMAT => (Vec::new(), Some(throws)),
                None if wanted && !replay => (decode_throws(&throws, format)?, None),
                None => (Vec::new(), None),
            };
            out.push(PackedGame {
                game: StoredGame {
                    key: GameKey { round, group, slot },
                    attempt,
                    players: [TeamId(p as u32), TeamId(q as u32)],
                    record: GameRecord {
                        seed: seed_from_sql(seed),
                        points: [pp as u64, pq as u64],
                        throws: decoded,
                        failures,
                    },
                    throws_digest,
                },
                packed,
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

/// The columns [`Store::insert_games_at`] binds per game.
const GAME_COLUMNS: usize = 14;

/// The rows one statement of [`Store::insert_games_at`] inserts, largest
/// first (a batch of 37 games: 16, 16, 4, 1): a few sizes, so a few
/// statements in the connection's cache.
const GAMES_PER_INSERT: [usize; 3] = [16, 4, 1];

/// The statement inserting `n` games (one of [`GAMES_PER_INSERT`]), made
/// once per size.
fn insert_games_sql(n: usize) -> &'static str {
    static SQL: std::sync::OnceLock<Vec<(usize, String)>> = std::sync::OnceLock::new();
    let all = SQL.get_or_init(|| {
        GAMES_PER_INSERT
            .into_iter()
            .map(|n| {
                let row = format!("({})", vec!["?"; GAME_COLUMNS].join(", "));
                let sql = format!(
                    "INSERT OR IGNORE INTO games (tournament_id, round, grp, slot, attempt, \
                     player_p, player_q, seed, points_p, points_q, throws, failures, finished_at, \
                     throws_format) VALUES {}",
                    vec![row; n].join(", ")
                );
                (n, sql)
            })
            .collect()
    });
    all.iter()
        .find(|(size, _)| *size == n)
        .map(|(_, sql)| sql.as_str())
        .expect("a size of GAMES_PER_INSERT")
}
