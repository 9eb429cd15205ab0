//! A bot contest's stored games as the site and the mails read them:
//! [`StoredGame`] (key, seats, pairing, setup, what was played), streamed
//! ordered by pairing ([`for_each_game`]), and [`Tally`], which sums each
//! bot's games per opponent (or material) by its discipline's rules
//! (`BotDiscipline::count`) into `crate::discipline::table::OpponentRow`s.
//!
//! What it deliberately does not do: play or store games
//! (`crate::contest::bots`) or format the rows (each discipline's
//! `tables.rs`).

use super::budget::MovesNotKept;
use super::model::*;
use std::collections::BTreeMap;

use rusqlite::params;

use crate::config::Config;
use crate::discipline::play::{Played, Setup};
use crate::discipline::seam::{plain_key_field, BotDiscipline, SetupOfKey};
use crate::discipline::table::OpponentRow;
use crate::discipline::transcript;
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
    /// The name of the material it was played on (the flooding island's
    /// island), else empty.
    pub subject: String,
    pub played: Played,
    /// What the results table counts of it: the planner's result (JSON).
    pub result: String,
    /// The moves form, for the games that keep their transcript.
    pub moves: Option<transcript::Moves>,
    /// Why a game that keeps its transcript has no moves: its team's lines
    /// were more than the transcript budget lets a game hold.
    pub moves_not_kept: Option<MovesNotKept>,
}

/// The record's field beside what was played that says why a kept game's
/// moves were not kept ([`MovesNotKept`]).
pub const NOT_KEPT_FIELD: &str = "moves_not_kept";

/// The note of a stored record, if it has one (a record is looked into
/// only when its text names the field).
fn not_kept_of(record: &str) -> Option<MovesNotKept> {
    #[derive(serde::Deserialize)]
    struct Note {
        moves_not_kept: Option<MovesNotKept>,
    }
    if !record.contains(NOT_KEPT_FIELD) {
        return None;
    }
    serde_json::from_str::<Note>(record)
        .ok()
        .and_then(|n| n.moves_not_kept)
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
pub(crate) fn seats_of_key(c: &BotContest, key: &str) -> Result<Vec<TeamId>> {
    seam_of(c)?
        .key_seats(key, &team_ids(c))
        .map_err(|e| BotContestError::Corrupt(format!("game key {key}: {e}")))
}

/// The setup a stored game was played with (the contest's parameters; the
/// flooding island's island and seed from the key), and the name of the
/// material it was played on.
/// What makes a stored game's setup from its key, made once per pass.
pub(crate) fn setups_of_keys(c: &BotContest, config: &Config) -> Result<SetupOfKey> {
    let seam = seam_of(c)?;
    with_view(c, config, |view| seam.stored_setups(view)).map_err(BotContestError::Corrupt)
}

/// Gives every stored game its seats and pairing where it has none (games
/// stored before schema 0015).
pub(crate) fn fill_pairings(store: &Store, c: &BotContest, _config: &Config) -> Result<()> {
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
    let seam = seam_of(c)?;
    for key in keys {
        let seats = seats_of_key(c, &key)?;
        let pairing = seam.pairing(&key, &seats);
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

/// The pairings of the contest with at least one game that kept its moves
/// (a game page to write): what the bot site's budget is shared by. The
/// stored games alone decide it, never the order they were stored in.
pub fn pairings_with_kept_games(store: &Store, c: &BotContest, config: &Config) -> Result<u64> {
    fill_pairings(store, c, config)?;
    let n: i64 = store.conn().query_row(
        "SELECT COUNT(DISTINCT pairing) FROM bot_games \
         WHERE contest_id = ?1 AND moves IS NOT NULL",
        [c.id],
        |r| r.get(0),
    )?;
    Ok(n.max(0) as u64)
}

/// The order of a pairing's games (an SQL `ORDER BY` list): by the numeric
/// fields of their keys in the order the discipline names them
/// ([`BotDiscipline::key_order`]: run 2 before run 10), then by the key.
/// A field must be a plain name (ASCII letters, digits, `_`, not first a
/// digit), so that nothing from a seam reaches the SQL unchecked.
pub(crate) fn game_order(fields: &[&str]) -> std::result::Result<String, String> {
    let mut order = String::new();
    for field in fields {
        if !plain_key_field(field) {
            return Err(format!(
                "the key field `{}` of its game order is no plain name",
                field.escape_debug()
            ));
        }
        order.push_str(&format!("json_extract(game_key, '$.{field}'), "));
    }
    order.push_str("game_key");
    Ok(order)
}

/// Calls `each` with every stored game of the contest, ordered by pairing
/// and then by the numbers of its key ([`game_order`]: run 2 before run
/// 10), one at a time (memory independent of the number
/// of games).
pub fn for_each_game(
    store: &Store,
    c: &BotContest,
    config: &Config,
    mut each: impl FnMut(StoredGame) -> Result<()>,
) -> Result<()> {
    fill_pairings(store, c, config)?;
    let seam = seam_of(c)?;
    let setup_of = setups_of_keys(c, config)?;
    let order = game_order(seam.key_order())
        .map_err(|e| BotContestError::Plan(format!("{}: {e}", c.discipline)))?;
    let mut st = store.conn().prepare(&format!(
        "SELECT game_key, record, seats, pairing, moves, result FROM bot_games \
             WHERE contest_id = ?1 ORDER BY pairing, {order}"
    ))?;
    let mut rows = st.query([c.id])?;
    while let Some(r) = rows.next()? {
        let key: String = r.get(0)?;
        let record: String = r.get(1)?;
        let seats: Option<String> = r.get(2)?;
        let pairing: Option<String> = r.get(3)?;
        let moves = moves_text(r.get_ref(4)?)
            .map_err(|e| BotContestError::Corrupt(format!("moves of {key}: {e}")))?;
        let result: String = r.get(5)?;
        let seats: Vec<TeamId> = match seats {
            Some(s) => parse::<Vec<u32>>(&s)?.into_iter().map(TeamId).collect(),
            None => seats_of_key(c, &key)?,
        };
        let (setup, subject) = setup_of(&key).map_err(BotContestError::Corrupt)?;
        let moves = match moves {
            Some(m) => Some(
                transcript::parse_moves(&m, setup.seats())
                    .map_err(|e| BotContestError::Corrupt(format!("moves of {key}: {e}")))?,
            ),
            None => None,
        };
        each(StoredGame {
            pairing: pairing.unwrap_or_else(|| seam.pairing(&key, &seats)),
            played: parse(&record)?,
            moves_not_kept: not_kept_of(&record),
            result,
            key,
            seats,
            setup,
            subject,
            moves,
        })?;
    }
    Ok(())
}

/// The moves body a row's `moves` holds: packed (a BLOB, stored since
/// schema 0023: [`transcript::unpack_moves`], bounded), the text itself (a
/// row stored before, or a body too short to gain from packing), or none
/// (a game that keeps no transcript).
pub fn moves_text(
    stored: rusqlite::types::ValueRef<'_>,
) -> std::result::Result<Option<String>, String> {
    use rusqlite::types::ValueRef;
    match stored {
        ValueRef::Null => Ok(None),
        ValueRef::Blob(b) => transcript::unpack_moves(b)
            .map(Some)
            .map_err(|e| e.to_string()),
        ValueRef::Text(t) => std::str::from_utf8(t)
            .map(|t| Some(t.to_string()))
            .map_err(|_| "stored text that is no UTF-8".to_string()),
        _ => Err("neither text nor packed bytes".into()),
    }
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

/// Per-opponent rows of every bot, filled one game at a time (memory:
/// one row per bot and pairing), each game counted by its discipline's
/// rules ([`BotDiscipline::count`]).
pub struct Tally {
    seam: &'static dyn BotDiscipline,
    rows: BTreeMap<(TeamId, String), OpponentRow>,
}

impl Tally {
    pub fn new(seam: &'static dyn BotDiscipline) -> Tally {
        Tally {
            seam,
            rows: BTreeMap::new(),
        }
    }

    pub fn add(&mut self, g: &StoredGame, name_of: &dyn Fn(&TeamId) -> String) {
        for (seat, team) in g.seats.iter().enumerate() {
            let opponent = g.seats.get(1 - seat.min(1)).filter(|_| g.seats.len() == 2);
            let row = self
                .rows
                .entry((*team, g.pairing.clone()))
                .or_insert_with(|| OpponentRow {
                    pairing: g.pairing.clone(),
                    opponent: opponent.copied(),
                    against: match opponent {
                        Some(o) => name_of(o),
                        None => self.seam.against(&g.subject),
                    },
                    itself: opponent == Some(team),
                    ..Default::default()
                });
            row.failures += g.played.failures.iter().filter(|f| f.bot == seat).count() as u64;
            self.seam.count(row, &g.result, seat, *team);
        }
    }

    /// The discipline whose games it counts.
    pub fn seam(&self) -> &'static dyn BotDiscipline {
        self.seam
    }

    /// The rows of `team`, by pairing (each completed by its discipline:
    /// the ultimatum game's orders decided).
    pub fn rows_of(&self, team: TeamId) -> Vec<OpponentRow> {
        self.rows
            .range((team, String::new())..)
            .take_while(|((t, _), _)| *t == team)
            .map(|(_, r)| {
                let mut r = r.clone();
                self.seam.finish_row(&mut r);
                r
            })
            .collect()
    }
}
