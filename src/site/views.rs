//! The views of the KNOBELN site's bigger pages, built from the results
//! for their templates: the final crosstable's payoff table, the Evolution
//! page, a team's page.
//!
//! Not here: reading the store or writing files ([`super::generate_from`]).

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};

use rusqlite::OptionalExtension;

use crate::engine::results::{GameResult, GameStatus, GroupResult, Results, RoundResult};
use crate::store::{Store, StoreError};
use crate::tables::facts::{evolution_facts, points_text};
use crate::tables::knobeln::{disqualifications, game_label};

use super::model::{
    evolution_rows, game_page, has_page, round_page, Facts, SiteError, SiteOptions, TEAM_PAGES_NOTE,
};
use super::pages::{
    EvolutionLabels, EvolutionPlacedView, EvolutionRow, EvolutionView, FailureRow, Frame,
    OpponentRow, PlacingRow, TeamGameRow, TeamRef, TeamView,
};
use super::plots;

/// Average points per counted game of each row team against each column
/// team (a self-game counts the mean of both sides).
pub(super) fn payoff_table<'a>(
    names: &[String],
    games: impl Iterator<Item = &'a GameResult>,
) -> plots::Payoff {
    let index: HashMap<&str, usize> = names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), i))
        .collect();
    let n = names.len();
    let mut sum = vec![vec![(0.0f64, 0usize); n]; n];
    for g in games.filter(|g| g.counted()) {
        let (Some(&i), Some(&j)) = (index.get(&*g.players[0]), index.get(&*g.players[1])) else {
            continue;
        };
        if i == j {
            sum[i][i].0 += (g.points[0] + g.points[1]) as f64 / 2.0;
            sum[i][i].1 += 1;
        } else {
            sum[i][j].0 += g.points[0] as f64;
            sum[i][j].1 += 1;
            sum[j][i].0 += g.points[1] as f64;
            sum[j][i].1 += 1;
        }
    }
    sum.into_iter()
        .map(|row| {
            row.into_iter()
                .map(|(s, c)| (c > 0).then(|| s / c as f64))
                .collect()
        })
        .collect()
}

pub(super) fn evolution_view(
    frame: Frame,
    res: &Results,
    facts: &Facts<'_>,
    svg: Option<String>,
) -> EvolutionView {
    let Some(evo) = &res.evolution else {
        return EvolutionView {
            frame,
            svg: None,
            end: None,
            population: 0,
            exemplars: 0,
            generations: 0,
            labels: EvolutionLabels::default(),
            ranking: vec![],
            unranked: vec![],
            table_head: vec![],
            table: vec![],
        };
    };
    let n = evo.generations.len();
    // At most 12 generations in the table: the first, the last, and evenly between.
    let sampled: Vec<usize> = if n <= 12 {
        (0..n).collect()
    } else {
        let mut v: Vec<usize> = (0..12).map(|k| k * (n - 1) / 11).collect();
        v.dedup();
        v
    };
    let mut order: Vec<&String> = evo.ranking.iter().map(|e| &e.team).collect();
    order.extend(evo.unranked.iter());
    let f = evolution_facts(evo);
    let (ranking, labels) = evolution_rows(&f, &|t| facts.team(t));
    EvolutionView {
        frame,
        svg,
        end: Some(f.end.clone()),
        population: evo.population,
        exemplars: evo.exemplars_per_strategy,
        generations: f.computed,
        labels,
        ranking,
        unranked: evo.unranked.iter().map(|t| facts.team(t)).collect(),
        table_head: sampled.iter().map(|g| format!("gen. {g}")).collect(),
        table: order
            .iter()
            .enumerate()
            .map(|(i, name)| EvolutionRow {
                band: if i < plots::EVOLUTION_LABELLED {
                    (i + 1).to_string()
                } else {
                    "others".to_string()
                },
                team: facts.team(name),
                counts: sampled
                    .iter()
                    .map(|&g| evo.generations[g].counts.get(*name).copied().unwrap_or(0))
                    .collect(),
            })
            .collect(),
    }
}

/// A group's members and, for each, the games it played in (in the
/// group's order), on which side and against which member: a member's
/// page looks its games up instead of scanning the group's games, and
/// compares no names. Each member's link is kept with the index (looked
/// up once when the group is indexed): a page names its opponents from
/// them, not by looking each opponent's name up again (a SipHash of a
/// name a row, 41 rows a page, every member's page at each write).
#[derive(Debug)]
pub(super) struct GroupIndex {
    games: usize,
    of: HashMap<String, Vec<Played>>,
    /// The members' links, in the order of their first place among the
    /// group's members ([`Played::opponent`] counts in it).
    links: Vec<TeamRef>,
}

/// A game a member played in: its index among the group's games and the
/// member's side (packed in one number: the index times four, plus the
/// side), and its opponent's place among the group's links
/// ([`NOT_A_MEMBER`] for a player not in the group). Eight bytes, as
/// before the opponent was kept.
#[derive(Debug, Clone, Copy)]
struct Played {
    game_side: u32,
    opponent: u32,
}

/// [`Played::opponent`] of a player who is not one of the group's members
/// (looked up by name, as before the links were kept).
const NOT_A_MEMBER: u32 = u32::MAX;

impl Played {
    fn new(game: usize, side: Side, opponent: u32) -> Self {
        // A group has at most a few thousand games: far below 2^30.
        let game = u32::try_from(game)
            .ok()
            .filter(|&g| g < 1 << 30)
            .expect("a group's games are fewer than 2^30");
        Played {
            game_side: game << 2 | side as u32,
            opponent,
        }
    }

    /// The game's index among the group's games.
    fn game(self) -> usize {
        (self.game_side >> 2) as usize
    }

    /// The member's side in the game.
    fn side(self) -> Side {
        match self.game_side & 3 {
            0 => Side::P,
            1 => Side::Q,
            _ => Side::Both,
        }
    }
}

/// A member's side in a game.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    P = 0,
    Q = 1,
    /// A self-game: the member played both sides.
    Both = 2,
}

impl GroupIndex {
    /// The index of `g`, its members linked as `team` links them.
    pub(super) fn of(g: &GroupResult, team: &dyn Fn(&str) -> TeamRef) -> Self {
        let mut of: HashMap<String, Vec<Played>> = HashMap::with_capacity(g.members.len());
        // Each member's place among the links, while indexing.
        let mut place: HashMap<&str, u32> = HashMap::with_capacity(g.members.len());
        let mut links = Vec::with_capacity(g.members.len());
        for m in &g.members {
            if !place.contains_key(m.as_str()) {
                place.insert(m, links.len() as u32);
                links.push(team(m));
                of.insert(m.clone(), Vec::new());
            }
        }
        let at = |name: &str| place.get(name).copied().unwrap_or(NOT_A_MEMBER);
        for (i, x) in g.games.iter().enumerate() {
            if x.players[0] == x.players[1] {
                // A self-game is listed once.
                if let Some(v) = of.get_mut(&*x.players[0]) {
                    v.push(Played::new(i, Side::Both, at(&x.players[0])));
                }
                continue;
            }
            for (k, side) in [(0, Side::P), (1, Side::Q)] {
                if let Some(v) = of.get_mut(&*x.players[k]) {
                    v.push(Played::new(i, side, at(&x.players[1 - k])));
                }
            }
        }
        // Kept for every finished group: no room for games to come.
        for v in of.values_mut() {
            v.shrink_to_fit();
        }
        GroupIndex {
            games: g.games.len(),
            of,
            links,
        }
    }

    /// The index of a group none of the teams looked up is in.
    pub(super) fn empty() -> Self {
        GroupIndex {
            games: 0,
            of: HashMap::new(),
            links: Vec::new(),
        }
    }

    /// Whether the index was made from `g` as it is (its members and
    /// games, as far as their number tells: a finished group's do not
    /// change).
    pub(super) fn fits(&self, g: &GroupResult) -> bool {
        self.games == g.games.len() && self.of.len() == g.members.len()
    }

    /// The games `team` played in, or `None` if it is not a member.
    fn games_of(&self, team: &str) -> Option<&[Played]> {
        self.of.get(team).map(Vec::as_slice)
    }

    /// The opponent of a game `p` listed, linked: kept with the index for
    /// a member, `team(name)` for a player outside the group.
    fn opponent(&self, p: Played, name: &str, team: &dyn Fn(&str) -> TeamRef) -> TeamRef {
        match self.links.get(p.opponent as usize) {
            Some(link) => link.clone(),
            None => team(name),
        }
    }
}

/// A group a team is a member of: the indexes of its round in the
/// results' rounds and of the group in the round's groups.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Membership {
    round: u32,
    group: u32,
}

impl Membership {
    /// The round and the group of `res` the membership is in.
    pub(super) fn of<'r>(&self, res: &'r Results) -> (&'r RoundResult, &'r GroupResult) {
        let r = &res.rounds[self.round as usize];
        (r, &r.groups[self.group as usize])
    }
}

/// Where every team of the results is a member, kept from one write to
/// the next and extended by the rounds drawn since: a team's page goes
/// over its own groups instead of looking its name up in every group of
/// the tournament (at 10,000 teams, 244 groups a round for each of a
/// group's 41 pages at each group's write).
#[derive(Debug, Default)]
pub(super) struct Memberships {
    /// Per round indexed: its number and its groups' sizes, to see that
    /// the results still have it as it was indexed (else all is made anew).
    rounds: Vec<(u32, Vec<usize>)>,
    of: HashMap<String, Vec<Membership>>,
}

impl Memberships {
    /// Brings the memberships up to `res`: the rounds not indexed yet are
    /// added; if a round indexed before changed, everything is made anew.
    pub(super) fn update(&mut self, res: &Results) {
        let fits = self.rounds.len() <= res.rounds.len()
            && self.rounds.iter().zip(&res.rounds).all(|((n, sizes), r)| {
                *n == r.number
                    && sizes.len() == r.groups.len()
                    && sizes
                        .iter()
                        .zip(&r.groups)
                        .all(|(s, g)| *s == g.members.len())
            });
        if !fits {
            *self = Memberships::default();
        }
        for (ri, r) in res.rounds.iter().enumerate().skip(self.rounds.len()) {
            for (gi, g) in r.groups.iter().enumerate() {
                let here = Membership {
                    round: ri as u32,
                    group: gi as u32,
                };
                for m in &g.members {
                    let of = self.of.entry(m.clone()).or_default();
                    // A name twice in a group is one membership.
                    if of.last() != Some(&here) {
                        of.push(here);
                    }
                }
            }
            self.rounds
                .push((r.number, r.groups.iter().map(|g| g.members.len()).collect()));
        }
    }

    /// The groups `team` is a member of, in the results' order.
    pub(super) fn of(&self, team: &str) -> &[Membership] {
        self.of.get(team).map_or(&[], Vec::as_slice)
    }
}

/// How much of a team's page's view [`team_view`] builds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum TeamPart {
    /// Every field.
    Whole,
    /// What [`super::direct::team_head_html`] shows (the frame, the
    /// name, the disqualification, the placings, the Evolution's row): no
    /// description read, no game looked at but to know the team played
    /// in its group; the rest of the view empty.
    Head,
    /// Every field but the description and the rows (games, failures) of
    /// the team's first `n` groups: the page written before has them,
    /// settled, and they are copied from it (see
    /// [`super::parts::TeamTails`]). The placings, the points per opponent
    /// and the note on games without a page are made from every group, as
    /// for the whole view.
    After(usize),
}

/// How many of a team view's rows (games, failures) come from the team's
/// groups before a given one ([`team_view`]'s `split`): where a page's
/// settled rows end, to be copied at its next write.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct RowsBefore {
    pub games: usize,
    pub failures: usize,
}

/// A team's page's view (`part` of it), and how many of its rows come from
/// the team's first `split` groups. `evolution` is the team's row of
/// the Evolution's ranking, if it has one: the ranking is made once for
/// all the team pages of a write, not once per page.
#[allow(clippy::too_many_arguments)]
pub(super) fn team_view<'i>(
    part: TeamPart,
    split: usize,
    frame: Frame,
    store: &Store,
    name: &str,
    version: i64,
    res: &Results,
    index: &dyn Fn(u32, u32) -> Option<&'i GroupIndex>,
    member_of: &[Membership],
    evolution: Option<&EvolutionPlacedView>,
    facts: &Facts<'_>,
    opts: &SiteOptions,
) -> Result<(TeamView, RowsBefore), SiteError> {
    let (description, lexical_elements): (Option<String>, Option<i64>) = match part {
        TeamPart::Head | TeamPart::After(_) => (None, None),
        TeamPart::Whole => store
            .conn()
            .prepare_cached(
                "SELECT description, lexical_elements FROM strategy_versions WHERE id = ?1",
            )
            .and_then(|mut st| {
                st.query_row([version], |r| Ok((r.get(0)?, r.get(1)?)))
                    .optional()
            })
            .map_err(StoreError::from)?
            .unwrap_or((None, None)),
    };
    // Sized once: a row per group, and (below) each group's rows reserved
    // before they are pushed, not grown row by row.
    let mut placings = Vec::with_capacity(member_of.len());
    let mut games = Vec::new();
    // By the opponent's name (borrowed from the results: no copy a game).
    // Each with its row, whose link is the one of the team's first game
    // against it: not looked up again.
    let mut opponents: BTreeMap<&str, OpponentRow> = BTreeMap::new();
    let mut failures = Vec::new();
    let mut pages_note = None;
    let mut disqualified = None;
    for r in &res.rounds {
        if let Some(d) = r.disqualified.iter().find(|d| d.team == name) {
            disqualified = Some(format!("round {}: {}", r.number, d.reason));
        }
    }
    // Only the groups the team is a member of, in the results' order: not
    // a look-up of its name in every group of the tournament.
    // The first group whose rows are made (those before are copied).
    let rows_from = match part {
        TeamPart::Whole => 0,
        TeamPart::Head => usize::MAX,
        TeamPart::After(n) => n,
    };
    let mut before = RowsBefore::default();
    for (i, m) in member_of.iter().enumerate() {
        let (r, g) = m.of(res);
        {
            let made;
            let group_index = match index(r.number, g.number) {
                Some(i) => i,
                None => {
                    made = GroupIndex::of(g, &|t| facts.team(t));
                    &made
                }
            };
            let Some(played) = group_index.games_of(name) else {
                continue;
            };
            let entry = g.ranking.iter().find(|p| p.team == name);
            placings.push(PlacingRow {
                round: r.number,
                href: round_page(r.number),
                group: g.number,
                place: entry.map(|p| p.place),
                points: entry.map(|p| points_text(p.points)),
            });
            if part == TeamPart::Head {
                continue;
            }
            let cut = facts.cuts.get(&(r.number, g.number));
            if i < rows_from {
                // Rows copied: only what the points per opponent and the
                // note on pages take from every group.
                for &p in played {
                    let x = &g.games[p.game()];
                    if cut.is_some_and(|c| c.cuts(x) && x.status != GameStatus::Cancelled) {
                        pages_note = Some(TEAM_PAGES_NOTE);
                    }
                    if x.counted() {
                        let side = if p.side() == Side::Q { 1 } else { 0 };
                        let other = 1 - side;
                        let e = opponents
                            .entry(&x.players[other])
                            .or_insert_with(|| OpponentRow {
                                opponent: group_index
                                    .opponent(p, &x.players[other], &|t| facts.team(t)),
                                games: 0,
                                own: 0,
                                theirs: 0,
                            });
                        e.games += 1;
                        e.own += x.points[side];
                        e.theirs += x.points[other];
                    }
                }
                continue;
            }
            let (games_before, failures_before) = (games.len(), failures.len());
            // Only for the groups whose rows are made.
            let dqs = disqualifications(g, r);
            games.reserve(played.len());
            for &p in played {
                let seat = p.side();
                let x = &g.games[p.game()];
                let both = seat == Side::Both;
                let side = if seat == Side::Q { 1 } else { 0 };
                let other = 1 - side;
                let href = has_page(facts, opts, r.number, g.number, x)
                    .then(|| game_page(r.number, g.number, x.slot));
                if cut.is_some_and(|c| c.cuts(x) && x.status != GameStatus::Cancelled) {
                    pages_note = Some(TEAM_PAGES_NOTE);
                }
                let opponent = group_index.opponent(p, &x.players[other], &|t| facts.team(t));
                if x.counted() {
                    let e = opponents
                        .entry(&x.players[other])
                        .or_insert_with(|| OpponentRow {
                            opponent: opponent.clone(),
                            games: 0,
                            own: 0,
                            theirs: 0,
                        });
                    e.games += 1;
                    e.own += x.points[side];
                    e.theirs += x.points[other];
                }
                games.push(TeamGameRow {
                    round: r.number,
                    group: g.number,
                    slot: x.slot,
                    side: if both {
                        "both"
                    } else if side == 0 {
                        "P"
                    } else {
                        "Q"
                    },
                    opponent,
                    own: x.points[side],
                    theirs: x.points[other],
                    status: x.status.as_str(),
                    label: game_label(x, &g.games, &dqs)
                        .map_or(Cow::Borrowed("counted"), Cow::Owned),
                    href: href.clone(),
                });
                for f in &x.failures {
                    if both || f.player.min(1) == side {
                        failures.push(FailureRow {
                            round: r.number,
                            group: g.number,
                            slot: x.slot,
                            href: href.clone(),
                            reason: f.reason.clone(),
                        });
                    }
                }
            }
            if i < split {
                before.games += games.len() - games_before;
                before.failures += failures.len() - failures_before;
            }
        }
    }
    let view = TeamView {
        frame,
        pages_note,
        name: name.to_string(),
        description,
        lexical_elements,
        placings,
        disqualified,
        evolution: evolution.cloned(),
        games,
        opponents: opponents.into_values().collect(),
        failures,
    };
    Ok((view, before))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::results::GameStatus;

    fn game(slot: u32, p: &str, q: &str) -> GameResult {
        GameResult {
            slot,
            players: [p.into(), q.into()],
            points: [0, 0],
            seed: 0,
            attempt: 1,
            failures: Default::default(),
            status: GameStatus::Counted,
        }
    }

    fn group(number: u32, members: &[&str]) -> GroupResult {
        GroupResult {
            number,
            members: members.iter().map(|m| m.to_string()).collect(),
            ranking: Vec::new(),
            games: Vec::new(),
        }
    }

    fn round(number: u32, groups: Vec<GroupResult>) -> RoundResult {
        RoundResult {
            number,
            is_final: false,
            groups,
            advanced: Vec::new(),
            disqualified: Vec::new(),
        }
    }

    /// Each team's groups by scanning every group's members, as a team's
    /// page looked them up before the memberships.
    fn scanned(res: &Results, team: &str) -> Vec<(u32, u32)> {
        let mut v = Vec::new();
        for r in &res.rounds {
            for g in &r.groups {
                if g.members.iter().any(|m| m == team) {
                    v.push((r.number, g.number));
                }
            }
        }
        v
    }

    /// The memberships kept and extended round by round are those made
    /// anew from the results, and both are the groups scanning every
    /// group's members finds, in the results' order; a round that changed
    /// under them is indexed again.
    #[test]
    fn memberships_extended_round_by_round_are_the_ones_made_anew() {
        let mut res = Results {
            seed: 0,
            rejected: Vec::new(),
            rounds: Vec::new(),
            winners: Vec::new(),
            evolution: None,
        };
        let teams = ["a", "b", "c", "d", "e", "gone"];
        let check = |kept: &Memberships, res: &Results| {
            let mut anew = Memberships::default();
            anew.update(res);
            for t in teams {
                let of = |m: &Memberships| -> Vec<(u32, u32)> {
                    m.of(t)
                        .iter()
                        .map(|x| {
                            let (r, g) = x.of(res);
                            (r.number, g.number)
                        })
                        .collect()
                };
                assert_eq!(of(kept), of(&anew), "{t}");
                assert_eq!(of(kept), scanned(res, t), "{t}");
            }
        };
        let mut kept = Memberships::default();
        kept.update(&res);
        check(&kept, &res);
        res.rounds.push(round(
            1,
            vec![group(1, &["a", "b", "c"]), group(2, &["d", "e", "e"])],
        ));
        kept.update(&res);
        check(&kept, &res);
        res.rounds
            .push(round(2, vec![group(1, &["a", "d"]), group(2, &["e"])]));
        kept.update(&res);
        check(&kept, &res);
        assert_eq!(kept.of("e").len(), 2, "a name twice in a group counts once");
        // A round indexed before that changed (a group more) is seen.
        res.rounds[1].groups.push(group(3, &["b"]));
        kept.update(&res);
        check(&kept, &res);
        // Results of another tournament (fewer rounds) make it anew.
        res.rounds.truncate(1);
        res.rounds[0].groups[0].members.pop();
        kept.update(&res);
        check(&kept, &res);
        assert!(kept.of("gone").is_empty());
    }

    /// The index gives each member its games in the group's order and its
    /// side in each, as comparing its name with the players did: a
    /// self-game once, as both sides; a game with a non-member listed for
    /// the member alone.
    #[test]
    fn a_group_index_gives_each_member_its_games_and_sides() {
        let g = GroupResult {
            number: 1,
            members: vec!["a".into(), "b".into()],
            ranking: Vec::new(),
            games: vec![
                game(1, "a", "b"),
                game(2, "b", "b"),
                game(3, "b", "a"),
                game(4, "a", "gone"),
            ],
        };
        let link = |t: &str| TeamRef {
            name: t.into(),
            href: Some(format!("{t}.html").into()),
        };
        let index = GroupIndex::of(&g, &link);
        assert!(index.fits(&g));
        let of = |team: &str| -> Vec<(u32, Side)> {
            index
                .games_of(team)
                .unwrap()
                .iter()
                .map(|&p| (p.game() as u32, p.side()))
                .collect()
        };
        assert_eq!(of("a"), vec![(0, Side::P), (2, Side::Q), (3, Side::P)]);
        assert_eq!(of("b"), vec![(0, Side::Q), (1, Side::Both), (2, Side::P)]);
        assert!(index.games_of("gone").is_none());
        for (i, x) in g.games.iter().enumerate() {
            for team in ["a", "b"] {
                let listed = of(team).into_iter().find(|&(n, _)| n == i as u32);
                let by_name = if *x.players[0] == *team && *x.players[1] == *team {
                    Some(Side::Both)
                } else if *x.players[0] == *team {
                    Some(Side::P)
                } else if *x.players[1] == *team {
                    Some(Side::Q)
                } else {
                    None
                };
                assert_eq!(listed.map(|(_, s)| s), by_name, "game {i}, {team}");
            }
        }
        // Each game's opponent is the other player's link, kept with the
        // index for a member; a player outside the group is looked up.
        let outside = |t: &str| TeamRef {
            name: t.into(),
            href: None,
        };
        for team in ["a", "b"] {
            for &p in index.games_of(team).unwrap() {
                let x = &g.games[p.game()];
                let other = &*x.players[usize::from(p.side() != Side::Q)];
                let expected = if other == "gone" {
                    outside(other)
                } else {
                    link(other)
                };
                assert_eq!(index.opponent(p, other, &outside), expected, "{team}");
            }
        }
        let gone = index.games_of("a").unwrap()[2];
        assert_eq!(gone.opponent, NOT_A_MEMBER);
        // The largest index a game can have keeps its side.
        let last = Played::new((1 << 30) - 1, Side::Both, 7);
        assert_eq!((last.game(), last.side()), ((1 << 30) - 1, Side::Both));
    }
}
