//! The result texts of the contest mails, as pure functions of the results:
//! a team's games (GRP), a group's games (GRG), a group's ranking (GRR), a
//! round's summary (RSM), the disqualification notice's failures and the
//! final results with the Evolution.
//!
//! The texts add up and say what happened: GRP ends with the team's total,
//! equal to its points in GRR; a self-game shows both sides and the mean
//! that counts on one line (and the mail says once why points can end in
//! .5); a failed game says who failed and what became of its replay
//! ("replayed as game 31", or "replay cancelled (disqualification)");
//! games that do not count say why ("void: crasher disqualified in game
//! 31; its games are not counted"), games not played say so, and a
//! disqualification in a self-game says "against itself". Disqualified
//! members are named in GRR and RSM; GRR marks who advances. Every line
//! fits into 72 columns for names up to 30 characters (longer lines are
//! wrapped by [`crate::mail::texts`]) and ends without blanks.
//!
//! Game numbers are the slots of the group's schedule, as in the game
//! protocols (`slot`) and on the results site ("game 12").

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

use super::facts::{evolution_facts, has_half, points_text, push_points};
use crate::decimal::{
    align_right_from, push_left, push_right, push_unsigned_left, push_unsigned_right,
};
use crate::engine::results::{GameResult, GameStatus, GroupResult, Placed, Results, RoundResult};

/// How a team came to be disqualified in a group.
#[derive(Debug, Clone, PartialEq)]
pub struct Disqualification {
    pub team: String,
    /// The game of its first failure, and the failure.
    pub first: Option<(u32, String)>,
    /// The game of its second failure (the one that disqualified it).
    pub game: u32,
    /// Whether that game was its self-game.
    pub against_itself: bool,
    /// The second failure.
    pub reason: String,
}

impl Disqualification {
    /// "crasher disqualified in game 31 (against itself)".
    fn in_game(&self) -> String {
        format!(
            "{} disqualified in game {}{}",
            self.team,
            self.game,
            if self.against_itself {
                " (against itself)"
            } else {
                ""
            }
        )
    }
}

/// The reason of `team`'s failure in `g`, if it failed there.
fn failure_of<'g>(g: &'g GameResult, team: &str) -> Option<&'g str> {
    g.failures
        .iter()
        .find(|f| *g.players[f.player] == *team)
        .map(|f| f.reason.as_str())
}

fn is_self_game(g: &GameResult) -> bool {
    g.players[0] == g.players[1]
}

/// The disqualifications of a group's members, in the order of their games.
pub fn disqualifications(gr: &GroupResult, rr: &RoundResult) -> Vec<Disqualification> {
    let mut out: Vec<Disqualification> = rr
        .disqualified
        .iter()
        .filter(|d| gr.members.contains(&d.team))
        .map(|d| {
            // Its failed games in schedule order (a self-game in which both
            // sides failed is one failure).
            let failed: Vec<&GameResult> = gr
                .games
                .iter()
                .filter(|g| g.status != GameStatus::Cancelled && failure_of(g, &d.team).is_some())
                .collect();
            let second = failed.get(1).or(failed.last()).copied();
            Disqualification {
                team: d.team.clone(),
                first: failed.first().filter(|_| failed.len() > 1).map(|g| {
                    (
                        g.slot,
                        failure_of(g, &d.team).unwrap_or_default().to_string(),
                    )
                }),
                game: second.map_or(0, |g| g.slot),
                against_itself: second.is_some_and(is_self_game),
                reason: d.reason.clone(),
            }
        })
        .collect();
    out.sort_by_key(|d| d.game);
    out
}

/// A failure's sentence up to its first `;` (the rule and the throw; the
/// explanation after it is in the disqualification notice and DGP).
fn short_reason(reason: &str) -> &str {
    reason.split("; ").next().unwrap_or(reason)
}

/// Who failed in `g`, in words: "crasher (throw 6: crashed)", "narcissus
/// against itself (throw 9: …)".
fn who_failed(g: &GameResult) -> String {
    let mut seen: Vec<&str> = Vec::new();
    let mut parts = Vec::new();
    for f in &g.failures {
        let team = &*g.players[f.player];
        if seen.contains(&team) {
            continue; // a self-game's two sides are one failure
        }
        seen.push(team);
        let whom = if is_self_game(g) {
            " against itself"
        } else {
            ""
        };
        parts.push(format!("{team}{whom} ({})", short_reason(&f.reason)));
    }
    parts.join(" and ")
}

/// What happened to game `g`, in words; `None` for a game that simply counts.
pub fn game_label(
    g: &GameResult,
    games: &[GameResult],
    dqs: &[Disqualification],
) -> Option<String> {
    let dq_of = |team: &str| dqs.iter().find(|d| d.team == team);
    let involved: Vec<&Disqualification> = {
        let mut v: Vec<&Disqualification> = g.players.iter().filter_map(|p| dq_of(p)).collect();
        v.dedup_by(|a, b| a.team == b.team);
        v
    };
    let reasons = |v: &[&Disqualification]| {
        v.iter()
            .map(|d| d.in_game())
            .collect::<Vec<_>>()
            .join(" and ")
    };
    match g.status {
        GameStatus::Counted => None,
        GameStatus::Discarded => {
            let replay = games
                .iter()
                .find(|r| r.players == g.players && r.attempt == g.attempt + 1 && r.slot > g.slot);
            let then = match replay {
                Some(r) if r.status == GameStatus::Cancelled => {
                    "replay cancelled (disqualification)".to_string()
                }
                Some(r) => format!("replayed as game {}", r.slot),
                None => "to be replayed".to_string(),
            };
            Some(format!("failed: {}; {then}", who_failed(g)))
        }
        GameStatus::Void => {
            let here: Vec<&Disqualification> = involved
                .iter()
                .copied()
                .filter(|d| d.game == g.slot)
                .collect();
            if here.is_empty() {
                Some(format!(
                    "void: {}; its games are not counted",
                    reasons(&involved)
                ))
            } else {
                Some(format!(
                    "failed: {}: the second failure, {}; its games are not counted",
                    who_failed(g),
                    here.iter()
                        .map(|d| {
                            if d.against_itself {
                                format!("{} disqualified (against itself)", d.team)
                            } else {
                                format!("{} disqualified", d.team)
                            }
                        })
                        .collect::<Vec<_>>()
                        .join(" and ")
                ))
            }
        }
        GameStatus::Cancelled => {
            // Cancelled by whoever was disqualified before its turn.
            let before: Vec<&Disqualification> = involved
                .iter()
                .copied()
                .filter(|d| d.game < g.slot)
                .collect();
            let why = if before.is_empty() {
                &involved
            } else {
                &before
            };
            Some(format!("not played: {}", reasons(why)))
        }
        GameStatus::Pending => Some("not played yet".to_string()),
    }
}

/// What a counted game gives `team`: its side's points, or for its
/// self-game the mean of both sides.
fn counted_for(g: &GameResult, team: &str) -> Option<f64> {
    if g.status != GameStatus::Counted {
        return None;
    }
    if is_self_game(g) {
        return (*g.players[0] == *team).then(|| (g.points[0] + g.points[1]) as f64 / 2.0);
    }
    let side = g.players.iter().position(|p| **p == *team)?;
    Some(g.points[side] as f64)
}

fn played(g: &GameResult) -> bool {
    matches!(
        g.status,
        GameStatus::Counted | GameStatus::Discarded | GameStatus::Void
    )
}

fn name_width<'a>(names: impl Iterator<Item = &'a str>, at_least: usize) -> usize {
    names.map(str::len).max().unwrap_or(0).clamp(at_least, 30)
}

/// Lines without trailing blanks.
fn push_line(out: &mut String, line: &str) {
    out.push_str(line.trim_end());
    out.push('\n');
}

/// Ends the line written into `out` from `start` as [`push_line`] would
/// have (its trailing blanks dropped, a line end).
fn end_line(out: &mut String, start: usize) {
    let kept = out[start..].trim_end().len();
    out.truncate(start + kept);
    out.push('\n');
}

/// A label or item line, wrapped at the mail width (continuation lines
/// indented deeper).
fn push_wrapped(out: &mut String, line: &str) {
    out.push_str(&crate::mail::texts::mail_text(line));
    out.push('\n');
}

/// The note said once per mail when points end in .5.
pub const HALF_POINTS_NOTE: &str = "A self-game counts once, as the mean of its two sides, so \
     points can end in .5.";

/// GRP: the games of `team` in its group, each with both sides' points
/// and what counts, then the total (equal to its points in the ranking).
/// Returns the table and the note on half points, if one is needed.
pub fn team_games(gr: &GroupResult, rr: &RoundResult, team: &str) -> (String, Option<String>) {
    team_games_with(gr, &disqualifications(gr, rr), team)
}

/// `team`'s opponent in `g` (a self-game says so).
fn opponent_of<'a>(g: &'a GameResult, team: &str) -> &'a str {
    if is_self_game(g) {
        "itself (both sides)"
    } else {
        let side = g.players.iter().position(|p| **p == *team).unwrap_or(0);
        &g.players[1 - side]
    }
}

/// [`team_games`] with the group's [`disqualifications`] found already
/// (once for all of a group's mails, not once per member).
pub fn team_games_with(
    gr: &GroupResult,
    dqs: &[Disqualification],
    team: &str,
) -> (String, Option<String>) {
    let mine: Vec<&GameResult> = gr
        .games
        .iter()
        .filter(|g| g.players.iter().any(|p| **p == *team))
        .collect();
    team_games_of(gr, &mine, dqs, team)
}

/// Each member's games of a group (in the group's order, a self-game
/// once), found in one pass over the games: what [`team_games_of`] takes,
/// instead of each member's table going over every game of the group.
pub fn games_by_member(gr: &GroupResult) -> HashMap<&str, Vec<&GameResult>> {
    let mut by: HashMap<&str, Vec<&GameResult>> = HashMap::with_capacity(gr.members.len());
    for g in &gr.games {
        by.entry(&g.players[0]).or_default().push(g);
        if !is_self_game(g) {
            by.entry(&g.players[1]).or_default().push(g);
        }
    }
    by
}

/// [`team_games_with`] with `team`'s games found already (`mine`: its
/// games of `gr` in the group's order, [`games_by_member`]'s).
pub fn team_games_of(
    gr: &GroupResult,
    mine: &[&GameResult],
    dqs: &[Disqualification],
    team: &str,
) -> (String, Option<String>) {
    // The opponents' names borrowed, each game's line written in place
    // (a group's mails write one table per member).
    let w = name_width(mine.iter().map(|g| opponent_of(g, team)), "opponent".len());
    let mut out = String::new();
    push_line(
        &mut out,
        &format!(
            "  {:>4}  {:<w$}  {:>5}  {:>5}  {:>7}",
            "game", "opponent", "you", "them", "counted"
        ),
    );
    let mut total = 0.0;
    let mut half = false;
    for g in mine {
        let side = g.players.iter().position(|p| **p == *team).unwrap_or(0);
        let counted = counted_for(g, team);
        if let Some(c) = counted {
            total += c;
            half |= has_half(c);
        }
        // The line `"  {slot:>4}  {opponent:<w$}  {you:>5}  {them:>5}
        // {counted:>7}"`, written without the formatter (one line a game
        // for each member of the group: `write!` and the points' floats
        // were most of the group's GRP tables).
        let start = out.len();
        out.push_str("  ");
        push_unsigned_right(&mut out, u64::from(g.slot), 4);
        out.push_str("  ");
        push_left(&mut out, opponent_of(g, team), w);
        out.push_str("  ");
        if played(g) {
            push_unsigned_right(&mut out, g.points[side], 5);
            out.push_str("  ");
            push_unsigned_right(&mut out, g.points[1 - side], 5);
        } else {
            push_right(&mut out, "-", 5);
            out.push_str("  ");
            push_right(&mut out, "-", 5);
        }
        out.push_str("  ");
        match counted {
            Some(c) => {
                let at = out.len();
                push_points(&mut out, c);
                align_right_from(&mut out, at, 7);
            }
            None => push_right(&mut out, "-", 7),
        }
        end_line(&mut out, start);
        if let Some(label) = game_label(g, &gr.games, dqs) {
            push_wrapped(&mut out, &format!("        {label}"));
        }
    }
    let width = 2 + 4 + 2 + w + 2 + 5 + 2 + 5 + 2 + 7;
    push_line(&mut out, &format!("  {}", "-".repeat(width - 2)));
    match dqs.iter().find(|d| d.team == team) {
        Some(d) => push_line(
            &mut out,
            &format!(
                "  total: none; your team was disqualified in game {}{}, so its games are \
                 not counted and it is not ranked",
                d.game,
                if d.against_itself {
                    " (against itself)"
                } else {
                    ""
                }
            ),
        ),
        None => {
            // The sum of the counted column: the same as the ranking's
            // points (tested), so the mail visibly adds up.
            let value = points_text(total);
            push_line(
                &mut out,
                &format!("  {:<left$}{value:>7}", "total", left = width - 2 - 7),
            );
        }
    }
    (out, half.then(|| HALF_POINTS_NOTE.to_string()))
}

/// GRG: every game of the group with both sides' points and what happened.
/// Returns the table and the note on half points, if one is needed.
pub fn group_games(gr: &GroupResult, rr: &RoundResult) -> (String, Option<String>) {
    let dqs = disqualifications(gr, rr);
    let w = name_width(gr.members.iter().map(String::as_str), "P".len());
    let mut out = String::new();
    push_line(
        &mut out,
        &format!("  {:>4}  {:<w$}  {:^13}  Q", "game", "P", "points"),
    );
    let mut half = false;
    for g in &gr.games {
        // The line `"  {slot:>4}  {P:<w$}  {p:>5} : {q:<5}  {Q}"`, written
        // without the formatter (as a GRP table's, `team_games_of`).
        let start = out.len();
        out.push_str("  ");
        push_unsigned_right(&mut out, u64::from(g.slot), 4);
        out.push_str("  ");
        push_left(&mut out, &g.players[0], w);
        out.push_str("  ");
        if played(g) {
            push_unsigned_right(&mut out, g.points[0], 5);
            out.push_str(" : ");
            push_unsigned_left(&mut out, g.points[1], 5);
        } else {
            push_right(&mut out, "-", 5);
            out.push_str(" : ");
            push_left(&mut out, "-", 5);
        }
        out.push_str("  ");
        out.push_str(if is_self_game(g) {
            "itself"
        } else {
            &g.players[1]
        });
        end_line(&mut out, start);
        if let Some(label) = game_label(g, &gr.games, &dqs) {
            push_wrapped(&mut out, &format!("        {label}"));
        } else if is_self_game(g) {
            let mean = (g.points[0] + g.points[1]) as f64 / 2.0;
            half |= has_half(mean);
            push_wrapped(
                &mut out,
                &format!(
                    "        self-game: counts {} for {} (the mean of both sides)",
                    points_text(mean),
                    g.players[0]
                ),
            );
        }
    }
    if !dqs.is_empty() {
        out.push('\n');
        out.push_str(&disqualified_lines(&dqs));
    }
    (out, half.then(|| HALF_POINTS_NOTE.to_string()))
}

/// The disqualified members of a group, one item each.
fn disqualified_lines(dqs: &[Disqualification]) -> String {
    let mut out = String::new();
    push_line(
        &mut out,
        "  Disqualified (not ranked; their games of this round do not count):",
    );
    for d in dqs {
        push_wrapped(&mut out, &format!("    {}: {}", d.in_game(), d.reason));
    }
    out
}

/// Who advances from a group: the round's list once it is finished, else
/// the group's own rule (the first half of its ranked teams, plus everyone
/// with the points of the last of them).
pub fn advancing_of_group(gr: &GroupResult, rr: &RoundResult) -> Vec<String> {
    if rr.is_final {
        return Vec::new();
    }
    if !rr.advanced.is_empty() {
        return gr
            .ranking
            .iter()
            .filter(|p| rr.advanced.contains(&p.team))
            .map(|p| p.team.clone())
            .collect();
    }
    let n = gr.ranking.len();
    if n == 0 {
        return Vec::new();
    }
    let cut = gr.ranking[n.div_ceil(2) - 1].points;
    gr.ranking
        .iter()
        .filter(|p| p.points >= cut)
        .map(|p| p.team.clone())
        .collect()
}

fn ranking_lines(ranking: &[Placed], advancing: &[String]) -> String {
    let w = name_width(ranking.iter().map(|p| p.team.as_str()), "team".len());
    let mut out = String::new();
    push_line(
        &mut out,
        &format!("  {:>5}  {:<w$}  {:>8}", "place", "team", "points"),
    );
    for p in ranking {
        push_line(
            &mut out,
            &format!(
                "  {:>5}  {:<w$}  {:>8}{}",
                format!("{}.", p.place),
                p.team,
                points_text(p.points),
                if advancing.contains(&p.team) {
                    "  advances"
                } else {
                    ""
                }
            ),
        );
    }
    out
}

/// GRR: the group's ranking, who advances, and the disqualified members.
pub fn group_ranking(gr: &GroupResult, rr: &RoundResult) -> String {
    let dqs = disqualifications(gr, rr);
    let advancing = advancing_of_group(gr, rr);
    let mut out = ranking_lines(&gr.ranking, &advancing);
    if !dqs.is_empty() {
        out.push('\n');
        out.push_str(&disqualified_lines(&dqs));
    }
    out
}

/// A sentence on who advances from a group (for GRR), or on the final.
pub fn advancing_sentence(gr: &GroupResult, rr: &RoundResult) -> String {
    if rr.is_final {
        return "This is the final round: its ranking is the result of the contest.".into();
    }
    let n = advancing_of_group(gr, rr).len();
    let mut s = format!(
        "The {} marked \"advances\" proceed to round {} (the better half of the \
         ranked teams, and everyone with the points of the last of them).",
        if n == 1 {
            "team".to_string()
        } else {
            format!("{n} teams")
        },
        rr.number + 1
    );
    let all_tied = gr.ranking.windows(2).all(|w| w[0].points == w[1].points);
    if rr.advanced.is_empty() && all_tied && gr.ranking.len() > 1 {
        s.push_str(
            " Should every group of the round be entirely tied, each is cut at \
             exactly half instead; the round summary (RSM) says who advanced.",
        );
    }
    s
}

/// RSM: every group's ranking, who advances, who was disqualified.
pub fn round_summary(rr: &RoundResult) -> String {
    let mut out = String::new();
    for g in &rr.groups {
        let _ = writeln!(out, "Group {} ({} teams):", g.number, g.members.len());
        out.push_str(&group_ranking(g, rr));
        out.push('\n');
    }
    if !rr.is_final {
        let _ = writeln!(
            out,
            "{} teams advance to round {}.",
            rr.advanced.len(),
            rr.number + 1
        );
    }
    out
}

/// The disqualification notice's two failures, each as one item.
pub fn failure_items(gr: &GroupResult, rr: &RoundResult, team: &str) -> (String, String) {
    let dqs = disqualifications(gr, rr);
    let Some(d) = dqs.iter().find(|d| d.team == team) else {
        return (String::new(), String::new());
    };
    let game = |slot: u32| -> String {
        let g = gr.games.iter().find(|g| g.slot == slot);
        let against = match g {
            Some(g) if is_self_game(g) => "against itself".to_string(),
            Some(g) => format!(
                "against {}",
                g.players
                    .iter()
                    .find(|p| ***p != *team)
                    .map(|p| p.to_string())
                    .unwrap_or_default()
            ),
            None => String::new(),
        };
        format!(
            "round {}, group {}, game {slot}{}{against}",
            rr.number,
            gr.number,
            g.map_or(String::new(), |g| format!(" (attempt {}) ", g.attempt))
        )
    };
    let first = match &d.first {
        Some((slot, reason)) => format!("{}: {reason}", game(*slot)),
        None => "(in the same game)".to_string(),
    };
    let second = format!("{}: {}", game(d.game), d.reason);
    (first, second)
}

/// The final ranking (with the final round's disqualified teams).
pub fn final_ranking(res: &Results) -> String {
    let mut out = ranking_lines(&res.winners, &[]);
    if let Some(fin) = res.rounds.iter().find(|r| r.is_final) {
        let dqs: Vec<Disqualification> = fin
            .groups
            .iter()
            .flat_map(|g| disqualifications(g, fin))
            .collect();
        if !dqs.is_empty() {
            out.push('\n');
            out.push_str(&disqualified_lines(&dqs));
        }
    }
    out
}

/// The Evolution for the final mail: how it ended (with the number of
/// generations every text gives), then the ranking with its labelled
/// columns. `None` without an Evolution.
pub fn evolution_text(res: &Results) -> (Option<String>, String) {
    let Some(e) = &res.evolution else {
        return (
            None,
            "  (no Evolution: no strategy was ranked in the final round)\n".into(),
        );
    };
    let f = evolution_facts(e);
    let w = name_width(f.rows.iter().map(|r| r.team.as_str()), "team".len());
    let sw = f.share_label.len().max(8);
    let ew = f.exemplars_label.len();
    let mut out = String::new();
    let last_head = if f.is_cycle {
        format!("  {}", f.last_label)
    } else {
        String::new()
    };
    push_line(
        &mut out,
        &format!(
            "  {:>5}  {:<w$}  {:>sw$}  {:>ew$}{last_head}",
            "place", "team", f.share_label, f.exemplars_label
        ),
    );
    for r in &f.rows {
        let last = if f.is_cycle {
            format!("  {:>lw$}", r.last_exemplars, lw = f.last_label.len())
        } else {
            String::new()
        };
        push_line(
            &mut out,
            &format!(
                "  {:>5}  {:<w$}  {:>sw$}  {:>ew$}{last}",
                format!("{}.", r.place),
                r.team,
                r.share,
                r.exemplars
            ),
        );
    }
    if !f.unranked.is_empty() {
        out.push('\n');
        push_wrapped(
            &mut out,
            &format!("  Died out (no rank): {}.", f.unranked.join(", ")),
        );
    }
    let intro = format!(
        "The {} ranked strategies of the final round started with {} exemplars \
         each, {} in all. {}",
        f.rows.len() + f.unranked.len(),
        f.exemplars_per_strategy,
        f.population,
        f.end
    );
    (Some(intro), out)
}

/// Each team's counted points in a group, from its games (for checks).
pub fn totals_from_games(gr: &GroupResult) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    for m in &gr.members {
        let t: f64 = gr.games.iter().filter_map(|g| counted_for(g, m)).sum();
        out.insert(m.clone(), t);
    }
    out
}

#[cfg(test)]
mod tests;
