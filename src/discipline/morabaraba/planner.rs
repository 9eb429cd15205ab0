//! Morabaraba's tournament and scoring (Ohjelmointiputka 2014, "Kilpailun
//! pistelasku"): every bot plays every bot in both colours, itself included;
//! a winner is rewarded for speed and a loser punished for slowness.
//!
//! - **Games.** For bots `a` and `b` (also `a = b`) one game with `a` as
//!   player 1 (seat 0, it begins) and `b` as player 2: N² games for N bots
//!   ([`plan`]).
//! - **Points.** "Tasapelistä ei saa pisteitä. Muulloin voittaja saa f(V)
//!   pistettä ja häviäjä menettää 1-f(H) pistettä", f(x) = 2/(1+exp(x²/100))
//!   with V and H the CPU seconds the winner and the loser used in that game
//!   (measured by the referee; waiting for the opponent does not count). A
//!   draw scores 0 for both. In a self-game both sides are the same bot, so
//!   it gets both: f(V) − (1 − f(H)). Points are kept exact to a millionth
//!   ([`Score`]): each game's f is rounded to a millionth first, so sums do
//!   not depend on their order and equal results tie exactly.
//! - **Order.** By points, descending. "Jos tuloksiin jää vielä
//!   tasatilanteita, vertaillaan tasoissa olevien tuloksia toisiaan
//!   vastaan": among bots with equal points, by the points each won in the
//!   games among exactly those bots (both colours; self-games are not games
//!   against each other and are left out), computed once over the whole set
//!   with that score, not recursively. Bots still equal share the place;
//!   within it they are listed by name, then id.
//! - **Counts.** Won, drawn and lost count sides: a self-game counts a win
//!   and a loss (or two draws) for its bot.
//!
//! What it deliberately does not do: run games, measure time, check that
//! bots are deterministic, format the table.
//!
//! **Invariant:** pure: no I/O, no clock, no global RNG.

use crate::tournament::TeamId;
use serde::{Deserialize, Serialize, Serializer};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// One game: `first` is player 1 (seat 0), `second` player 2 (seat 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Pairing {
    pub first: TeamId,
    pub second: TeamId,
}

/// Every game: each bot against each, in both colours, itself included;
/// ordered by the first player, then the second, in the order given.
pub fn plan(teams: &[TeamId]) -> Vec<Pairing> {
    teams
        .iter()
        .flat_map(|&first| teams.iter().map(move |&second| Pairing { first, second }))
        .collect()
}

/// f(x) = 2 / (1 + exp(x² / 100)), x in CPU seconds: 1 at no time, 0.98 at
/// 2 s, practically 0 at 30 s.
pub fn f(seconds: f64) -> f64 {
    2.0 / (1.0 + (seconds * seconds / 100.0).exp())
}

/// Points, exact to a millionth.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Score(i64);

impl Score {
    pub const ZERO: Score = Score(0);

    pub fn from_millionths(m: i64) -> Score {
        Score(m)
    }

    pub fn millionths(self) -> i64 {
        self.0
    }

    pub fn as_f64(self) -> f64 {
        self.0 as f64 / 1e6
    }

    /// f of a CPU time in microseconds, rounded to a millionth.
    fn f_of_micros(micros: u64) -> Score {
        Score((f(micros as f64 / 1e6) * 1e6).round() as i64)
    }
}

impl std::ops::Add for Score {
    type Output = Score;
    fn add(self, rhs: Score) -> Score {
        Score(self.0 + rhs.0)
    }
}

impl std::ops::AddAssign for Score {
    fn add_assign(&mut self, rhs: Score) {
        self.0 += rhs.0;
    }
}

impl fmt::Display for Score {
    /// With three decimals, rounded half away from zero (`0.980`, `-0.020`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.0 < 0 { "-" } else { "" };
        let thousandths = (self.0.unsigned_abs() + 500) / 1000;
        write!(f, "{sign}{}.{:03}", thousandths / 1000, thousandths % 1000)
    }
}

impl Serialize for Score {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_f64(self.as_f64())
    }
}

/// The result of one game, as the referee reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameResult {
    pub pairing: Pairing,
    /// The seat that won (0 = player 1); `None` for a draw.
    pub winner: Option<usize>,
    /// CPU time each seat used in the game, in microseconds.
    pub cpu_micros: [u64; 2],
}

/// The points each seat gets for a game: the winner f(V), the loser
/// −(1 − f(H)), a draw 0 each.
pub fn game_points(result: &GameResult) -> [Score; 2] {
    match result.winner {
        None => [Score::ZERO; 2],
        Some(w) => {
            let l = 1 - w;
            let mut points = [Score::ZERO; 2];
            points[w] = Score::f_of_micros(result.cpu_micros[w]);
            points[l] = Score(Score::f_of_micros(result.cpu_micros[l]).0 - 1_000_000);
            points
        }
    }
}

/// One line of the table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MorabarabaRow {
    /// 1-based; shared by bots equal in points and head-to-head.
    pub place: u32,
    pub team: TeamId,
    pub name: String,
    pub points: Score,
    /// Points won in the games among the bots with the same points; `None`
    /// when no other bot has the same points.
    pub head_to_head: Option<Score>,
    /// Sides played, won, drawn, lost (a self-game is two sides).
    pub sides: u32,
    pub won: u32,
    pub drawn: u32,
    pub lost: u32,
    /// CPU time used in all its games, in microseconds.
    pub cpu_micros: u64,
}

/// The tournament's table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MorabarabaTable {
    pub rows: Vec<MorabarabaRow>,
    /// Whether every planned game has a result.
    pub complete: bool,
}

/// Results that do not fit the tournament: a caller's mistake.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MorabarabaError {
    #[error("a result names team {0}, which is not in the tournament")]
    UnknownTeam(TeamId),
    #[error("the game {first} against {second} has two results")]
    Duplicate { first: TeamId, second: TeamId },
    #[error("a result names seat {0} as the winner; the seats are 0 and 1")]
    NoSuchSeat(usize),
}

/// The table from the results so far (missing games do not count;
/// [`MorabarabaTable::complete`] says whether any are missing). `names`
/// gives a team's name for the listing.
pub fn rank(
    teams: &[TeamId],
    results: &[GameResult],
    names: &dyn Fn(TeamId) -> String,
) -> Result<MorabarabaTable, MorabarabaError> {
    let team_set: BTreeSet<TeamId> = teams.iter().copied().collect();
    let mut seen = BTreeSet::new();
    for r in results {
        for team in [r.pairing.first, r.pairing.second] {
            if !team_set.contains(&team) {
                return Err(MorabarabaError::UnknownTeam(team));
            }
        }
        if let Some(w) = r.winner.filter(|&w| w > 1) {
            return Err(MorabarabaError::NoSuchSeat(w));
        }
        if !seen.insert(r.pairing) {
            return Err(MorabarabaError::Duplicate {
                first: r.pairing.first,
                second: r.pairing.second,
            });
        }
    }
    let complete = seen.len() == team_set.len() * team_set.len();

    let mut rows: BTreeMap<TeamId, MorabarabaRow> = team_set
        .iter()
        .map(|&team| {
            let row = MorabarabaRow {
                place: 0,
                team,
                name: names(team),
                points: Score::ZERO,
                head_to_head: None,
                sides: 0,
                won: 0,
                drawn: 0,
                lost: 0,
                cpu_micros: 0,
            };
            (team, row)
        })
        .collect();
    let points: Vec<[Score; 2]> = results.iter().map(game_points).collect();
    for (r, pts) in results.iter().zip(&points) {
        for seat in 0..2 {
            let team = [r.pairing.first, r.pairing.second][seat];
            let row = rows.get_mut(&team).expect("checked");
            row.points += pts[seat];
            row.sides += 1;
            row.cpu_micros += r.cpu_micros[seat];
            match r.winner {
                None => row.drawn += 1,
                Some(w) if w == seat => row.won += 1,
                Some(_) => row.lost += 1,
            }
        }
    }

    // Head-to-head within each set of bots with equal points.
    let mut by_points: BTreeMap<Score, BTreeSet<TeamId>> = BTreeMap::new();
    for row in rows.values() {
        by_points.entry(row.points).or_default().insert(row.team);
    }
    for tied in by_points.values().filter(|set| set.len() >= 2) {
        for team in tied {
            rows.get_mut(team).expect("ranked").head_to_head = Some(Score::ZERO);
        }
        for (r, pts) in results.iter().zip(&points) {
            let (a, b) = (r.pairing.first, r.pairing.second);
            if a != b && tied.contains(&a) && tied.contains(&b) {
                for (seat, team) in [a, b].into_iter().enumerate() {
                    let h = rows.get_mut(&team).expect("ranked").head_to_head.as_mut();
                    *h.expect("set above") += pts[seat];
                }
            }
        }
    }

    let mut rows: Vec<MorabarabaRow> = rows.into_values().collect();
    let key = |r: &MorabarabaRow| (r.points, r.head_to_head.unwrap_or(Score::ZERO));
    rows.sort_by(|a, b| {
        key(b)
            .cmp(&key(a))
            .then_with(|| a.name.as_bytes().cmp(b.name.as_bytes()))
            .then_with(|| a.team.cmp(&b.team))
    });
    for i in 0..rows.len() {
        rows[i].place = if i > 0 && key(&rows[i]) == key(&rows[i - 1]) {
            rows[i - 1].place
        } else {
            i as u32 + 1
        };
    }
    Ok(MorabarabaTable { rows, complete })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(t: TeamId) -> String {
        ["Zed", "Amy", "Bob", "Cid"][t.0 as usize].to_string()
    }

    fn game(first: u32, second: u32, winner: Option<usize>, secs: [f64; 2]) -> GameResult {
        GameResult {
            pairing: Pairing {
                first: TeamId(first),
                second: TeamId(second),
            },
            winner,
            cpu_micros: secs.map(|s| (s * 1e6) as u64),
        }
    }

    #[test]
    fn f_as_the_seed_describes_it() {
        // "Jos voittaja käyttää 2 sekuntia, pisteitä tulee 0,98, ja jos aikaa
        // kuluu 30 sekuntia, pisteitä ei heru enää käytännössä lainkaan."
        assert_eq!(f(0.0), 1.0);
        assert!((f(2.0) - 0.98).abs() < 0.001, "{}", f(2.0));
        assert!(f(30.0) < 0.001);
        assert_eq!(f(120.0), 2.0 / (1.0 + 144f64.exp()));
        assert!(f(1e6) == 0.0);
        assert_eq!(Score::f_of_micros(2_000_000), Score(980_003));
    }

    #[test]
    fn both_colours_and_self_play() {
        let teams = [TeamId(0), TeamId(1), TeamId(2)];
        let games = plan(&teams);
        assert_eq!(games.len(), 9);
        let set: BTreeSet<Pairing> = games.iter().copied().collect();
        assert_eq!(set.len(), 9);
        for &a in &teams {
            for &b in &teams {
                assert!(set.contains(&Pairing {
                    first: a,
                    second: b
                }));
            }
        }
        assert_eq!(
            games[0],
            Pairing {
                first: TeamId(0),
                second: TeamId(0)
            }
        );
        assert_eq!(
            games[1],
            Pairing {
                first: TeamId(0),
                second: TeamId(1)
            }
        );
    }

    #[test]
    fn the_winner_gets_f_of_its_time_the_loser_loses_one_minus_f() {
        let r = game(0, 1, Some(1), [2.0, 0.0]);
        assert_eq!(
            game_points(&r),
            [Score(980_003 - 1_000_000), Score(1_000_000)]
        );
        let r = game(0, 1, Some(0), [30.0, 30.0]);
        let [w, l] = game_points(&r);
        assert_eq!(w, Score::f_of_micros(30_000_000));
        assert_eq!(l.0, w.0 - 1_000_000);
        assert!(l.as_f64() < -0.999);
        assert_eq!(game_points(&game(0, 1, None, [5.0, 9.0])), [Score::ZERO; 2]);
        assert_eq!(Score(-19_997).to_string(), "-0.020");
        assert_eq!(Score(980_003).to_string(), "0.980");
        assert_eq!(Score(2_500).to_string(), "0.003");
    }

    #[test]
    fn a_table_with_self_games_and_a_head_to_head_tie_break() {
        let teams = [TeamId(0), TeamId(1), TeamId(2)];
        // Zed and Amy beat Bob in both colours; Zed beats Amy as player 1,
        // Amy beats Zed as player 1; all in no time, so the winners get 1
        // and the losers lose 1 − f(0) = 0. Self-games are draws except
        // Bob's, which Bob wins and loses using 1 s on each side.
        let results = vec![
            game(0, 0, None, [0.0, 0.0]),
            game(1, 1, None, [0.0, 0.0]),
            game(2, 2, Some(0), [1.0, 1.0]),
            game(0, 2, Some(0), [0.0, 0.0]),
            game(2, 0, Some(1), [0.0, 0.0]),
            game(1, 2, Some(0), [0.0, 0.0]),
            game(2, 1, Some(1), [0.0, 0.0]),
            game(0, 1, Some(0), [0.0, 0.0]),
            game(1, 0, Some(0), [0.0, 0.0]),
        ];
        let table = rank(&teams, &results, &name).unwrap();
        assert!(table.complete);
        let rows: Vec<(u32, &str, i64, Option<i64>)> = table
            .rows
            .iter()
            .map(|r| {
                (
                    r.place,
                    r.name.as_str(),
                    r.points.0,
                    r.head_to_head.map(|h| h.0),
                )
            })
            .collect();
        // Zed and Amy: 1 + 1 + 1 + 0 = 3 each; head-to-head 1 + 0 each: a
        // shared place, listed by name. Bob: f(1) − (1 − f(1)) from its
        // self-game, nothing from its instant losses.
        let f1 = Score::f_of_micros(1_000_000).0;
        assert_eq!(
            rows,
            [
                (1, "Amy", 3_000_000, Some(1_000_000)),
                (1, "Zed", 3_000_000, Some(1_000_000)),
                (3, "Bob", f1 - (1_000_000 - f1), None),
            ]
        );
        assert_eq!(table.rows[2].points.to_string(), "0.990");
        let bob = &table.rows[2];
        assert_eq!((bob.sides, bob.won, bob.drawn, bob.lost), (6, 1, 0, 5));
        assert_eq!(bob.cpu_micros, 2_000_000);
        let zed = &table.rows[1];
        assert_eq!((zed.sides, zed.won, zed.drawn, zed.lost), (6, 3, 2, 1));

        // Make Zed slow in its win against Amy, and both slow against Bob so
        // that they tie on points again: the head-to-head decides.
        let mut results = results;
        results[7] = game(0, 1, Some(0), [2.0, 0.0]); // Zed wins in 2 s: 0.980003
        results[8] = game(1, 0, Some(0), [2.0, 0.0]); // Amy wins in 2 s: 0.980003
        results[3] = game(0, 2, Some(0), [0.0, 0.0]);
        let table = rank(&teams, &results, &name).unwrap();
        assert_eq!(table.rows[0].points, table.rows[1].points);
        assert_eq!(table.rows[0].place, 1);
        assert_eq!(table.rows[1].place, 1);
        results[8] = game(1, 0, Some(1), [0.0, 2.0]); // now Zed wins both: more points
        let table = rank(&teams, &results, &name).unwrap();
        assert_eq!(table.rows[0].name, "Zed");
        assert_eq!(table.rows[1].place, 2);
    }

    /// Three bots level on points, ordered by what they won among
    /// themselves; a slow loser pays.
    #[test]
    fn head_to_head_orders_equal_points() {
        let teams = [TeamId(0), TeamId(1), TeamId(2), TeamId(3)];
        let results = vec![
            // A cycle, both colours: Zed beats Amy and Amy beats Bob in no
            // time; Bob beats Zed, using 2 s.
            game(0, 1, Some(0), [0.0, 0.0]),
            game(1, 0, Some(1), [0.0, 0.0]),
            game(1, 2, Some(0), [0.0, 0.0]),
            game(2, 1, Some(1), [0.0, 0.0]),
            game(2, 0, Some(0), [2.0, 0.0]),
            game(0, 2, Some(1), [0.0, 2.0]),
            // Everyone beats Cid, Zed and Amy using 2 s, Bob in no time;
            // Cid loses slowly to Bob.
            game(0, 3, Some(0), [2.0, 0.0]),
            game(3, 0, Some(1), [0.0, 2.0]),
            game(1, 3, Some(0), [2.0, 0.0]),
            game(3, 1, Some(1), [0.0, 2.0]),
            game(2, 3, Some(0), [0.0, 30.0]),
            game(3, 2, Some(1), [30.0, 0.0]),
        ];
        let table = rank(&teams, &results, &name).unwrap();
        assert!(!table.complete, "the self-games are missing");
        let rows: Vec<(&str, u32, Score, Option<Score>)> = table
            .rows
            .iter()
            .map(|r| (r.name.as_str(), r.place, r.points, r.head_to_head))
            .collect();
        let w2 = Score::f_of_micros(2_000_000);
        // Each of the three: two instant wins and two 2-s wins.
        let total = Score(2_000_000) + w2 + w2;
        // Among themselves Zed and Amy won 2 each, Bob 2 × f(2).
        let lost_slowly = Score(Score::f_of_micros(30_000_000).0 - 1_000_000);
        assert_eq!(
            rows,
            [
                ("Amy", 1, total, Some(Score(2_000_000))),
                ("Zed", 1, total, Some(Score(2_000_000))),
                ("Bob", 3, total, Some(w2 + w2)),
                ("Cid", 4, lost_slowly + lost_slowly, None),
            ]
        );
    }

    #[test]
    fn results_that_do_not_fit_are_refused() {
        let teams = [TeamId(0), TeamId(1)];
        assert_eq!(
            rank(&teams, &[game(0, 2, None, [0.0; 2])], &name),
            Err(MorabarabaError::UnknownTeam(TeamId(2)))
        );
        assert_eq!(
            rank(&teams, &[game(0, 1, Some(2), [0.0; 2])], &name),
            Err(MorabarabaError::NoSuchSeat(2))
        );
        assert_eq!(
            rank(
                &teams,
                &[game(0, 1, None, [0.0; 2]), game(0, 1, Some(0), [0.0; 2])],
                &name
            ),
            Err(MorabarabaError::Duplicate {
                first: TeamId(0),
                second: TeamId(1)
            })
        );
    }
}
