//! `knobeln play A.c B.c [--seed N] [--repeat R] [--json]`: compiles two
//! strategies (local rules: no header or description needed) and plays R
//! games with seeds N, N+1, ….
//!
//! `knobeln play --discipline NAME A B [--json]`: builds bots of a bot
//! discipline (any language of `knobeln languages`, by file extension) in
//! the compile jail and plays one game or match between them in the bot
//! sandbox, as many bots as a game seats. Parameters and limits come from
//! the config's section of the discipline, `[NAME]`; `--set KEY=VALUE`
//! (repeatable) sets one of its keys for this play, checked by the
//! discipline's seam as the configuration is (`rounds=40`). `--material
//! FILE` is what a game is played on, for a discipline whose games take
//! one (the flooding island: an island; default the demo's first); the
//! seam reads it (`BotDiscipline::play_setup`). `--json` prints one
//! object per game with every line exchanged. `--repeat R` plays R games
//! with seeds N, N+1, …; where a discipline keeps a bot's working folder
//! (the ultimatum game), it lasts across them, as across its matches in
//! the tournament. The command names no discipline: all of it is the
//! seam's.

use knobeln::discipline::family::Family;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{anyhow, bail, Context};
use clap::Args;
use serde_json::{json, Value};

use knobeln::config::Config;
use knobeln::discipline::bots::{build_bot, Built, Source};
use knobeln::discipline::play::{play_with_folders, Transcript};
use knobeln::discipline::seam::BotDiscipline;
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
    /// Sets a key of the discipline's config section for this play:
    /// KEY=VALUE, VALUE a TOML value (`--set rounds=40`); repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// What a game is played on, for a discipline whose games take one
    /// (the flooding island: an island file; default the demo's first).
    #[arg(long, value_name = "FILE", alias = "island")]
    pub material: Option<PathBuf>,
    /// Gone: set the discipline's own key with --set KEY=N.
    #[arg(long, hide = true, value_name = "N")]
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
        let seam = knobeln::discipline::registry::of(d).expect("a bot discipline");
        if self.rounds.is_some() {
            bail!(
                "--rounds is gone: set a key of [{d}] with --set KEY=N (its keys: {})",
                section_keys(seam, &Config::default())
            );
        }
        if self.material.is_some() && seam.material_name().is_none() {
            bail!(
                "{} is played on no material: --material FILE is for a discipline \
                 whose games are played on one",
                d.title()
            );
        }
        // A participant's own tool: the contest's config where one is found,
        // else the seeds' defaults.
        let cfg = match Config::load(self.config.as_deref()) {
            Ok(c) => c,
            Err(knobeln::config::ConfigError::NotFound { .. }) if self.config.is_none() => {
                Config::default()
            }
            Err(e) => return Err(e.into()),
        };
        let mut cfg = cfg;
        for s in &self.set {
            cfg.set_in_section(d, s).map_err(|e| anyhow!("--set {e}"))?;
        }
        if !self.set.is_empty() {
            seam.validate(&cfg.sections())
                .map_err(|e| anyhow!("--set: {e}"))?;
        }
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
        let limits = seam.limits(&cfg.sections());
        let material = match &self.material {
            Some(p) => Some(
                std::fs::read_to_string(p)
                    .with_context(|| format!("cannot read {}", p.display()))?,
            ),
            None => None,
        };
        // A kept working folder lasts across the games of one `play`, as
        // across a bot's matches in the tournament.
        let mut folders: Option<Vec<FolderImage>> = seam
            .keeps_folders(&cfg.sections())
            .then(|| vec![FolderImage::empty(); refs.len()]);
        for r in 0..self.repeat {
            let seed = self.seed.wrapping_add(r);
            let setup = seam
                .play_setup(&cfg.sections(), seed, material.as_deref())
                .map_err(|e| anyhow!(e))?;
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
                // A game the seam notes by its seed (the flooding island's
                // run) says it.
                if self.repeat > 1 || seam.game_note(&setup).is_some() {
                    outln!("game seed {seed}:");
                }
                out!("{}", played.summary(&names));
            }
        }
        Ok(ExitCode::SUCCESS)
    }
}

/// The keys of a discipline's section, for a sentence.
fn section_keys(seam: &dyn BotDiscipline, cfg: &Config) -> String {
    match seam.section(&cfg.sections()) {
        serde_json::Value::Object(m) => m.keys().cloned().collect::<Vec<_>>().join(", "),
        _ => String::new(),
    }
}
