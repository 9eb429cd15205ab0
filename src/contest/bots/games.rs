//! A bot contest's stored games as the site and the mails read them:
//! [`StoredGame`] (key, seats, pairing, setup, what was played), streamed
//! ordered by pairing ([`for_each_game`]), and [`Tally`], which sums each
//! bot's games per opponent (or island) by the table's own rules into
//! `crate::discipline::table::OpponentRow`s.
//!
//! What it deliberately does not do: play or store games
//! ([`super::jobs`]) or format the rows (each discipline's `tables.rs`).

use super::model::*;
use std::collections::BTreeMap;

use rusqlite::params;

use crate::config::Config;
use crate::discipline::flooding::planner::{self as flooding, FloodKey};
use crate::discipline::flooding::rules::Island;
use crate::discipline::footsteps::planner as footsteps;
use crate::discipline::morabaraba::planner as morabaraba;
use crate::discipline::play::{Played, Setup};
use crate::discipline::table::OpponentRow;
use crate::discipline::transcript;
use crate::discipline::ultimatum::planner as ultimatum;
use crate::discipline::Discipline;
use crate::store::Store;
use crate::tournament::TeamId;

/// A stored game as its page, its bots' pages and the mails show it.
#[derive(Debug, Clone)]
pub struct StoredGame {
    /// The planner's key (JSON): the game's identity in its contest.
    pub key: String,
    /// Its teams in seat order.
    pub seats: Vec<TeamId>,
    /// The page it is listed on (`LO-HI`, or `TEAM@ISLAND`).
    pub pairing: String,
    /// The game and its parameters (the flooding island's seed included).
    pub setup: Setup,
    /// The island's name (flooding), else empty.
    pub island_name: String,
    pub played: Played,
    /// What the results table counts of it: the planner's result (JSON).
    pub result: String,
    /// The moves form, for the games that keep their transcript.
    pub moves: Option<transcript::Moves>,
}

impl StoredGame {
    /// The full transcript, replayed from the moves (kept games only).
    pub fn transcript(&self) -> Option<Vec<crate::game::lines::Exchange>> {
        self.moves
            .as_ref()
            .map(|m| crate::discipline::play::expand(&self.setup, m))
    }

    /// A short name for files and anchors, from the key: only letters,
    /// digits and dashes.
    pub fn slug(&self) -> String {
        slug(&self.key)
    }
}

/// A key as a file name: letters and digits kept, runs of anything else one
/// dash.
pub fn slug(key: &str) -> String {
    let mut s = String::new();
    for c in key.chars() {
        if c.is_ascii_alphanumeric() {
            s.push(c);
        } else if !s.ends_with('-') && !s.is_empty() {
            s.push('-');
        }
    }
    s.trim_end_matches('-').to_string()
}

/// A game's teams in seat order, from its key (for games stored before
/// seats were, and to check the stored ones).
pub(super) fn seats_of_key(c: &BotContest, key: &str) -> Result<Vec<TeamId>> {
    use crate::discipline::{flooding, footsteps, morabaraba, ultimatum};
    let bad = |e: serde_json::Error| BotContestError::Corrupt(format!("game key {key}: {e}"));
    match c.discipline {
        Discipline::Ultimatum => ultimatum::keys::seats(key, &team_ids(c)),
        Discipline::Flooding => flooding::keys::seats(key),
        Discipline::Footsteps => footsteps::keys::seats(key),
        _ => morabaraba::keys::seats(key),
    }
    .map_err(bad)
}

/// The setup a stored game was played with (the contest's parameters; the
/// flooding island's island and seed from the key).
pub(super) fn setup_of_key(
    c: &BotContest,
    config: &Config,
    islands: &[Island],
    key: &str,
) -> Result<(Setup, String)> {
    Ok(match c.discipline {
        Discipline::Ultimatum => (Setup::Ultimatum(config.ultimatum.params()), String::new()),
        Discipline::Flooding => {
            let k: FloodKey = serde_json::from_str(key)
                .map_err(|e| BotContestError::Corrupt(format!("game key {key}: {e}")))?;
            let island = islands
                .get(k.island as usize)
                .ok_or_else(|| BotContestError::Corrupt(format!("no island {}", k.island)))?;
            (
                Setup::Flooding {
                    island: island.clone(),
                    params: config.flooding.params(),
                    seed: flooding::game_seed(c.seed, flooding::IslandId(k.island), k.run),
                },
                c.islands[k.island as usize].0.clone(),
            )
        }
        Discipline::Footsteps => (Setup::Footsteps(config.footsteps.params()), String::new()),
        _ => (Setup::Morabaraba, String::new()),
    })
}

/// Gives every stored game its seats and pairing where it has none (games
/// stored before schema 0015).
pub(super) fn fill_pairings(store: &Store, c: &BotContest, config: &Config) -> Result<()> {
    let keys: Vec<String> = {
        let mut st = store
            .conn()
            .prepare("SELECT game_key FROM bot_games WHERE contest_id = ?1 AND pairing IS NULL")?;
        let rows = st.query_map([c.id], |r| r.get(0))?;
        rows.collect::<std::result::Result<_, _>>()?
    };
    if keys.is_empty() {
        return Ok(());
    }
    let islands = parse_islands(c)?;
    for key in keys {
        let seats = seats_of_key(c, &key)?;
        let (setup, _) = setup_of_key(c, config, &islands, &key)?;
        let pairing = pairing_of(&setup, &key, &seats);
        let seats: Vec<u32> = seats.iter().map(|t| t.0).collect();
        store.conn().execute(
            "UPDATE bot_games SET seats = ?3, pairing = ?4 WHERE contest_id = ?1 AND game_key = ?2",
            params![
                c.id,
                key,
                serde_json::to_string(&seats).expect("json"),
                pairing
            ],
        )?;
    }
    Ok(())
}

/// The order of a pairing's games: by the numbers of their keys (run 2
/// before run 10), then by the key.
pub(super) const GAME_ORDER: &str = "json_extract(game_key, '$.round'), \
     json_extract(game_key, '$.repetition'), json_extract(game_key, '$.island'), \
     json_extract(game_key, '$.run'), json_extract(game_key, '$.game'), \
     json_extract(game_key, '$.slot'), game_key";

/// Calls `each` with every stored game of the contest, ordered by pairing
/// and then by the numbers of its key (round, repetition, run, game, slot:
/// run 2 before run 10), one at a time (memory independent of the number
/// of games).
pub fn for_each_game(
    store: &Store,
    c: &BotContest,
    config: &Config,
    mut each: impl FnMut(StoredGame) -> Result<()>,
) -> Result<()> {
    fill_pairings(store, c, config)?;
    let islands = parse_islands(c)?;
    let mut st = store.conn().prepare(&format!(
        "SELECT game_key, record, seats, pairing, moves, result FROM bot_games \
             WHERE contest_id = ?1 ORDER BY pairing, {GAME_ORDER}"
    ))?;
    let mut rows = st.query([c.id])?;
    while let Some(r) = rows.next()? {
        let key: String = r.get(0)?;
        let record: String = r.get(1)?;
        let seats: Option<String> = r.get(2)?;
        let pairing: Option<String> = r.get(3)?;
        let moves: Option<String> = r.get(4)?;
        let result: String = r.get(5)?;
        let seats: Vec<TeamId> = match seats {
            Some(s) => parse::<Vec<u32>>(&s)?.into_iter().map(TeamId).collect(),
            None => seats_of_key(c, &key)?,
        };
        let (setup, island_name) = setup_of_key(c, config, &islands, &key)?;
        let moves = match moves {
            Some(m) => Some(
                transcript::parse_moves(&m, setup.seats())
                    .map_err(|e| BotContestError::Corrupt(format!("moves of {key}: {e}")))?,
            ),
            None => None,
        };
        each(StoredGame {
            pairing: pairing.unwrap_or_else(|| pairing_of(&setup, &key, &seats)),
            played: parse(&record)?,
            result,
            key,
            seats,
            setup,
            island_name,
            moves,
        })?;
    }
    Ok(())
}

/// The name of every entry by team.
pub fn entry_names(c: &BotContest) -> BTreeMap<TeamId, String> {
    c.entries.iter().map(|e| (e.team, e.name.clone())).collect()
}

/// A team's name as rows and mails show it (`team N` for a team that is no
/// entry).
pub fn name_in(names: &BTreeMap<TeamId, String>, t: &TeamId) -> String {
    names
        .get(t)
        .cloned()
        .unwrap_or_else(|| format!("team {}", t.0))
}

/// What the table counts of a stored game: its planner result.
pub(super) enum Counted {
    Ultimatum(ultimatum::PlayedMatch),
    Flooding(flooding::RunResult),
    Footsteps(footsteps::PlayedGame),
    Morabaraba(morabaraba::GameResult),
    Nothing,
}

pub(super) fn counted(g: &StoredGame) -> Counted {
    let r = g.result.as_str();
    let parsed = match &g.setup {
        Setup::Ultimatum(_) => serde_json::from_str(r).map(Counted::Ultimatum),
        Setup::Flooding { .. } => serde_json::from_str(r).map(Counted::Flooding),
        Setup::Footsteps(_) => serde_json::from_str(r).map(Counted::Footsteps),
        Setup::Morabaraba => serde_json::from_str(r).map(Counted::Morabaraba),
    };
    parsed.unwrap_or(Counted::Nothing)
}

/// Per-opponent rows of every bot, filled one game at a time (memory:
/// one row per bot and pairing).
#[derive(Debug, Default)]
pub struct Tally {
    rows: BTreeMap<(TeamId, String), OpponentRow>,
}

impl Tally {
    pub fn add(&mut self, g: &StoredGame, name_of: &dyn Fn(&TeamId) -> String) {
        let counted = counted(g);
        for (seat, team) in g.seats.iter().enumerate() {
            let opponent = g.seats.get(1 - seat.min(1)).filter(|_| g.seats.len() == 2);
            let row = self
                .rows
                .entry((*team, g.pairing.clone()))
                .or_insert_with(|| OpponentRow {
                    pairing: g.pairing.clone(),
                    opponent: opponent.copied(),
                    against: match &g.setup {
                        Setup::Flooding { .. } => format!("island {}", g.island_name),
                        _ => opponent.map(name_of).unwrap_or_default(),
                    },
                    itself: opponent == Some(team),
                    ..Default::default()
                });
            row.failures += g.played.failures.iter().filter(|f| f.bot == seat).count() as u64;
            match &counted {
                Counted::Morabaraba(r) => {
                    let points = morabaraba::game_points(r);
                    row.games += 1;
                    match r.winner {
                        None => row.drawn += 1,
                        Some(w) if w == seat => row.won += 1,
                        Some(_) => row.lost += 1,
                    }
                    row.points += points[seat].millionths();
                    row.cpu_micros += r.cpu_micros[seat];
                }
                Counted::Ultimatum(m) => {
                    let other = 1 - seat.min(1);
                    row.games += 1;
                    row.points += m.points[seat] as i64;
                    row.minus += m.points[other];
                    let slot = row.slots.entry(m.key.slot).or_default();
                    slot.0[0] += m.points[seat];
                    slot.0[1] += m.points[other];
                    match m.forfeited_by {
                        Some(f) if f == seat => slot.1[0] += 1,
                        Some(_) => slot.1[1] += 1,
                        None => {}
                    }
                }
                Counted::Footsteps(p) if p.key.round == 0 => {
                    row.games += 1;
                    match p.winner {
                        None => row.drawn += 1,
                        Some(w) if w == *team => row.won += 1,
                        Some(_) => row.lost += 1,
                    }
                }
                Counted::Footsteps(p) => {
                    row.replay_games += 1;
                    if p.winner == Some(*team) {
                        row.replay_won += 1;
                    }
                }
                Counted::Flooding(r) => {
                    row.games += 1;
                    row.rounds += u64::from(r.rounds);
                }
                Counted::Nothing => row.games += 1,
            }
        }
    }

    /// The rows of `team`, by pairing (the ultimatum game's orders decided).
    pub fn rows_of(&self, team: TeamId) -> Vec<OpponentRow> {
        self.rows
            .range((team, String::new())..)
            .take_while(|((t, _), _)| *t == team)
            .map(|(_, r)| {
                let mut r = r.clone();
                for (points, forfeits) in r.slots.values() {
                    match ultimatum::slot_result(*points, *forfeits) {
                        std::cmp::Ordering::Greater => r.won += 1,
                        std::cmp::Ordering::Equal => r.drawn += 1,
                        std::cmp::Ordering::Less => r.lost += 1,
                    }
                }
                r
            })
            .collect()
    }
}
