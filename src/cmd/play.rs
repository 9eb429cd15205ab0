//! `knobeln play A.c B.c [--seed N] [--repeat R] [--json]`: compiles two
//! strategies (local rules: no header or description needed) and plays R
//! games with seeds N, N+1, ….

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context};
use clap::Args;
use serde_json::{json, Value};

use knobeln::referee::{GameRecord, GameSeeds, Referee};
use knobeln::report::compile_report;
use knobeln::sandbox::exe::Executable;
use knobeln::toolchain::compile::{compile, CompileConfig, Outcome};

use super::GameOpts;

#[derive(Args, Debug)]
pub struct Play {
    /// Strategy P (the first player).
    #[arg(value_name = "A.c")]
    pub first: PathBuf,
    /// Strategy Q (the second player).
    #[arg(value_name = "B.c")]
    pub second: PathBuf,
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
        let referee = Referee::new(self.game.referee_config()?);
        let cfg = CompileConfig::local();
        let mut paths = Vec::new();
        let mut names = Vec::new();
        for (i, file) in [&self.first, &self.second].into_iter().enumerate() {
            let src = super::read_source(file)?;
            let name = file
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| format!("player{i}"));
            match compile(&src, &cfg)? {
                Outcome::Accepted { binary, .. } => {
                    let exe = Executable::from_bytes(&format!("knobeln-play-{name}"), &binary)
                        .context("holding the compiled strategy")?;
                    paths.push(exe);
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
            let g = referee.play_pinned([&paths[0], &paths[1]], GameSeeds::public(seed))?;
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
}
