//! `knobeln bench bot-site`: the results site of a bot contest of N bots,
//! written from a store filled with every game the planner plans (the
//! discipline's default repetitions unless `--repetitions` says
//! otherwise), each a real game of the pure rules between the discipline's
//! scripted players (its seam's `scripted_players`, one game per setup
//! reused for every game of it: the figures are the site's, not the
//! bots'), transcripts kept as the config keeps them. It names no
//! discipline.
//!
//! Printed: games, pairings, game pages, the floor (one pass that reads
//! and parses every stored game, moves included, and writes nothing) and
//! the site, their time and the process's CPU time per game, the site's
//! size and the process's peak memory. What it does not do: play bots
//! (see `bench bots`).

use std::time::{Duration, Instant};

use chrono::Utc;

use crate::bench::{cpu_time, BenchError, CpuOf};
use crate::config::Config;
use crate::contest::bots::{contest, for_each_game, for_each_planned_batch, store_planned_game};
use crate::discipline::play::{Played, Setup};
use crate::discipline::seam::{BotDiscipline, ScriptedPlayers};
use crate::discipline::Discipline;
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
    /// The process's CPU time filling the store: the planner, the
    /// scripted games and the storing (the benchmark's own cost, beside
    /// the server's storing).
    pub fill_cpu: Duration,
    /// Reading and parsing every stored game, nothing written.
    pub floor: Duration,
    pub site: Duration,
    /// The process's CPU time (user and system) of the floor and of the
    /// site: the figures to compare on a loaded machine.
    pub floor_cpu: Duration,
    pub site_cpu: Duration,
    pub site_bytes: u64,
    /// The folder the site was written in (under `$TMPDIR`) and its file
    /// system: on ext4 without a journal each page's file costs a search
    /// past recent removals.
    pub folder: crate::bench::BenchFolder,
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
            "  floor (read and parse every game):  {:>8.2} s  {:>8.1} µs per game; CPU {:.2} s, {:.1} µs per game",
            self.floor.as_secs_f64(),
            per(self.floor),
            self.floor_cpu.as_secs_f64(),
            per(self.floor_cpu)
        );
        println!(
            "  site (every page written):          {:>8.2} s  {:>8.1} µs per game ({:.1}× the floor)",
            self.site.as_secs_f64(),
            per(self.site),
            self.site.as_secs_f64() / self.floor.as_secs_f64().max(1e-9)
        );
        println!(
            "  site's CPU:                          {:>8.2} s  {:>8.1} µs per game ({:.1}× the floor's CPU)",
            self.site_cpu.as_secs_f64(),
            per(self.site_cpu),
            self.site_cpu.as_secs_f64() / self.floor_cpu.as_secs_f64().max(1e-9)
        );
        println!("  {}", self.folder.line("the site"));
        println!(
            "  site size {:.1} MB, memory added while writing {:.1} MB (store filled in {:.1} s)",
            self.site_bytes as f64 / 1e6,
            self.peak_rss_kb as f64 / 1024.0,
            self.fill.as_secs_f64()
        );
        println!(
            "  store's fill (planner, scripted games, storing): CPU {:.2} s, {:.1} µs per game",
            self.fill_cpu.as_secs_f64(),
            per(self.fill_cpu)
        );
    }
}

/// One game of the discipline between its scripted players
/// ([`ScriptedPlayers::play`]): its record with the transcript.
fn template(players: &ScriptedPlayers, setup: &Setup) -> Played {
    let (outcome, transcript) = (players.play)(setup);
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

/// Distinct setups whose scripted game [`Templates`] keeps (the flooding
/// island's 3 islands × 1000 runs fit; a setup past them is played anew
/// each time it comes, so memory stays bounded whatever the field).
pub(crate) const CACHED_SETUPS: usize = 4096;

/// The scripted game of each distinct setup, found by the setup's JSON
/// form in a hash map: one serialisation a game, not a comparison with
/// every kept setup (which, by JSON form, made the flooding island's
/// 3000 setups quadratic in the games). A setup's transcript is kept only
/// once a game of it keeps one (the flooding island's first run of each
/// island: 3 transcripts beside 3000 outcomes), so the memory is the
/// outcomes'.
#[derive(Default)]
struct Templates {
    by_setup: std::collections::HashMap<String, Played>,
    /// The game of a setup past the bound (played anew each time it comes).
    spare: Option<(String, Played)>,
}

impl Templates {
    /// The scripted game of `setup`, with its transcript when `keep`.
    fn of(&mut self, players: &ScriptedPlayers, setup: &Setup, keep: bool) -> &Played {
        let json = serde_json::to_string(setup).expect("a setup has a JSON form");
        let fits = |p: &Played| !keep || p.transcript.is_some();
        if self.by_setup.get(&json).is_some_and(fits) {
            return &self.by_setup[&json];
        }
        let mut t = template(players, setup);
        if !keep {
            t.transcript = None;
        }
        if self.by_setup.len() < CACHED_SETUPS || self.by_setup.contains_key(&json) {
            self.by_setup.insert(json.clone(), t);
            return &self.by_setup[&json];
        }
        &self.spare.insert((json, t)).1
    }
}

/// The bytes of the files under `dir`.
pub(crate) fn dir_bytes(dir: &std::path::Path) -> u64 {
    crate::bench::dir_size(dir).1
}

/// Fills a store with a contest of `n_bots` and every planned game, then
/// writes its site. `repetitions` overrides how often each pairing is
/// played (the key its discipline's scripted players name: ultimatum
/// repetitions, flooding runs, FootSteps games per pair). The contest's
/// materials are those its start would take from the default
/// configuration and seed 1 (the flooding island: three drawn islands).
pub fn bot_site_bench(
    d: Discipline,
    n_bots: usize,
    repetitions: Option<u32>,
) -> Result<BotSiteBench, BenchError> {
    let (
        ScriptedContest {
            config, store, tmp, ..
        },
        fill,
    ) = filled_contest(d, n_bots, repetitions)?;
    let c = contest(store.conn(), d)?.ok_or("no contest")?;
    site_of_filled(d, n_bots, (config, store, tmp), c, fill)
}

/// A fresh store holding a finished contest of `n_bots` of `d` with every
/// planned game stored (the scripted players' games, as
/// [`bot_site_bench`] describes), and the time it took to fill.
pub(crate) fn filled_contest(
    d: Discipline,
    n_bots: usize,
    repetitions: Option<u32>,
) -> Result<(ScriptedContest, Fill), BenchError> {
    fill_started(ScriptedContest::start(
        d,
        n_bots,
        repetitions,
        ContestState::Finished,
    )?)
}

/// [`filled_contest`] of a contest started already (its config changed
/// as a test needs: the games keep their transcripts as it says).
pub(crate) fn fill_started(s: ScriptedContest) -> Result<(ScriptedContest, Fill), BenchError> {
    let ScriptedContest {
        seam,
        players,
        config,
        store,
        tmp,
    } = s;
    let d = config.contest.discipline;
    let c = contest(store.conn(), d)?.ok_or("no contest")?;
    // A throwaway store need not wait for the disk (each planned batch is
    // one transaction, below).
    store.conn().execute_batch("PRAGMA synchronous = OFF")?;
    let t0 = Instant::now();
    let cpu0 = cpu_time(CpuOf::Process);
    let mut templates = Templates::default();
    // The planner's games in batches, then (FootSteps) the tie replays
    // they call for. A batch's `i` restarts at 0, as a round's did when
    // the planner handed out a round at once: the batches are even in
    // size, so FootSteps' alternating winner (`k % 2`) is the same. A
    // batch is stored in one transaction, as the contest run stores its
    // results in batches (`store_planned_game` joins the caller's).
    for_each_planned_batch(&store, &c, &config, |planned| {
        let now = Utc::now();
        let tx = store.conn().unchecked_transaction()?;
        for (i, g) in planned.iter().enumerate() {
            let t = templates.of(&players, &g.setup, g.keeps_transcript);
            // The transcript is cloned only for a game that keeps it; the
            // outcome as the discipline varies it by game (FootSteps' ties
            // broken as in a real field).
            let k = i + g.seats[0].0 as usize;
            let played = Played {
                transcript: if g.keeps_transcript {
                    t.transcript.clone()
                } else {
                    None
                },
                outcome: t.outcome.as_ref().map(|o| (players.vary)(o, k)),
                failures: Vec::new(),
                cpu_ms: t.cpu_ms.clone(),
                cpu_us: t.cpu_us.clone(),
                wall_ms: t.wall_ms,
                stderr: t.stderr.clone(),
                transcript_truncated: false,
                moves: None,
                folders: None,
            };
            store_planned_game(&tx, &c, &config, g, played, now)?;
        }
        tx.commit()?;
        Ok::<(), BenchError>(())
    })?;
    drop(templates);
    let fill = Fill {
        wall: t0.elapsed(),
        cpu: cpu_time(CpuOf::Process).saturating_sub(cpu0),
    };
    Ok((
        ScriptedContest {
            seam,
            players,
            config,
            store,
            tmp,
        },
        fill,
    ))
}

/// How long [`filled_contest`] took: wall and the process's CPU.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fill {
    pub wall: Duration,
    pub cpu: Duration,
}

/// Writes the site of a contest [`filled_contest`] made, against one pass
/// that reads every game.
fn site_of_filled(
    d: Discipline,
    n_bots: usize,
    (config, store, tmp): (Config, Store, tempfile::TempDir),
    c: crate::store::bots::BotContest,
    fill: Fill,
) -> Result<BotSiteBench, BenchError> {
    let cpu1 = cpu_time(CpuOf::Process);
    let t1 = Instant::now();
    let mut n = 0u64;
    for_each_game(&store, &c, &config, |_| {
        n += 1;
        Ok(())
    })?;
    let floor = t1.elapsed();
    let floor_cpu = cpu_time(CpuOf::Process).saturating_sub(cpu1);
    let results = crate::contest::bots::results(&store, &c, &config)?.ok_or("no results")?;
    let site_dir = tmp.path().join("site");
    // The peak from here on is the site's (filling the store held the plan).
    let _ = std::fs::write("/proc/self/clear_refs", "5");
    let rss_before = crate::bench::status_kb("VmRSS:");
    let cpu2 = cpu_time(CpuOf::Process);
    let t2 = Instant::now();
    let written = crate::site::bots::write(&site_dir, &store, &c, &config, &results)?;
    let site = t2.elapsed();
    let site_cpu = cpu_time(CpuOf::Process).saturating_sub(cpu2);
    Ok(BotSiteBench {
        discipline: d,
        n_bots,
        n_games: written.n_games.max(n),
        n_pairings: written.n_pairings,
        n_game_pages: written.n_game_pages,
        fill: fill.wall,
        fill_cpu: fill.cpu,
        floor,
        site,
        floor_cpu,
        site_cpu,
        site_bytes: dir_bytes(&site_dir),
        folder: crate::bench::BenchFolder::of(&site_dir),
        peak_rss_kb: crate::bench::status_kb("VmHWM:").saturating_sub(rss_before),
    })
}

/// A fresh store (in a folder of its own, gone with it) holding a bot
/// contest of `d` between `n_bots` entries whose games the discipline's
/// scripted players play, as the contest's start would make it (the
/// materials from the default configuration and seed 1), with the
/// configuration the benchmarks run it with.
pub(crate) struct ScriptedContest {
    pub seam: &'static dyn BotDiscipline,
    pub players: ScriptedPlayers,
    pub config: Config,
    pub store: Store,
    /// The folder of the store (and of a written site), removed with it.
    pub tmp: tempfile::TempDir,
}

/// The state a benchmark's contest is stored in.
#[derive(Debug, Clone, Copy)]
pub(crate) enum ContestState {
    /// Being played (`bench bot-contest` plays it).
    Running,
    /// Played (`bench bot-site` fills it, then writes its site).
    Finished,
}

impl ScriptedContest {
    /// Makes it; `repetitions` of each pairing where the discipline has
    /// such a key, else its default.
    pub(crate) fn start(
        d: Discipline,
        n_bots: usize,
        repetitions: Option<u32>,
        state: ContestState,
    ) -> Result<ScriptedContest, BenchError> {
        let seam = crate::discipline::registry::of(d).ok_or("KNOBELN is no bot discipline")?;
        let players = seam.scripted_players().ok_or_else(|| {
            format!(
                "{} has no scripted players: the benchmark cannot play its contest",
                d.title()
            )
        })?;
        let tmp = tempfile::tempdir()?;
        let mut config = Config {
            database: tmp.path().join("knobeln.db"),
            ..Config::default()
        };
        config.contest.discipline = d;
        config.rules.jobs = 0;
        if let (Some(r), Some(key)) = (repetitions, players.repetitions_key) {
            config
                .set_in_section(d, &format!("{key}={r}"))
                .map_err(|e| e.to_string())?;
        }
        let store = Store::open(&config.database)?;
        let entries: Vec<serde_json::Value> = (1..=n_bots)
            .map(|i| serde_json::json!({"team": i, "version": i, "name": format!("bot{i:04}")}))
            .collect();
        let materials = seam.materials(&config.sections(), 1, &[])?;
        store.conn().execute(
            "INSERT INTO bot_contests (discipline, seed, config, entries, islands, state, started_at) \
             VALUES (?1, 1, ?2, ?3, ?4, ?5, ?6)",
            rusqlite::params![
                d.name(),
                seam.section(&config.sections()).to_string(),
                serde_json::to_string(&entries)?,
                serde_json::to_string(&materials)?,
                match state {
                    ContestState::Running => "running",
                    ContestState::Finished => "finished",
                },
                Utc::now().to_rfc3339()
            ],
        )?;
        Ok(ScriptedContest {
            seam,
            players,
            config,
            store,
            tmp,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each of the seeds' four has scripted players whose games keep the
    /// rules (an outcome, not a failure), and the benchmark fills a small
    /// contest of it and writes its site through the seam alone.
    #[test]
    fn every_seed_discipline_fills_a_contest_with_its_scripted_players() {
        let config = Config::default();
        for d in crate::discipline::registry::built_in() {
            let seam = crate::discipline::registry::of(d).unwrap();
            let players = seam.scripted_players().expect("scripted players");
            let setup = seam.play_setup(&config.sections(), 1, None).unwrap();
            let (outcome, transcript) = (players.play)(&setup);
            assert!(outcome.is_some(), "{d}: the scripted game broke the rules");
            assert!(!transcript.is_empty(), "{d}");
            let b = bot_site_bench(d, 3, Some(1)).unwrap_or_else(|e| panic!("{d}: {e}"));
            assert!(
                b.n_games > 0 && b.n_pairings > 0 && b.site_bytes > 0,
                "{d}: {b:?}"
            );
        }
    }

    /// The site of a small contest of each of the seeds' four, file by
    /// file (path, size and SHA-256 of each), against the golden lists
    /// `tests/data/snapshots/bot-site/D.txt` (written with
    /// `KNOBELN_UPDATE_SNAPSHOTS=1`; review their diff): a change that
    /// makes the site cheaper to write must leave every page as it was.
    #[test]
    fn the_site_of_a_small_contest_is_its_golden_list() {
        use sha2::{Digest, Sha256};
        for d in crate::discipline::registry::built_in() {
            let (s, _) = filled_contest(d, 4, Some(2)).unwrap_or_else(|e| panic!("{d}: {e}"));
            let c = contest(s.store.conn(), d).unwrap().unwrap();
            let results = crate::contest::bots::results(&s.store, &c, &s.config)
                .unwrap()
                .unwrap();
            let site = s.tmp.path().join("site");
            crate::site::bots::write(&site, &s.store, &c, &s.config, &results).unwrap();
            let mut files = Vec::new();
            let mut dirs = vec![site.clone()];
            while let Some(dir) = dirs.pop() {
                for e in std::fs::read_dir(&dir).unwrap().flatten() {
                    let p = e.path();
                    if p.is_dir() {
                        dirs.push(p);
                    } else {
                        let bytes = std::fs::read(&p).unwrap();
                        let rel = p.strip_prefix(&site).unwrap().display().to_string();
                        let sum: String = Sha256::digest(&bytes)
                            .iter()
                            .map(|b| format!("{b:02x}"))
                            .collect();
                        files.push(format!("{rel} {} {sum}", bytes.len()));
                    }
                }
            }
            files.sort();
            let list = files.join("\n") + "\n";
            let name = format!("{}.txt", d.name());
            crate::testing::assert_golden("bot-site", &name, &list, &format!("{d}: the site"));
        }
    }

    /// A setup's scripted game is made once and found again by its JSON
    /// form (an equal setup made anew, as the planners make them), its
    /// transcript kept only once a game asks for it.
    #[test]
    fn templates_are_found_by_setup_and_keep_transcripts_only_when_asked() {
        let config = Config::default();
        let seam = crate::discipline::registry::of(Discipline::FLOODING).unwrap();
        let players = seam.scripted_players().unwrap();
        let setup = |seed| seam.play_setup(&config.sections(), seed, None).unwrap();
        let mut t = Templates::default();
        assert!(t.of(&players, &setup(1), false).transcript.is_none());
        assert!(t.of(&players, &setup(1), true).transcript.is_some());
        assert!(t.of(&players, &setup(1), false).transcript.is_some());
        t.of(&players, &setup(2), false);
        assert_eq!(t.by_setup.len(), 2, "one template a distinct setup");
        let again = t.of(&players, &setup(2), false).outcome.clone();
        assert_eq!(again, (players.play)(&setup(2)).0);
    }

    /// FootSteps' scripted games go to one side or the other by their
    /// number, so that the pairs do not all tie.
    #[test]
    fn footsteps_scripted_outcomes_alternate_their_winner() {
        let seam = crate::discipline::registry::of(Discipline::FOOTSTEPS).unwrap();
        let players = seam.scripted_players().unwrap();
        let setup = seam
            .play_setup(&Config::default().sections(), 1, None)
            .unwrap();
        let outcome = (players.play)(&setup).0.unwrap();
        let winner = |k| {
            (players.vary)(&outcome, k)
                .get::<crate::discipline::footsteps::rules::GameOutcome>()
                .winner
        };
        assert_eq!(
            (winner(0), winner(1), winner(2)),
            (Some(0), Some(1), Some(0))
        );
    }
}
