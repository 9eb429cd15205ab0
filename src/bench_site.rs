//! `knobeln bench bot-site`: the results site of a bot contest of N bots,
//! written from a store filled with every game the planner plans (the
//! discipline's default repetitions unless `--games` says otherwise), each
//! a real game of the pure rules between scripted players (one per
//! discipline, reused for every game: the figures are the site's, not the
//! bots'), transcripts kept as the config keeps them.
//!
//! Printed: games, pairings, game pages, the floor (one pass that reads
//! and parses every stored game, moves included, and writes nothing) and
//! the site, their time per game, the site's size and the process's peak
//! memory. What it does not do: play bots (see `bench bots`).

use std::time::{Duration, Instant};

use chrono::Utc;

use crate::bench::BenchError;
use crate::config::Config;
use crate::contest::bots::{contest, for_each_game, next_planned_games, store_planned_game};
use crate::discipline::flooding::rules::FloodGame;
use crate::discipline::footsteps::rules as footsteps;
use crate::discipline::morabaraba::rules::MorabarabaGame;
use crate::discipline::play::{Outcome, Played, Setup};
use crate::discipline::ultimatum::rules as ultimatum;
use crate::discipline::Discipline;
use crate::game::lines::{LineGame, Recorded, Step};
use crate::store::Store;

/// The figures of one run.
#[derive(Debug, Clone)]
pub struct BotSiteBench {
    pub discipline: Discipline,
    pub n_bots: usize,
    pub n_games: u64,
    pub n_pairings: u64,
    pub n_game_pages: u64,
    /// Filling the store (not part of the site's cost; the peak memory is
    /// measured after it).
    pub fill: Duration,
    /// Reading and parsing every stored game, nothing written.
    pub floor: Duration,
    pub site: Duration,
    pub site_bytes: u64,
    /// The peak resident memory while the site is written, above what the
    /// process held when it began (kB).
    pub peak_rss_kb: u64,
}

impl BotSiteBench {
    pub fn print(&self) {
        let per = |d: Duration| d.as_secs_f64() * 1e6 / self.n_games.max(1) as f64;
        println!(
            "bot site, {} with {} bots: {} games on {} pairing pages, {} game pages",
            self.discipline.title(),
            self.n_bots,
            self.n_games,
            self.n_pairings,
            self.n_game_pages
        );
        println!(
            "  floor (read and parse every game):  {:>8.2} s  {:>8.1} µs per game",
            self.floor.as_secs_f64(),
            per(self.floor)
        );
        println!(
            "  site (every page written):          {:>8.2} s  {:>8.1} µs per game ({:.1}× the floor)",
            self.site.as_secs_f64(),
            per(self.site),
            self.site.as_secs_f64() / self.floor.as_secs_f64().max(1e-9)
        );
        println!(
            "  site size {:.1} MB, memory added while writing {:.1} MB (store filled in {:.1} s)",
            self.site_bytes as f64 / 1e6,
            self.peak_rss_kb as f64 / 1024.0,
            self.fill.as_secs_f64()
        );
    }
}

/// Plays `game` with `answer(game, seat, last line sent to it)` for every
/// line asked, as the referee drives it; returns the recorded game.
fn scripted<G: LineGame>(
    mut game: Recorded<G>,
    mut answer: impl FnMut(&G, usize, &str) -> String,
) -> Recorded<G> {
    let mut last = vec![String::new(); game.n_seats()];
    for _ in 0..10_000_000 {
        match game.next() {
            Step::Send { seat, lines } => {
                if let Some(l) = lines.last() {
                    last[seat] = l.clone();
                }
            }
            Step::Expect { seat } => {
                let line = answer(&game.game, seat, &last[seat]);
                if game.reply(seat, &line).is_err() {
                    let _ = game.next();
                    break;
                }
            }
            Step::Over { .. } => break,
        }
    }
    game
}

/// One game of the discipline between scripted players: its record with
/// the transcript.
fn template(setup: &Setup) -> Played {
    let cap = crate::discipline::play::TRANSCRIPT_CAP;
    let d = setup.discipline();
    let (outcome, transcript) = match d {
        Discipline::ULTIMATUM => {
            let p = setup.get::<ultimatum::Params>();
            let g = scripted(
                Recorded::new(ultimatum::Match::new(*p), cap),
                |g, _, last| {
                    if !last.starts_with("ANGEBOT") {
                        format!("{}", 300 + g.turn() % 400)
                    } else if g.turn() % 3 == 0 {
                        "NEIN".into()
                    } else {
                        "JA".into()
                    }
                },
            );
            (g.outcome().map(|o| Outcome::new(d, o)), g.transcript)
        }
        Discipline::FLOODING => {
            let s = setup.get::<crate::discipline::flooding::FloodSetup>();
            let g = scripted(
                Recorded::new(FloodGame::new(&s.island, s.params, s.seed), cap),
                |_, _, _| "GO CURRENT".into(),
            );
            (g.outcome().map(|o| Outcome::new(d, o)), g.transcript)
        }
        Discipline::FOOTSTEPS => {
            let p = setup.get::<footsteps::Params>();
            let g = scripted(
                Recorded::new(footsteps::Game::new(*p), cap),
                |g, seat, _| format!("{}", 1 + (g.turn() as usize + seat) % 3),
            );
            (g.outcome().map(|o| Outcome::new(d, o)), g.transcript)
        }
        _ => {
            let mut named = [false; 2];
            let mut k = 0usize;
            let g = scripted(Recorded::new(MorabarabaGame::new(), cap), |g, seat, _| {
                if !named[seat] {
                    named[seat] = true;
                    return format!("bench{seat}");
                }
                k += 7;
                let moves = g.position().legal_moves();
                moves
                    .get(k % moves.len().max(1))
                    .map(|m| m.to_line())
                    .unwrap_or_default()
            });
            (g.outcome().map(|o| Outcome::new(d, o)), g.transcript)
        }
    };
    let n = setup.seats();
    Played {
        outcome,
        failures: Vec::new(),
        cpu_ms: vec![3; n],
        cpu_us: vec![3000; n],
        wall_ms: 10,
        stderr: vec![String::new(); n],
        transcript: Some(transcript),
        transcript_truncated: false,
        moves: None,
        folders: None,
    }
}

fn dir_bytes(dir: &std::path::Path) -> u64 {
    let mut n = 0;
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            n += if p.is_dir() {
                dir_bytes(&p)
            } else {
                e.metadata().map(|m| m.len()).unwrap_or(0)
            };
        }
    }
    n
}

/// Fills a store with a contest of `n_bots` and every planned game, then
/// writes its site. `repetitions` overrides the discipline's default
/// (ultimatum repetitions, flooding runs, FootSteps games per pair).
pub fn bot_site_bench(
    d: Discipline,
    n_bots: usize,
    repetitions: Option<u32>,
) -> Result<BotSiteBench, BenchError> {
    let tmp = tempfile::tempdir()?;
    let mut config = Config {
        database: tmp.path().join("knobeln.db"),
        ..Config::default()
    };
    config.contest.discipline = d;
    if let Some(r) = repetitions {
        config.ultimatum.repetitions = r;
        config.flooding.runs = r;
        config.footsteps.games_per_pair = r;
    }
    let mut store = Store::open(&config.database)?;
    let entries: Vec<serde_json::Value> = (1..=n_bots)
        .map(|i| serde_json::json!({"team": i, "version": i, "name": format!("bot{i:04}")}))
        .collect();
    let islands: Vec<(String, String)> = if d == Discipline::FLOODING {
        crate::discipline::flooding::TEST_ISLANDS
            .iter()
            .map(|(n, t)| (n.to_string(), t.to_string()))
            .collect()
    } else {
        Vec::new()
    };
    store.conn().execute(
        "INSERT INTO bot_contests (discipline, seed, config, entries, islands, state, started_at) \
         VALUES (?1, 1, '{}', ?2, ?3, 'finished', ?4)",
        rusqlite::params![
            d.name(),
            serde_json::to_string(&entries)?,
            serde_json::to_string(&islands)?,
            Utc::now().to_rfc3339()
        ],
    )?;
    let c = contest(store.conn())?.ok_or("no contest")?;
    let t0 = Instant::now();
    let mut templates: Vec<(Setup, Played)> = Vec::new();
    loop {
        // The planner's games, then (FootSteps) the tie replays they call for.
        let planned = next_planned_games(&store, &c, &config)?;
        if planned.is_empty() {
            break;
        }
        let tx = store.conn_mut().transaction()?;
        let now = Utc::now();
        for (i, g) in planned.iter().enumerate() {
            if !templates.iter().any(|(s, _)| s == &g.setup) {
                templates.push((g.setup.clone(), template(&g.setup)));
            }
            let t = &templates
                .iter()
                .find(|(s, _)| s == &g.setup)
                .expect("made")
                .1;
            // The transcript is cloned only for a game that keeps it.
            let played = Played {
                transcript: if g.keeps_transcript {
                    t.transcript.clone()
                } else {
                    None
                },
                outcome: t.outcome.clone(),
                failures: Vec::new(),
                cpu_ms: t.cpu_ms.clone(),
                cpu_us: t.cpu_us.clone(),
                wall_ms: t.wall_ms,
                stderr: t.stderr.clone(),
                transcript_truncated: false,
                moves: None,
                folders: None,
            };
            // FootSteps: each game of a pair goes to one side or the other,
            // so that ties are broken as in a real field.
            let played = match played
                .outcome
                .as_ref()
                .and_then(|o| o.try_get::<footsteps::GameOutcome>())
            {
                Some(o) => {
                    let mut o = o.clone();
                    o.winner = Some((i + g.seats[0].0 as usize) % 2);
                    Played {
                        outcome: Some(Outcome::new(Discipline::FOOTSTEPS, o)),
                        ..played
                    }
                }
                None => played,
            };
            store_planned_game(&tx, &c, &config, g, played, now)?;
        }
        tx.commit()?;
    }
    drop(templates);
    let fill = t0.elapsed();
    let t1 = Instant::now();
    let mut n = 0u64;
    for_each_game(&store, &c, &config, |_| {
        n += 1;
        Ok(())
    })?;
    let floor = t1.elapsed();
    let results = crate::contest::bots::results(&store, &c, &config)?.ok_or("no results")?;
    let site_dir = tmp.path().join("site");
    // The peak from here on is the site's (filling the store held the plan).
    let _ = std::fs::write("/proc/self/clear_refs", "5");
    let rss_before = crate::bench::status_kb("VmRSS:");
    let t2 = Instant::now();
    let written = crate::site::bots::write(&site_dir, &store, &c, &config, &results)?;
    let site = t2.elapsed();
    Ok(BotSiteBench {
        discipline: d,
        n_bots,
        n_games: written.n_games.max(n),
        n_pairings: written.n_pairings,
        n_game_pages: written.n_game_pages,
        fill,
        floor,
        site,
        site_bytes: dir_bytes(&site_dir),
        peak_rss_kb: crate::bench::status_kb("VmHWM:").saturating_sub(rss_before),
    })
}
