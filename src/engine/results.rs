//! The results of a tournament as data, rebuilt from the store alone (so an
//! interrupted and resumed run prints exactly what an uninterrupted one
//! does). This is the `knobeln tournament --json` object.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use super::prepare::Rejected;
use super::run::{outcome_of, TournamentConfig};
use super::EngineError;
use crate::store::Store;
use crate::tournament::evolution::{evolve, payoff_matrix};
use crate::tournament::ranking::{rank_schedule, GroupRanking};
use crate::tournament::schedule::{AttemptStatus, GroupSchedule};
use crate::tournament::TeamId;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Results {
    pub seed: u64,
    pub rejected: Vec<Rejected>,
    pub rounds: Vec<RoundResult>,
    pub winners: Vec<Placed>,
    pub evolution: Option<EvolutionResult>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RoundResult {
    pub number: u32,
    pub is_final: bool,
    pub groups: Vec<GroupResult>,
    pub advanced: Vec<String>,
    pub disqualified: Vec<DisqualifiedTeam>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct GroupResult {
    pub number: u32,
    pub members: Vec<String>,
    pub ranking: Vec<Placed>,
    pub games: Vec<GameResult>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Placed {
    pub team: String,
    pub points: f64,
    pub place: u32,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct DisqualifiedTeam {
    pub team: String,
    pub reason: String,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct GameFailure {
    pub player: usize,
    pub reason: String,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct GameResult {
    pub slot: u32,
    pub players: [String; 2],
    pub points: [u64; 2],
    pub seed: u64,
    pub attempt: u32,
    pub failure: Option<GameFailure>,
    pub failures: Vec<GameFailure>,
    pub counted: bool,
    /// counted, discarded (first failure: rescheduled), void (a player was
    /// disqualified), cancelled (not played: a player was already disqualified).
    pub status: &'static str,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct EvolutionResult {
    pub population: u64,
    pub exemplars_per_strategy: u64,
    pub generations: Vec<Generation>,
    pub end: crate::tournament::EvolutionEnd,
    pub ranking: Vec<EvolutionPlaced>,
    pub unranked: Vec<String>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Generation {
    pub counts: BTreeMap<String, u64>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct EvolutionPlaced {
    pub team: String,
    pub fraction: f64,
    pub count: u64,
    pub place: u32,
}

fn placed(r: &GroupRanking, name: &dyn Fn(TeamId) -> String) -> Vec<Placed> {
    r.entries
        .iter()
        .map(|e| Placed {
            team: name(e.team),
            points: e.points.as_f64(),
            place: e.place,
        })
        .collect()
}

/// Rebuilds the results of `tournament` from the store.
pub fn results(
    store: &Store,
    tournament: i64,
    rejected: Vec<Rejected>,
) -> Result<Results, EngineError> {
    let row = store.tournament(tournament)?;
    let config: TournamentConfig = serde_json::from_str(&row.config)
        .map_err(|e| EngineError::Mismatch(format!("tournament config: {e}")))?;
    let names: HashMap<TeamId, String> = store
        .entries(tournament)?
        .into_iter()
        .map(|e| (e.team, e.name))
        .collect();
    let name = |t: TeamId| {
        names
            .get(&t)
            .cloned()
            .unwrap_or_else(|| format!("team {t}"))
    };
    let mut out = Results {
        seed: row.seed,
        rejected,
        rounds: Vec::new(),
        winners: Vec::new(),
        evolution: None,
    };
    let mut round = 1;
    while let Some(r) = store.round(tournament, round)? {
        let groups = store.groups(tournament, round)?;
        let mut rr = RoundResult {
            number: round,
            is_final: r.is_final,
            groups: Vec::new(),
            advanced: Vec::new(),
            disqualified: Vec::new(),
        };
        let mut rankings = Vec::new();
        let mut schedules = Vec::new();
        for (g, members) in groups.iter().enumerate() {
            let group = g as u32 + 1;
            let stored = store.game_outcomes(tournament, round, group)?;
            let by_slot: HashMap<u32, &crate::store::StoredGame> =
                stored.iter().map(|s| (s.key.slot, s)).collect();
            let sched = GroupSchedule::replay(
                row.seed,
                round,
                group,
                members,
                stored.iter().map(|s| (s.key, outcome_of(&s.record))),
            )?;
            let games = sched
                .attempts()
                .iter()
                .filter(|a| a.status != AttemptStatus::Pending)
                .map(|a| {
                    // A cancelled game counts as not played, even if a
                    // parallel run happened to play it before its turn.
                    let rec = if a.status == AttemptStatus::Cancelled {
                        None
                    } else {
                        by_slot.get(&a.game.key.slot).map(|s| &s.record)
                    };
                    let failures: Vec<GameFailure> = rec
                        .map(|r| {
                            r.failures
                                .iter()
                                .map(|f| GameFailure {
                                    player: f.player,
                                    reason: f.reason.clone(),
                                })
                                .collect()
                        })
                        .unwrap_or_default();
                    GameResult {
                        slot: a.game.key.slot,
                        players: [name(a.game.players[0]), name(a.game.players[1])],
                        points: rec.map(|r| r.points).unwrap_or([0, 0]),
                        seed: a.game.seed,
                        attempt: a.game.attempt,
                        failure: failures.first().cloned(),
                        failures,
                        counted: a.status == AttemptStatus::Counted,
                        status: match a.status {
                            AttemptStatus::Counted => "counted",
                            AttemptStatus::Discarded { .. } => "discarded",
                            AttemptStatus::Void => "void",
                            AttemptStatus::Cancelled => "cancelled",
                            AttemptStatus::Pending => "pending",
                        },
                    }
                })
                .collect();
            let ranking = if sched.is_finished() {
                rank_schedule(&sched, &name)?
            } else {
                GroupRanking {
                    entries: Vec::new(),
                    disqualified: Vec::new(),
                }
            };
            rr.groups.push(GroupResult {
                number: group,
                members: members.iter().map(|&t| name(t)).collect(),
                ranking: placed(&ranking, &name),
                games,
            });
            for d in sched.disqualified() {
                rr.disqualified.push(DisqualifiedTeam {
                    team: name(d.team),
                    reason: d.reason.clone(),
                });
            }
            rankings.push(ranking);
            schedules.push(sched);
        }
        if r.finished && !r.is_final {
            rr.advanced = super::run::advancing_field(&rankings, r.field.len())
                .into_iter()
                .map(name)
                .collect();
            rr.advanced.sort();
        }
        if r.is_final && r.finished {
            out.winners = placed(&rankings[0], &name);
            let strategies: Vec<TeamId> = rankings[0].entries.iter().map(|e| e.team).collect();
            if !strategies.is_empty() {
                let payoff = payoff_matrix(&strategies, &schedules[0].counted_games())?;
                let evo = evolve(&strategies, &payoff, &config.evolution)?;
                out.evolution = Some(EvolutionResult {
                    population: evo.total,
                    exemplars_per_strategy: evo.exemplars_per_strategy,
                    generations: evo
                        .generations
                        .iter()
                        .map(|g| Generation {
                            counts: strategies
                                .iter()
                                .zip(g)
                                .map(|(t, c)| (name(*t), *c))
                                .collect(),
                        })
                        .collect(),
                    end: evo.end.clone(),
                    ranking: evo
                        .ranking
                        .iter()
                        .map(|e| EvolutionPlaced {
                            team: name(e.team),
                            fraction: e.fraction,
                            count: e.count,
                            place: e.place,
                        })
                        .collect(),
                    unranked: evo.unranked.iter().map(|&t| name(t)).collect(),
                });
            }
        }
        out.rounds.push(rr);
        round += 1;
    }
    Ok(out)
}
