//! The flooding island's side of a contest run: the islands a contest
//! plays (the teams' and the organizer's, those drawn from the seed), every
//! bot's runs on every island, the ranking by the summed mean rounds, and
//! a stored run's setup from its key.
//!
//! What it deliberately does not do: play, store or mail anything (the
//! contest run, `crate::contest::bots`, asks through the seam).

use std::collections::BTreeMap;

use super::data::FloodResults;
use super::planner::{self, FloodKey, FloodingFormat, IslandId, RunResult};
use super::rules::Island;
use crate::discipline::data::Results;
use crate::discipline::seam::{
    ContestState, ContestView, PlannedGame, Planner, SetupOfKey, StoredSet,
};
use crate::discipline::FloodingConfig;
use crate::tournament::TeamId;

/// The islands of a contest, in order: each team's (named after the team,
/// `sent`), the organizer's files, those drawn from the seed. Each is
/// parsed; two of one name are refused.
pub fn islands(
    config: &FloodingConfig,
    seed: u64,
    sent: &[(String, String)],
) -> Result<Vec<(String, String)>, String> {
    let mut islands: Vec<(String, String)> = sent.to_vec();
    for path in &config.islands {
        let name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let text = std::fs::read_to_string(path).map_err(|e| format!("island {name}: {e}"))?;
        Island::parse(&text).map_err(|e| format!("island {name}: {e}"))?;
        islands.push((name, text));
    }
    for (name, island) in super::islands::drawn_islands(seed, config.drawn_island_count()) {
        islands.push((name, island.to_text()));
    }
    if islands.is_empty() {
        return Err(
            "the flooding island has no island to play: `[flooding] islands` names \
                    no file, no team sent an island, and `[flooding] drawn_islands` is 0 \
                    (set it to 3, the default)"
                .into(),
        );
    }
    let mut names: Vec<&str> = islands.iter().map(|(n, _)| n.as_str()).collect();
    names.sort_unstable();
    if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
        return Err(format!(
            "island {}: two islands have this name (a team's island is named after the \
             team): rename the organizer's island file",
            w[0]
        ));
    }
    Ok(islands)
}

fn format(view: &ContestView<'_>) -> FloodingFormat {
    FloodingFormat {
        runs: view.sections.flooding.runs,
    }
}

/// The contest's planner: the plan's runs ([`planner::plan`]'s order:
/// island by island, run by run, bot by bot) by their place in it, which
/// are stored, and each bot's runs and rounds summed per island (what the
/// ranking needs), not the runs' results.
pub struct FloodingPlanner<'a> {
    view_teams: &'a [TeamId],
    names: &'a dyn Fn(TeamId) -> String,
    materials: &'a [(String, String)],
    params: super::rules::Params,
    seed: u64,
    format: FloodingFormat,
    /// A team's place in the entry order.
    place: BTreeMap<TeamId, u64>,
    stored: StoredSet,
    /// (team, island) → (runs, rounds).
    sums: BTreeMap<(TeamId, IslandId), (u32, u64)>,
    /// The islands, parsed when the first runs are handed out (a table
    /// needs none).
    islands: Option<Vec<Island>>,
}

impl<'a> FloodingPlanner<'a> {
    pub fn new(view: &ContestView<'a>) -> FloodingPlanner<'a> {
        let format = format(view);
        let games = view.teams.len() as u64 * view.materials.len() as u64 * u64::from(format.runs);
        FloodingPlanner {
            view_teams: view.teams,
            names: view.names,
            materials: view.materials,
            params: view.sections.flooding.params(),
            seed: view.seed,
            format,
            place: (0u64..)
                .zip(view.teams.iter())
                .map(|(i, &t)| (t, i))
                .collect(),
            stored: StoredSet::new(games),
            sums: BTreeMap::new(),
            islands: None,
        }
    }
}

impl Planner for FloodingPlanner<'_> {
    fn add(&mut self, key: &str, result: &str) -> Result<(), String> {
        let k: FloodKey = serde_json::from_str(key).map_err(|e| format!("game key {key}: {e}"))?;
        let r: RunResult = serde_json::from_str(result).map_err(|e| e.to_string())?;
        let team = *self
            .place
            .get(&k.team)
            .ok_or_else(|| planner::FloodingError::UnknownTeam(k.team).to_string())?;
        if k.island as usize >= self.materials.len() {
            return Err(planner::FloodingError::UnknownIsland(IslandId(k.island)).to_string());
        }
        if k.run >= self.format.runs {
            return Err(planner::FloodingError::RunOutOfRange {
                run: k.run,
                runs: self.format.runs,
            }
            .to_string());
        }
        let n = self.view_teams.len() as u64;
        let i = (u64::from(k.island) * u64::from(self.format.runs) + u64::from(k.run)) * n + team;
        self.stored.insert(i).map_err(|_| {
            planner::FloodingError::Duplicate {
                team: k.team,
                island: IslandId(k.island),
                run: k.run,
            }
            .to_string()
        })?;
        let e = self.sums.entry((k.team, IslandId(k.island))).or_default();
        e.0 += 1;
        e.1 += u64::from(r.rounds);
        Ok(())
    }

    fn next_games(&mut self, limit: usize) -> Result<Vec<PlannedGame>, String> {
        let missing = self.stored.missing(limit);
        if missing.is_empty() {
            return Ok(Vec::new());
        }
        if self.islands.is_none() {
            let islands = self
                .materials
                .iter()
                .map(|(n, t)| Island::parse(t).map_err(|e| format!("island {n}: {e}")))
                .collect::<Result<_, _>>()?;
            self.islands = Some(islands);
        }
        let islands = self.islands.as_ref().expect("parsed");
        let n = self.view_teams.len() as u64;
        let runs = u64::from(self.format.runs);
        Ok(missing
            .into_iter()
            .map(|i| {
                let team = self.view_teams[(i % n) as usize];
                let run = ((i / n) % runs) as u32;
                let island = IslandId((i / n / runs) as u32);
                let key = serde_json::to_string(&FloodKey {
                    island: island.0,
                    run,
                    team,
                })
                .expect("json");
                PlannedGame {
                    key,
                    seats: vec![team],
                    setup: super::data::setup(
                        islands[island.0 as usize].clone(),
                        self.params,
                        planner::game_seed(self.seed, island, run),
                    ),
                }
            })
            .collect())
    }

    fn results(&self, _state: ContestState) -> Result<Option<Results>, String> {
        let island_ids: Vec<IslandId> = (0..self.materials.len() as u32).map(IslandId).collect();
        let table = planner::table_of_sums(
            self.view_teams,
            &island_ids,
            self.format,
            &self.sums,
            self.stored.stored(),
            self.names,
        );
        Ok(Some(Results::new(
            super::data::DISCIPLINE,
            FloodResults {
                islands: self.materials.iter().map(|(n, _)| n.clone()).collect(),
                table,
            },
        )))
    }
}

/// What makes a stored run's setup (its island and seed from the key)
/// and its island's name: the islands parsed once.
pub fn stored_setups(view: &ContestView<'_>) -> Result<SetupOfKey, String> {
    let islands: Vec<(String, Island)> = view
        .materials
        .iter()
        .map(|(n, t)| {
            Island::parse(t)
                .map(|i| (n.clone(), i))
                .map_err(|e| format!("island {n}: {e}"))
        })
        .collect::<Result<_, _>>()?;
    let params = view.sections.flooding.params();
    let seed = view.seed;
    Ok(Box::new(move |key| {
        let k: FloodKey = serde_json::from_str(key).map_err(|e| format!("game key {key}: {e}"))?;
        let (name, island) = islands
            .get(k.island as usize)
            .ok_or_else(|| format!("no island {}", k.island))?;
        Ok((
            super::data::setup(
                island.clone(),
                params,
                planner::game_seed(seed, IslandId(k.island), k.run),
            ),
            name.clone(),
        ))
    }))
}

/// The contest's islands on the results page: name, size, and the
/// island's file in the seed's format (`island/K.txt`) to play at home.
pub fn islands_html(islands: &[(String, String)]) -> String {
    let mut h = String::from(
        "<h2>Islands</h2>\n<p>The islands this contest played, published with \
         its results (the kit's test islands are not among them). Each file is \
         in the island format of the kit: <code>python3 referee.py --island \
         FILE</code> plays it at home.</p>\n<ul>\n",
    );
    for (k, (name, text)) in islands.iter().enumerate() {
        let size = Island::parse(text)
            .map(|i| format!("{} × {}", i.width(), i.height()))
            .unwrap_or_default();
        h.push_str(&format!(
            "<li><a href=\"island/{}.txt\">{}</a> ({size})</li>\n",
            k + 1,
            crate::draw::escape(name)
        ));
    }
    h.push_str("</ul>\n");
    h
}
