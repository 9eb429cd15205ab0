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
use crate::discipline::seam::{ContestView, PlannedGame, SetupOfKey};
use crate::discipline::FloodingConfig;

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

fn parsed(view: &ContestView<'_>) -> Result<Vec<Island>, String> {
    view.materials
        .iter()
        .map(|(n, t)| Island::parse(t).map_err(|e| format!("island {n}: {e}")))
        .collect()
}

fn format(view: &ContestView<'_>) -> FloodingFormat {
    FloodingFormat {
        runs: view.sections.flooding.runs,
    }
}

fn island_ids(view: &ContestView<'_>) -> Vec<IslandId> {
    (0..view.materials.len() as u32).map(IslandId).collect()
}

/// Every run not stored yet.
pub fn next_games(
    view: &ContestView<'_>,
    done: &BTreeMap<String, String>,
) -> Result<Vec<PlannedGame>, String> {
    let islands = parsed(view)?;
    let params = view.sections.flooding.params();
    Ok(
        planner::plan(view.seed, view.teams, &island_ids(view), format(view))
            .into_iter()
            .filter_map(|r| {
                let key = serde_json::to_string(&FloodKey {
                    island: r.island.0,
                    run: r.run,
                    team: r.team,
                })
                .expect("json");
                (!done.contains_key(&key)).then(|| PlannedGame {
                    key,
                    seats: vec![r.team],
                    setup: super::data::setup(islands[r.island.0 as usize].clone(), params, r.seed),
                })
            })
            .collect(),
    )
}

/// The ranking from the stored runs.
pub fn results(view: &ContestView<'_>, done: &BTreeMap<String, String>) -> Result<Results, String> {
    let results: Vec<RunResult> = done
        .values()
        .map(|v| serde_json::from_str(v).map_err(|e| e.to_string()))
        .collect::<Result<_, _>>()?;
    let table = planner::rank(
        view.teams,
        &island_ids(view),
        format(view),
        &results,
        view.names,
    )
    .map_err(|e| e.to_string())?;
    Ok(Results::new(
        super::data::DISCIPLINE,
        FloodResults {
            islands: view.materials.iter().map(|(n, _)| n.clone()).collect(),
            table,
        },
    ))
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
