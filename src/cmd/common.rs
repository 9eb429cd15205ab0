//! What several commands share: the game options of the commands that
//! play, opening an existing contest database, reading a source file.
//! Nothing here parses a command line of its own or prints.

use std::path::Path;
use std::time::Duration;

use anyhow::Context;
use clap::Args;

use knobeln::config::check_memory_kb;
use knobeln::game::Params;
use knobeln::referee::{PlayerLimits, RefereeConfig};
use knobeln::store::{Store, StoreError};

/// Game parameters and limits, shared by the commands that play.
#[derive(Args, Debug, Clone)]
pub struct GameOpts {
    /// Smallest allowed throw.
    #[arg(long, default_value_t = 1)]
    pub a: i64,
    /// Largest allowed throw.
    #[arg(long, default_value_t = 12288)]
    pub b: i64,
    /// Minimum length of a non-decreasing series.
    #[arg(long, default_value_t = 8)]
    pub k: u32,
    /// Throws per game.
    #[arg(long = "throws", default_value_t = 1000)]
    pub l: u32,
    /// The CPU limit: fuel (WebAssembly operators) per strategy and game
    /// (default: 30 s of a SPARCstation 2).
    #[arg(long, default_value_t = knobeln::referee::DEFAULT_FUEL)]
    pub fuel: u64,
    /// Memory limit per strategy, in kB (whole 64 kB pages).
    #[arg(long, default_value_t = 1024)]
    pub memory_kb: u64,
    /// The watchdog: seconds of each player's own running time in a game;
    /// past it the game is an engine fault (never a player's failure).
    #[arg(long, default_value_t = knobeln::referee::DEFAULT_WALL.as_secs_f64())]
    pub wall_secs: f64,
}

impl GameOpts {
    pub fn referee_config(&self) -> anyhow::Result<RefereeConfig> {
        let params = Params {
            a: self.a,
            b: self.b,
            k: self.k,
            l: self.l,
        };
        params.validate().map_err(anyhow::Error::msg)?;
        anyhow::ensure!(self.fuel >= 1, "--fuel must be at least 1");
        anyhow::ensure!(self.wall_secs > 0.0, "--wall-secs must be positive");
        check_memory_kb(self.memory_kb).map_err(anyhow::Error::msg)?;
        Ok(RefereeConfig {
            params,
            limits: PlayerLimits {
                memory_bytes: self.memory_kb * 1024,
                ..Default::default()
            },
            wall: Duration::from_secs_f64(self.wall_secs),
            fuel: self.fuel,
        })
    }
}

/// Opens the contest database at `path`, which must exist (see
/// [`Store::open_existing`]): for every command that looks at or acts on a
/// contest. Only `init`, `serve`, `ingest` and `demo` create one.
pub fn open_contest(path: &Path) -> anyhow::Result<Store> {
    match Store::open_existing(path) {
        Ok(s) => Ok(s),
        Err(e @ StoreError::NoDatabase { .. }) => Err(e.into()),
        Err(e) => Err(anyhow::Error::from(e).context(format!("opening {}", path.display()))),
    }
}

pub fn read_source(path: &Path) -> anyhow::Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))
}
