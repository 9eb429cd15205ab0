//! The group table: points, tie-breaks, places, who advances, and the
//! contest's final ranking.
//!
//! Input is a group's members, its disqualified strategies and its counted
//! games (from [`super::schedule::GroupSchedule::counted_games`]); output is
//! the ranking. It does not decide which games count (the schedule does) and
//! does not format tables.
//!
//! **Invariant:** `tournament` never does I/O, never reads a clock, never draws
//! from a global RNG.
//!
//! # Points
//!
//! A team's points are the sum of its points in its counted games against the
//! other members, plus its self-game counted once, as the mean of its two
//! sides (a self-game with sides 3 and 4 contributes 3.5). They are exact
//! ([`Points`] are half-points).
//!
//! # Order of the table (tie order)
//!
//! 1. By points, descending.
//! 2. Among teams with equal points, by the points each of them won in the
//!    games among exactly those tied teams (a head-to-head mini-table over
//!    the whole set of teams with that score, computed once, not
//!    recursively; self-games excluded), descending.
//! 3. Then by team name, ascending (byte order), and finally by team id.
//!
//! Places are shared ("3, 3, 5") where points and head-to-head points are
//! both equal; the name only orders the listing.
//!
//! # Advancement
//!
//! Disqualified strategies are not ranked (they are listed separately) and
//! do not count in the group size. Of the `n` ranked teams of a group, the
//! first `ceil(n/2)` advance, plus every further team with the same points
//! as the last of them (points only: the head-to-head tie-break does not
//! apply at the cut). "At least those half of the participants, that have
//! won most points in their group (no matter how many their opponents got),
//! proceed to the next round."
//!
//! # Final ranking
//!
//! "The winners of the last round are the winners of the tournament; the
//! results of previous rounds are discarded": the contest's ranking is the
//! ranking of the final round's single group ([`final_ranking`]).

use super::schedule::{CountedGame, GroupSchedule};
use super::units::{Points, TeamId};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// One line of a group table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RankEntry {
    pub team: TeamId,
    pub name: String,
    pub points: Points,
    /// Points won against the other teams with the same points; `None` when
    /// no other team has the same points.
    pub head_to_head: Option<Points>,
    /// 1-based; shared by teams equal in points and head-to-head.
    pub place: u32,
}

/// A group's table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupRanking {
    /// The ranked (not disqualified) members, in table order.
    pub entries: Vec<RankEntry>,
    /// Disqualified members, by id; not ranked.
    pub disqualified: Vec<TeamId>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RankingError {
    #[error("the group's games are not finished")]
    NotFinished,
    #[error("the final round must have exactly one group, it has {0}")]
    NotOneFinalGroup(usize),
}

/// The points each side of a counted game contributes to its team, in
/// half-points: `2 × points` in a game against another team, `p + q` (the
/// mean of both sides, doubled) for the self-game.
pub fn game_halves(game: &CountedGame) -> [u64; 2] {
    if game.is_self_game() {
        let mean = game.points[0] + game.points[1];
        [mean, 0]
    } else {
        [2 * game.points[0], 2 * game.points[1]]
    }
}

/// Ranks a group. Games involving a disqualified team or a non-member are
/// ignored (the schedule never counts the former). `names` gives a team's
/// name for the last tie-break.
pub fn rank_group(
    members: &[TeamId],
    disqualified: &[TeamId],
    games: &[CountedGame],
    names: &dyn Fn(TeamId) -> String,
) -> GroupRanking {
    let dq: BTreeSet<TeamId> = disqualified.iter().copied().collect();
    let ranked: BTreeSet<TeamId> = members
        .iter()
        .copied()
        .filter(|t| !dq.contains(t))
        .collect();
    let games: Vec<&CountedGame> = games
        .iter()
        .filter(|g| g.players.iter().all(|p| ranked.contains(p)))
        .collect();

    let mut points: BTreeMap<TeamId, u64> = ranked.iter().map(|&t| (t, 0)).collect();
    for g in &games {
        for (team, halves) in g.players.iter().zip(game_halves(g)) {
            *points.get_mut(team).expect("ranked") += halves;
        }
    }

    // Head-to-head within each set of teams with equal points, in one
    // pass over the games for every set: a game between two teams counts
    // for their head-to-head when their points are equal (then both are
    // in the same set, and only then).
    let mut by_points: BTreeMap<u64, usize> = BTreeMap::new();
    for &p in points.values() {
        *by_points.entry(p).or_default() += 1;
    }
    let mut h2h: BTreeMap<TeamId, Option<u64>> = points
        .iter()
        .map(|(&t, p)| (t, (by_points[p] >= 2).then_some(0)))
        .collect();
    for g in &games {
        if !g.is_self_game() && points[&g.players[0]] == points[&g.players[1]] {
            for side in 0..2 {
                let e = h2h.get_mut(&g.players[side]).expect("ranked");
                *e = Some(e.unwrap_or(0) + 2 * g.points[side]);
            }
        }
    }

    let mut entries: Vec<RankEntry> = ranked
        .iter()
        .map(|&t| RankEntry {
            team: t,
            name: names(t),
            points: Points::from_halves(points[&t]),
            head_to_head: h2h[&t].map(Points::from_halves),
            place: 0,
        })
        .collect();
    entries.sort_by(|a, b| {
        b.points
            .cmp(&a.points)
            .then(b.head_to_head.cmp(&a.head_to_head))
            .then_with(|| a.name.cmp(&b.name))
            .then(a.team.cmp(&b.team))
    });
    for k in 0..entries.len() {
        entries[k].place = if k > 0
            && entries[k].points == entries[k - 1].points
            && entries[k].head_to_head == entries[k - 1].head_to_head
        {
            entries[k - 1].place
        } else {
            k as u32 + 1
        };
    }
    GroupRanking {
        entries,
        disqualified: dq.into_iter().filter(|t| members.contains(t)).collect(),
    }
}

/// Ranks a finished group schedule.
pub fn rank_schedule(
    schedule: &GroupSchedule,
    names: &dyn Fn(TeamId) -> String,
) -> Result<GroupRanking, RankingError> {
    if !schedule.is_finished() {
        return Err(RankingError::NotFinished);
    }
    let dq: Vec<TeamId> = schedule.disqualified().iter().map(|d| d.team).collect();
    Ok(rank_group(
        schedule.members(),
        &dq,
        &schedule.counted_games(),
        names,
    ))
}

/// The teams that proceed to the next round: the first `ceil(n/2)` of the
/// `n` ranked entries, plus every further entry with the same points as the
/// last of them. `ranking` must be in table order (as [`rank_group`] gives).
pub fn advancing(ranking: &[RankEntry]) -> Vec<TeamId> {
    let n = ranking.len();
    if n == 0 {
        return Vec::new();
    }
    let cut = ranking[n.div_ceil(2) - 1].points;
    ranking
        .iter()
        .filter(|e| e.points >= cut)
        .map(|e| e.team)
        .collect()
}

/// The contest's result: the table of the final round's single group.
pub fn final_ranking(final_round: &[GroupRanking]) -> Result<&GroupRanking, RankingError> {
    match final_round {
        [only] => Ok(only),
        _ => Err(RankingError::NotOneFinalGroup(final_round.len())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tournament::schedule::GameKey;

    fn game(p: u32, q: u32, points: [u64; 2]) -> CountedGame {
        CountedGame {
            key: GameKey {
                round: 1,
                group: 0,
                slot: 0,
            },
            players: [TeamId(p), TeamId(q)],
            points,
        }
    }

    fn name(t: TeamId) -> String {
        format!("team-{:03}", t.0)
    }

    fn entry(team: u32, points: u64) -> RankEntry {
        RankEntry {
            team: TeamId(team),
            name: name(TeamId(team)),
            points: Points::from_whole(points),
            head_to_head: None,
            place: 0,
        }
    }

    #[test]
    fn self_game_counts_once_as_the_mean_of_its_sides() {
        let r = rank_group(&[TeamId(1)], &[], &[game(1, 1, [3, 4])], &name);
        assert_eq!(r.entries[0].points, Points::from_halves(7));
        assert_eq!(r.entries[0].points.to_string(), "3.5");
        // Plus a normal game: 3.5 + 10.
        let r = rank_group(
            &[TeamId(1), TeamId(2)],
            &[],
            &[game(1, 1, [3, 4]), game(1, 2, [10, 2]), game(2, 2, [5, 5])],
            &name,
        );
        assert_eq!(r.entries[0].team, TeamId(1));
        assert_eq!(r.entries[0].points.to_string(), "13.5");
        assert_eq!(r.entries[1].points.to_string(), "7");
    }

    #[test]
    fn advancement_takes_everyone_tied_at_the_cut() {
        // 10, 9, 8, 8, 7: ceil(5/2) = 3, the 4th has the 3rd's points.
        let members: Vec<TeamId> = (1..=5).map(TeamId).collect();
        let pts = [10, 9, 8, 8, 7];
        let games: Vec<CountedGame> = (1..=5)
            .map(|t| game(t, t, [pts[t as usize - 1]; 2]))
            .collect();
        let r = rank_group(&members, &[], &games, &name);
        assert_eq!(
            advancing(&r.entries),
            vec![TeamId(1), TeamId(2), TeamId(3), TeamId(4)]
        );
        // Without a tie: exactly half, rounded up.
        let ranking: Vec<RankEntry> = [(1, 10), (2, 9), (3, 8), (4, 7)]
            .map(|(t, p)| entry(t, p))
            .into();
        assert_eq!(advancing(&ranking), vec![TeamId(1), TeamId(2)]);
        let ranking: Vec<RankEntry> = [(1, 10), (2, 9), (3, 8)].map(|(t, p)| entry(t, p)).into();
        assert_eq!(advancing(&ranking), vec![TeamId(1), TeamId(2)]);
        assert_eq!(advancing(&[entry(1, 0)]), vec![TeamId(1)]);
        assert!(advancing(&[]).is_empty());
        // Everybody equal: everybody advances.
        let ranking: Vec<RankEntry> = (1..=6).map(|t| entry(t, 5)).collect();
        assert_eq!(advancing(&ranking).len(), 6);
    }

    #[test]
    fn equal_points_without_head_to_head_difference_share_a_place() {
        let members: Vec<TeamId> = (1..=5).map(TeamId).collect();
        let pts = [10, 9, 8, 8, 7];
        let games: Vec<CountedGame> = (1..=5)
            .map(|t| game(t, t, [pts[t as usize - 1]; 2]))
            .collect();
        let r = rank_group(&members, &[], &games, &name);
        let places: Vec<u32> = r.entries.iter().map(|e| e.place).collect();
        assert_eq!(places, [1, 2, 3, 3, 5]);
        assert_eq!(r.entries[2].head_to_head, Some(Points::ZERO));
        assert_eq!(r.entries[0].head_to_head, None);
        // The name orders the listing within a shared place.
        let rev = |t: TeamId| format!("z{}", 9 - t.0);
        let r = rank_group(&members, &[], &games, &rev);
        assert_eq!(r.entries[2].team, TeamId(4));
        assert_eq!(r.entries[3].team, TeamId(3));
        assert_eq!(r.entries[2].place, r.entries[3].place);
    }

    #[test]
    fn head_to_head_breaks_ties_among_exactly_the_tied_teams() {
        // A, B, C end with 20 points each; D far behind.
        let (a, b, c, d) = (1, 2, 3, 4);
        let games = vec![
            game(a, b, [5, 1]),
            game(a, c, [1, 2]),
            game(b, c, [2, 2]),
            game(a, d, [14, 0]),
            game(b, d, [17, 0]),
            game(c, d, [16, 0]),
            game(a, a, [0, 0]),
            game(b, b, [0, 0]),
            game(c, c, [0, 0]),
            game(d, d, [1, 0]),
        ];
        let members: Vec<TeamId> = (1..=4).map(TeamId).collect();
        let r = rank_group(&members, &[], &games, &name);
        let table: Vec<(u32, String, Option<String>, u32)> = r
            .entries
            .iter()
            .map(|e| {
                (
                    e.team.0,
                    e.points.to_string(),
                    e.head_to_head.map(|p| p.to_string()),
                    e.place,
                )
            })
            .collect();
        assert_eq!(
            table,
            vec![
                (a, "20".into(), Some("6".into()), 1),
                (c, "20".into(), Some("4".into()), 2),
                (b, "20".into(), Some("3".into()), 3),
                (d, "0.5".into(), None, 4),
            ]
        );
        // Head-to-head does not protect at the advancement cut: all three
        // tied teams advance (ceil(4/2) = 2, the 3rd has equal points).
        assert_eq!(advancing(&r.entries), vec![TeamId(a), TeamId(c), TeamId(b)]);
    }

    #[test]
    fn disqualified_teams_are_listed_separately_and_do_not_count_in_the_size() {
        let members: Vec<TeamId> = (1..=5).map(TeamId).collect();
        let games = vec![game(1, 2, [3, 1]), game(2, 5, [9, 9]), game(3, 3, [2, 2])];
        let r = rank_group(&members, &[TeamId(5)], &games, &name);
        assert_eq!(r.disqualified, vec![TeamId(5)]);
        assert_eq!(r.entries.len(), 4);
        assert!(r.entries.iter().all(|e| e.team != TeamId(5)));
        let two = r.entries.iter().find(|e| e.team == TeamId(2)).unwrap();
        assert_eq!(
            two.points,
            Points::from_whole(1),
            "games with the disqualified team ignored"
        );
        // 4 ranked teams (3, 2, 1, 0 points) → ceil(4/2) = 2 advance.
        assert_eq!(advancing(&r.entries), vec![TeamId(1), TeamId(3)]);
    }

    /// Head-to-head as it was computed before: one pass over the games
    /// for each set of tied teams.
    fn head_to_head_per_tied_set(
        members: &[TeamId],
        games: &[CountedGame],
    ) -> BTreeMap<TeamId, Option<u64>> {
        let mut points: BTreeMap<TeamId, u64> = members.iter().map(|&t| (t, 0)).collect();
        for g in games {
            for (team, halves) in g.players.iter().zip(game_halves(g)) {
                *points.get_mut(team).unwrap() += halves;
            }
        }
        let mut by_points: BTreeMap<u64, BTreeSet<TeamId>> = BTreeMap::new();
        for (&t, &p) in &points {
            by_points.entry(p).or_default().insert(t);
        }
        let mut h2h: BTreeMap<TeamId, Option<u64>> = members.iter().map(|&t| (t, None)).collect();
        for tied in by_points.values().filter(|s| s.len() >= 2) {
            for &t in tied {
                h2h.insert(t, Some(0));
            }
            for g in games {
                if !g.is_self_game() && tied.contains(&g.players[0]) && tied.contains(&g.players[1])
                {
                    for side in 0..2 {
                        let e = h2h.get_mut(&g.players[side]).unwrap();
                        *e = Some(e.unwrap_or(0) + 2 * g.points[side]);
                    }
                }
            }
        }
        h2h
    }

    /// Random groups with many ties (points from a few values, self-games
    /// of equal sides): the one pass over the games gives every team the
    /// head-to-head points one pass per tied set gave.
    #[test]
    fn head_to_head_in_one_pass_equals_a_pass_per_tied_set() {
        let mut rng = crate::seed::SplitMix64::new(38);
        let mut tied_teams = 0;
        for _ in 0..400 {
            let n = 1 + rng.below(12) as u32;
            let members: Vec<TeamId> = (1..=n).map(TeamId).collect();
            let spread = 1 + rng.below(4);
            let mut games = Vec::new();
            for p in 1..=n {
                for q in p..=n {
                    let pts = [rng.below(spread), rng.below(spread)];
                    games.push(game(p, q, if p == q { [pts[0]; 2] } else { pts }));
                }
            }
            let r = rank_group(&members, &[], &games, &name);
            let want = head_to_head_per_tied_set(&members, &games);
            for e in &r.entries {
                assert_eq!(e.head_to_head.map(Points::halves), want[&e.team]);
                tied_teams += usize::from(e.head_to_head.is_some());
            }
        }
        assert!(tied_teams > 1000, "ties were tried: {tied_teams}");
    }

    /// Red team G14: the one pass with disqualified members (their games
    /// are not counted, so a team may be tied only through them) and a
    /// game of a stranger to the group: every team's head-to-head is what a
    /// pass per tied set over the ranked teams' games gave, and teams equal
    /// in points and head-to-head share their place.
    #[test]
    fn head_to_head_in_one_pass_with_disqualified_members_equals_a_pass_per_tied_set() {
        let mut rng = crate::seed::SplitMix64::new(1415);
        let mut tied_teams = 0;
        for _ in 0..400 {
            let n = 2 + rng.below(10) as u32;
            let members: Vec<TeamId> = (1..=n).map(TeamId).collect();
            let dq: Vec<TeamId> = members
                .iter()
                .copied()
                .filter(|_| rng.below(4) == 0)
                .collect();
            let spread = 1 + rng.below(3);
            let mut games = Vec::new();
            for p in 1..=n + 1 {
                for q in p..=n + 1 {
                    let pts = [rng.below(spread), rng.below(spread)];
                    games.push(game(p, q, if p == q { [pts[0]; 2] } else { pts }));
                }
            }
            let r = rank_group(&members, &dq, &games, &name);
            let ranked: Vec<TeamId> = members
                .iter()
                .copied()
                .filter(|t| !dq.contains(t))
                .collect();
            let theirs: Vec<CountedGame> = games
                .iter()
                .filter(|g| g.players.iter().all(|p| ranked.contains(p)))
                .cloned()
                .collect();
            let want = head_to_head_per_tied_set(&ranked, &theirs);
            assert_eq!(r.entries.len(), ranked.len());
            assert_eq!(r.disqualified, dq);
            for (k, e) in r.entries.iter().enumerate() {
                assert_eq!(e.head_to_head.map(Points::halves), want[&e.team]);
                tied_teams += usize::from(e.head_to_head.is_some());
                if k > 0 {
                    let before = &r.entries[k - 1];
                    let same = before.points == e.points && before.head_to_head == e.head_to_head;
                    assert_eq!(same, before.place == e.place);
                }
            }
        }
        assert!(tied_teams > 500, "ties were tried: {tied_teams}");
    }

    #[test]
    fn ranks_a_finished_schedule() {
        use crate::tournament::schedule::{GameOutcome, GroupSchedule};
        let members = [TeamId(3), TeamId(1), TeamId(2)];
        let mut s = GroupSchedule::new(5, 1, 0, &members).unwrap();
        assert_eq!(rank_schedule(&s, &name), Err(RankingError::NotFinished));
        while !s.is_finished() {
            let g = s.next_to_run(1).remove(0);
            // The higher id wins 4:1; self-games 3:4.
            let o = if g.is_self_game() {
                GameOutcome::played([3, 4])
            } else {
                GameOutcome::played([1, 4])
            };
            s.record(g.key, o).unwrap();
        }
        let r = rank_schedule(&s, &name).unwrap();
        let table: Vec<(u32, String)> = r
            .entries
            .iter()
            .map(|e| (e.team.0, e.points.to_string()))
            .collect();
        assert_eq!(
            table,
            vec![(3, "11.5".into()), (2, "8.5".into()), (1, "5.5".into())]
        );
        let finals = vec![r.clone()];
        assert_eq!(final_ranking(&finals), Ok(&r));
        assert_eq!(final_ranking(&[]), Err(RankingError::NotOneFinalGroup(0)));
    }
}
