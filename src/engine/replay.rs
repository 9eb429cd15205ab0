//! A game's throws, when they are wanted, by playing it again.
//!
//! A game is a function of its two programs, its seed, the tournament's
//! key and the referee's configuration, and replays in well under a
//! millisecond; so the store keeps only its outcome and a digest of its
//! throws ([`crate::store::THROWS_REPLAY`]), not the 2–4 kB of throws
//! themselves. The readers that need throws (the DGP protocols, the
//! site's game pages) get them here: every game is played again with the
//! stored programs and checked against what was stored (points, failures
//! and the digest), so a replay can never show a participant another game
//! than the one that counted. A game the same store stored lately comes
//! with its throws already (kept in memory until the group after its own
//! finishes, checked against the same digest: `crate::store`) and is not
//! played again; the DGP protocols of a group that just finished take its
//! games so kept without reading the group back
//! (`Store::with_kept_games_packed`), and come here only for a group stored
//! before a restart.
//!
//! Reads the store; writes nothing.

use std::collections::HashMap;

use super::pool::Program;
use super::run::TournamentConfig;
use super::EngineError;
use crate::referee::{GameSeeds, Referee};
use crate::seed::SeedKey;
use crate::store::{throws_digest, Store, StoredGame, VersionId};
use crate::tournament::TeamId;

/// Replays the games of one tournament.
pub struct Replayer {
    tournament: i64,
    referee: Referee,
    /// The game's rules the protocols show (read with the tournament's
    /// configuration once, not per group).
    params: crate::game::Params,
    key: SeedKey,
    versions: HashMap<TeamId, VersionId>,
    /// The programs of the group being replayed (let go at the next group:
    /// memory stays independent of the number of teams).
    programs: HashMap<TeamId, Program>,
}

impl Replayer {
    pub fn new(store: &Store, tournament: i64) -> Result<Replayer, EngineError> {
        let row = store.tournament(tournament)?;
        let config: TournamentConfig = serde_json::from_str(&row.config)
            .map_err(|e| EngineError::Mismatch(format!("tournament config: {e}")))?;
        let versions = store
            .entries(tournament)?
            .into_iter()
            .map(|e| (e.team, e.version))
            .collect();
        Ok(Replayer {
            tournament,
            params: config.referee.params,
            referee: Referee::new(config.referee),
            key: row.key,
            versions,
            programs: HashMap::new(),
        })
    }

    /// The tournament's rules of the game (its referee's parameters).
    pub fn params(&self) -> crate::game::Params {
        self.params
    }

    /// Every stored attempt of a group with its throws: read, or replayed
    /// and checked.
    pub fn group_games(
        &mut self,
        store: &Store,
        round: u32,
        group: u32,
    ) -> Result<Vec<StoredGame>, EngineError> {
        let mut games = store.games(self.tournament, round, group)?;
        self.programs.clear();
        for g in &mut games {
            self.fill(store, g)?;
        }
        Ok(games)
    }

    /// [`Self::group_games`] with the throws left in format 1's bytes
    /// where they are at hand ([`crate::store::PackedGame`]); the others
    /// read, or replayed and checked, as there.
    pub fn group_games_packed(
        &mut self,
        store: &Store,
        round: u32,
        group: u32,
    ) -> Result<Vec<crate::store::PackedGame>, EngineError> {
        let mut games = store.games_packed(self.tournament, round, group)?;
        self.programs.clear();
        for g in games.iter_mut().filter(|g| g.packed.is_none()) {
            self.fill(store, &mut g.game)?;
        }
        Ok(games)
    }

    /// Replays `game` if it was stored for replay, and checks it.
    pub fn fill(&mut self, store: &Store, game: &mut StoredGame) -> Result<(), EngineError> {
        let Some(digest) = game.throws_digest else {
            return Ok(());
        };
        for team in game.players {
            if !self.programs.contains_key(&team) {
                let version = *self.versions.get(&team).ok_or_else(|| {
                    EngineError::Mismatch(format!("team {} is not an entry", team.0))
                })?;
                let program = Program::load(store.version_binary(version)?)?;
                self.programs.insert(team, program);
            }
        }
        let players = [
            self.programs[&game.players[0]].strategy()?,
            self.programs[&game.players[1]].strategy()?,
        ];
        let seeds = GameSeeds::new(&self.key, game.record.seed);
        let replayed = self
            .referee
            .play_loaded(players, seeds)
            .map_err(|e| EngineError::Invalid(format!("replaying a game: {e}")))?;
        if replayed.points != game.record.points
            || replayed.failures != game.record.failures
            || throws_digest(&replayed.throws) != digest
        {
            return Err(EngineError::Mismatch(format!(
                "round {}, group {}, slot {} (attempt {}) does not replay to its stored \
                 record (were its programs changed?)",
                game.key.round, game.key.group, game.key.slot, game.attempt
            )));
        }
        game.record.throws = replayed.throws;
        game.throws_digest = None;
        Ok(())
    }
}
