//! `knobeln play A.c B.c [--seed N] [--repeat R] [--json]`: compiles two
//! strategies (local rules: no header or description needed) and plays R
//! games with seeds N, N+1, ….
//!
//! `knobeln play --discipline NAME A B [--json]`: builds bots of a bot
//! discipline (any language of `knobeln languages`, by file extension) in
//! the compile jail and plays one game or match between them in the bot
//! sandbox (the flooding island: one bot, on `--island FILE` or the demo's
//! first island). Parameters and limits come from the config's section of
//! the discipline; `--rounds` overrides the match length. `--json` prints
//! one object per game with every line exchanged. `--repeat R` plays R
//! games with seeds N, N+1, …; in the ultimatum game each bot's working
//! folder lasts across them, as across its matches in the tournament
//! (`[ultimatum] folders`).

use knobeln::discipline::family::Family;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{anyhow, bail, Context};
use clap::Args;
use serde_json::{json, Value};

use knobeln::config::Config;
use knobeln::discipline::bots::{build_bot, Built, Source};
use knobeln::discipline::flooding::rules::Island;
use knobeln::discipline::play::{play_with_folders, Transcript};
use knobeln::discipline::Discipline;
use knobeln::lang::build::{BotProgram, BuildLimits};
use knobeln::lang::{Toolchain, Toolchains};
use knobeln::referee::{GameRecord, GameSeeds, Referee};
use knobeln::report::compile_report;
use knobeln::sandbox::folder::FolderImage;
use knobeln::toolchain::compile::{compile, CompileConfig, Outcome};

use super::common::GameOpts;

#[derive(Args, Debug)]
pub struct Play {
    /// The players' source files: two strategies for KNOBELN (P first),
    /// the bots of a game in seat order, one bot for the flooding island.
    #[arg(value_name = "FILE", required = true, num_args = 1..)]
    pub files: Vec<PathBuf>,
    /// What to play: knobeln, ultimatum, flooding, footsteps, morabaraba.
    #[arg(long, default_value = "knobeln")]
    pub discipline: Discipline,
    /// The island for the flooding island (default: the demo's lagoon).
    #[arg(long)]
    pub island: Option<PathBuf>,
    /// Rounds of an ultimatum match, or the round cap of the flooding island.
    #[arg(long)]
    pub rounds: Option<u32>,
    /// The config whose discipline section gives parameters and limits
    /// (default: $KNOBELN_CONFIG, ./knobeln.toml or /etc/knobeln/knobeln.toml
    /// as for every command, else the seeds' defaults).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Seed of the first game.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Number of games (seeds N, N+1, ...).
    #[arg(long, default_value_t = 1)]
    pub repeat: u64,
    /// One JSON object per game, one per line.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub game: GameOpts,
}

/// The JSON form of a game: `{"seed", "players", "points", "throws", "failure", "failures"}`.
pub fn game_json(g: &GameRecord, names: [&str; 2]) -> Value {
    json!({
        "seed": g.seed,
        "players": names,
        "points": g.points,
        "throws": g.throws,
        "failure": g.failures.first(),
        "failures": g.failures,
    })
}

impl Play {
    pub fn apply(self) -> anyhow::Result<ExitCode> {
        if let Family::Bots(_) = self.discipline.family() {
            return self.apply_bots();
        }
        let [first, second] = self.files.as_slice() else {
            bail!("KNOBELN is played by two strategies: knobeln play A.c B.c");
        };
        let referee = Referee::new(self.game.referee_config()?);
        let cfg = CompileConfig {
            memory_limit: self.game.memory_kb * 1024,
            ..CompileConfig::local()
        };
        let mut paths = Vec::new();
        let mut names = Vec::new();
        for (i, file) in [first, second].into_iter().enumerate() {
            let src = super::common::read_source(file)?;
            let name = file
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| format!("player{i}"));
            match compile(&src, &cfg)? {
                Outcome::Accepted { binary, .. } => {
                    let strategy = knobeln::wasm::load(&binary)
                        .context("compiling the module for the referee")?;
                    paths.push(strategy);
                    names.push(name);
                }
                Outcome::Rejected { report } => {
                    eprint!(
                        "{}",
                        compile_report(
                            &report,
                            false,
                            cfg.max_lexical_elements,
                            None,
                            &Default::default()
                        )
                    );
                    bail!("{} does not compile", file.display());
                }
            }
        }
        for r in 0..self.repeat {
            let seed = self.seed.wrapping_add(r);
            let g = referee.play_loaded([&paths[0], &paths[1]], GameSeeds::public(seed))?;
            if self.json {
                outln!(
                    "{}",
                    serde_json::to_string(&game_json(&g, [&names[0], &names[1]]))?
                );
            } else {
                outln!(
                    "game seed {seed}: {} {} : {} {} ({} throws)",
                    names[0],
                    g.points[0],
                    g.points[1],
                    names[1],
                    g.throws.len()
                );
                for f in &g.failures {
                    outln!("  FAILURE of {}: {}", names[f.player], f.reason);
                }
            }
        }
        Ok(ExitCode::SUCCESS)
    }

    /// A game of a bot discipline.
    fn apply_bots(self) -> anyhow::Result<ExitCode> {
        let d = self.discipline;
        // A participant's own tool: the contest's config where one is found,
        // else the seeds' defaults.
        let cfg = match Config::load(self.config.as_deref()) {
            Ok(c) => c,
            Err(knobeln::config::ConfigError::NotFound { .. }) if self.config.is_none() => {
                Config::default()
            }
            Err(e) => return Err(e.into()),
        };
        if self.files.len() != d.seats() {
            bail!(
                "{} is played by {} bot{}; give {} source file{}",
                d.title(),
                d.seats(),
                if d.seats() == 1 { "" } else { "s" },
                d.seats(),
                if d.seats() == 1 { "" } else { "s" }
            );
        }
        let table = cfg.languages().map_err(|e| anyhow!(e))?;
        let toolchains = Toolchains::resolve(&table);
        let mut bots: Vec<(Toolchain, BotProgram)> = Vec::new();
        let mut names = Vec::new();
        for file in &self.files {
            let bytes = super::common::read_source(file)?;
            let file_name = file.file_name().map(|n| n.to_string_lossy().into_owned());
            let source = Source {
                file_name: file_name.as_deref(),
                declared: None,
                bytes: &bytes,
            };
            match build_bot(&table, &toolchains, source, &BuildLimits::default())? {
                Built::Ready {
                    toolchain, program, ..
                } => bots.push((*toolchain, program)),
                Built::Refused { why, report } => {
                    if let Some(r) = report {
                        eprint!("{}", r.text());
                    }
                    bail!("{} was not built: {why}", file.display());
                }
            }
            names.push(
                file.file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default(),
            );
        }
        let refs: Vec<(&Toolchain, &BotProgram)> = bots.iter().map(|(t, p)| (t, p)).collect();
        let limits = knobeln::discipline::registry::of(d)
            .expect("a bot discipline")
            .limits(&cfg.sections());
        let island = if d == Discipline::FLOODING {
            let text = match &self.island {
                Some(p) => std::fs::read_to_string(p)
                    .with_context(|| format!("cannot read {}", p.display()))?,
                None => knobeln::discipline::flooding::TEST_ISLANDS[0].1.to_string(),
            };
            Some(Island::parse(&text).map_err(|e| anyhow!("the island: {e}"))?)
        } else {
            None
        };
        // The ultimatum game's working folders last across the matches of
        // one `play`, as across a bot's matches in the tournament.
        let mut folders: Option<Vec<FolderImage>> = knobeln::discipline::registry::of(d)
            .is_some_and(|b| b.keeps_folders(&cfg.sections()))
            .then(|| vec![FolderImage::empty(); refs.len()]);
        for r in 0..self.repeat {
            let seed = self.seed.wrapping_add(r);
            let setup = match d {
                Discipline::ULTIMATUM => {
                    let mut p = cfg.ultimatum.params();
                    if let Some(n) = self.rounds {
                        p.rounds = n;
                    }
                    p.validate().map_err(|e| anyhow!("--rounds: {e}"))?;
                    knobeln::discipline::ultimatum::setup(p)
                }
                Discipline::FLOODING => {
                    let mut p = cfg.flooding.params();
                    if let Some(n) = self.rounds {
                        p.max_rounds = n.max(1);
                    }
                    knobeln::discipline::flooding::setup(
                        island.clone().expect("an island"),
                        p,
                        seed,
                    )
                }
                Discipline::FOOTSTEPS => {
                    knobeln::discipline::footsteps::setup(cfg.footsteps.params())
                }
                Discipline::MORABARABA => knobeln::discipline::morabaraba::setup(),
                other => anyhow::bail!("`knobeln play` cannot play {other} games"),
            };
            let transcript = if self.json {
                Transcript::Keep
            } else {
                Transcript::Drop
            };
            let mut played = play_with_folders(
                &setup,
                &refs,
                limits.line_limits(),
                transcript,
                folders.as_deref(),
            )?;
            if let Some(after) = played.take_folders() {
                folders = Some(after);
            }
            if self.json {
                let mut v = serde_json::to_value(&played)?;
                v["seed"] = json!(seed);
                v["players"] = json!(names);
                outln!("{}", serde_json::to_string(&v)?);
            } else {
                if self.repeat > 1 || d == Discipline::FLOODING {
                    outln!("game seed {seed}:");
                }
                out!("{}", played.summary(&names));
            }
        }
        Ok(ExitCode::SUCCESS)
    }
}
