//! The disciplines a contest can be (`[contest] discipline`): KNOBELN (1994,
//! C strategies linked to the runtime) and the four bot disciplines of the
//! seeds, whose players are programs in any language that talk in lines:
//! the ultimatum game (freiesMagazin 2011), the flooding island
//! (freiesMagazin 2012), FootSteps (2007) and Morabaraba (2014).
//!
//! What is here: the discipline's name ([`Discipline`]), the seeds' four
//! sections of the configuration (`[ultimatum]`, `[flooding]`,
//! `[footsteps]`, `[morabaraba]`, each with the seed's defaults) and their
//! validation, and [`Sections`], what a discipline reads of the
//! configuration. Each bot discipline is a folder below (`NAME/`: data,
//! rules, planner, contest, tables, trial, picture, home referee, its side
//! of the seam [`seam::BotDiscipline`]); [`registry`] lists them (a
//! program may add its own: the tests' rock-paper-scissors) and dispatches
//! by name; [`data`] carries a discipline's own data through the generic
//! machinery; [`play`], [`results`], [`transcript`] and [`trial`] are the
//! generic sides of a game, a table, a transcript and a trial. What is not here: KNOBELN's rules (`crate::game`)
//! and tournament (`crate::tournament`), how a bot is started
//! (`crate::sandbox::bot`), the contest run (`crate::contest`).

pub mod bots;
pub mod data;
pub mod flooding;
pub mod footsteps;
pub mod game;
pub mod morabaraba;
pub mod play;
pub mod registry;
pub mod results;
pub mod seam;
pub mod table;
pub mod transcript;
pub mod trial;
pub mod ultimatum;

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::lines::LineLimits;

/// What is played: a discipline, named as in the configuration
/// (`[contest] discipline`) and on the command line. KNOBELN is built in;
/// every other discipline is a bot discipline, known by its seam in
/// [`registry`] (the four of the seeds, and any a program registers: the
/// tests' rock-paper-scissors). Stored and sent as its name.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Discipline(&'static str);

impl Discipline {
    /// KNOBELN (1994): C strategies against the runtime.
    pub const KNOBELN: Discipline = Discipline("knobeln");
    /// The ultimatum game (freiesMagazin 2011).
    pub const ULTIMATUM: Discipline = Discipline("ultimatum");
    /// The flooding island (freiesMagazin 2012).
    pub const FLOODING: Discipline = Discipline("flooding");
    /// FootSteps (2007).
    pub const FOOTSTEPS: Discipline = Discipline("footsteps");
    /// Morabaraba (Ohjelmointiputka 2014).
    pub const MORABARABA: Discipline = Discipline("morabaraba");

    /// A discipline by its name, as a bot discipline's seam names itself
    /// ([`seam::BotDiscipline::discipline`]). Reading a name from outside
    /// goes through [`FromStr`], which knows only registered ones.
    pub const fn named(name: &'static str) -> Discipline {
        Discipline(name)
    }

    /// The name in the configuration and on the command line.
    pub fn name(self) -> &'static str {
        self.0
    }

    /// Whether players are bots in any language (not KNOBELN's C strategies).
    pub fn is_bot_discipline(self) -> bool {
        self != Discipline::KNOBELN
    }
}

impl Default for Discipline {
    fn default() -> Self {
        Discipline::KNOBELN
    }
}

impl fmt::Debug for Discipline {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl fmt::Display for Discipline {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for Discipline {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.0)
    }
}

/// The limits every bot of a match plays under, in the configuration's
/// words (milliseconds, seconds, MiB).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BotLimitsConfig {
    /// CPU time for one reply, in milliseconds (the bot's own; the wall
    /// clock backstop is [`crate::lines::wall_backstop`] of it).
    pub reply_ms: u64,
    /// CPU time for the first reply (the runtime's start-up), in ms.
    pub startup_ms: u64,
    /// CPU seconds per bot and game (whole process tree).
    pub cpu_secs: u64,
    /// Memory per bot in MiB (the language's allowance comes on top,
    /// unless `memory` says the figure is the total).
    pub memory_mb: u64,
    /// What `memory_mb` counts (not a key of the config: the discipline's).
    #[serde(skip)]
    pub memory: crate::lines::MemoryCount,
    /// The size of a bot's `/work` when it is a kept folder, in KiB (not
    /// a key of this table: `[ultimatum] folder_kb`).
    #[serde(skip)]
    pub work_kb: Option<u64>,
    /// The wall clock each bot may be waited for in one match, in seconds
    /// (not a key: each discipline derives it from its seed's terms; see
    /// the discipline's `limits`).
    #[serde(skip)]
    pub waited_secs: u64,
}

/// `section.name` is `v`, which must lie in `lo..=hi`; the error names the
/// key, the range and the value.
fn in_range(section: &str, name: &str, v: u64, lo: u64, hi: u64) -> Result<(), String> {
    if (lo..=hi).contains(&v) {
        Ok(())
    } else {
        Err(format!("{section}.{name} must be in {lo}..={hi} (got {v})"))
    }
}

impl BotLimitsConfig {
    fn validate(&self, section: &str) -> Result<(), String> {
        in_range(section, "reply_ms", self.reply_ms, 1, 3_600_000)?;
        in_range(section, "startup_ms", self.startup_ms, 1, 3_600_000)?;
        in_range(section, "cpu_secs", self.cpu_secs, 1, 86_400)?;
        in_range(section, "memory_mb", self.memory_mb, 8, 65_536)
    }

    /// The referee's limits.
    pub fn line_limits(&self) -> LineLimits {
        LineLimits {
            cpu: Duration::from_secs(self.cpu_secs),
            memory_mb: self.memory_mb,
            memory: self.memory,
            work_kb: self.work_kb,
            waited: Some(Duration::from_secs(self.waited_secs)),
            ..LineLimits::with_replies(
                Duration::from_millis(self.reply_ms),
                Duration::from_millis(self.startup_ms.max(self.reply_ms)),
            )
        }
    }
}

/// `[ultimatum]`: the 2011 contest's parameters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct UltimatumConfig {
    /// Rounds per match (2500).
    pub rounds: u32,
    /// How often the whole round robin is played (100).
    pub repetitions: u32,
    /// The entry condition: a match of `rounds` rounds against itself must
    /// end within this many seconds of wall clock (60).
    pub entry_secs: u64,
    pub reply_ms: u64,
    pub startup_ms: u64,
    /// CPU seconds per bot and match.
    pub cpu_secs: u64,
    pub memory_mb: u64,
    /// The 2011 organizers' prize column: the first three places get
    /// P / (20000 · (N − 1)) euros, P their Plus (off by default).
    pub prize: bool,
    /// Whether a bot's working folder lasts across its matches (the FAQ:
    /// "a file stays until the bot that created it deletes it"), or is new
    /// for each match.
    pub folders: FolderKeeping,
    /// The quota of a kept working folder, in KiB (its tmpfs's size).
    pub folder_kb: u64,
}

/// What becomes of a bot's working folder between its matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FolderKeeping {
    /// Kept until the contest ends (the 2011 FAQ); the bot's matches run
    /// in one fixed order.
    #[default]
    Kept,
    /// New and empty for every match.
    Fresh,
}

impl Default for UltimatumConfig {
    fn default() -> Self {
        UltimatumConfig {
            rounds: 2500,
            repetitions: 100,
            entry_secs: 60,
            reply_ms: 2000,
            startup_ms: 10_000,
            cpu_secs: 60,
            memory_mb: 256,
            prize: false,
            folders: FolderKeeping::Kept,
            folder_kb: DEFAULT_FOLDER_KB,
        }
    }
}

/// Whether games of `d` keep each bot's working folder from one match to
/// its next (the ultimatum game's, unless `[ultimatum] folders = "fresh"`).
pub fn keeps_folders(d: Discipline, ultimatum: &UltimatumConfig) -> bool {
    d == Discipline::ULTIMATUM && ultimatum.kept_folder_bytes().is_some()
}

/// The disciplines' sections of the configuration (`[ultimatum]`,
/// `[flooding]`, `[footsteps]`, `[morabaraba]`), as the seam reads them:
/// `crate::config::Config::sections` lends them, so a discipline never
/// reads the whole configuration (which sits above it).
#[derive(Debug, Clone, Copy)]
pub struct Sections<'a> {
    pub ultimatum: &'a UltimatumConfig,
    pub flooding: &'a FloodingConfig,
    pub footsteps: &'a FootstepsConfig,
    pub morabaraba: &'a MorabarabaConfig,
    /// The sections of the disciplines registered beyond the seeds' four,
    /// by name, as the configuration's text has them.
    pub other: &'a std::collections::BTreeMap<String, toml::Value>,
}

impl<'a> Sections<'a> {
    /// The section `[name]` of a registered discipline, when the
    /// configuration has one.
    pub fn table(&self, name: &str) -> Option<&'a toml::Value> {
        self.other.get(name)
    }
}

/// A kept folder's default quota: 256 KiB (the seed sets none and asks for
/// no "gigabyte dimensions"; the FAQ finds little worth keeping). Two of
/// them travel with a game to a worker, within a NATS message.
pub const DEFAULT_FOLDER_KB: u64 = 256;

/// The largest quota when games go to workers (`[engine] nats`): two
/// folders at their stored form's bound (content, names, entries:
/// [`crate::sandbox::folder::encoded_bound`]), in base64, and the moves
/// within one 1 MiB message.
pub const MAX_FOLDER_KB_WITH_WORKERS: u64 = 256;

impl UltimatumConfig {
    /// The working folders the matches start with: `Some` when they are
    /// kept, with the quota in bytes.
    pub fn kept_folder_bytes(&self) -> Option<u64> {
        (self.folders == FolderKeeping::Kept).then_some(self.folder_kb << 10)
    }

    pub fn params(&self) -> crate::discipline::ultimatum::rules::Params {
        crate::discipline::ultimatum::rules::Params {
            rounds: self.rounds,
        }
    }
    pub fn limits(&self) -> BotLimitsConfig {
        BotLimitsConfig {
            reply_ms: self.reply_ms,
            startup_ms: self.startup_ms,
            cpu_secs: self.cpu_secs,
            memory_mb: self.memory_mb,
            memory: crate::lines::MemoryCount::PlusLanguage,
            work_kb: self.kept_folder_bytes().map(|b| b >> 10),
            // The seed: a match of `rounds` against itself ends within a
            // minute (`entry_secs`), "about double" is still tolerated;
            // each bot may take that double for its own.
            waited_secs: 2 * self.entry_secs,
        }
    }
    pub fn validate(&self) -> Result<(), String> {
        self.params()
            .validate()
            .map_err(|e| format!("ultimatum.{e}"))?;
        in_range(
            "ultimatum",
            "repetitions",
            u64::from(self.repetitions),
            1,
            10_000,
        )?;
        in_range("ultimatum", "entry_secs", self.entry_secs, 1, 3600)?;
        in_range("ultimatum", "folder_kb", self.folder_kb, 4, 16 << 10)?;
        self.limits().validate("ultimatum")
    }
}

/// `[flooding]`: the 2012 contest's parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FloodingConfig {
    /// Games per bot and island (1000).
    pub runs: u32,
    /// A game ends after this round at the latest.
    pub max_rounds: u32,
    /// The organizer's island files (the seed's text format): the
    /// contest's islands, with those the teams send in. Never in the kit,
    /// published on the results site after the contest.
    pub islands: Vec<PathBuf>,
    /// Islands drawn from the contest's seed at its start (`drawn-1`, …).
    /// Unset: 3 when `islands` names no file, else none. The kit's test
    /// islands are never played in the contest (the 2012 seed).
    pub drawn_islands: Option<u32>,
    /// CPU time per round, in ms: the seed's 0.1 s, counted as the bot's
    /// own time and as a budget over the game (by round `r`, `startup_ms
    /// + r × round_ms` in all; see docs/src/config.md).
    pub round_ms: u64,
    pub startup_ms: u64,
    /// CPU seconds per bot and game.
    pub cpu_secs: u64,
    pub memory_mb: u64,
    /// How often a team may improve its bot after its first accepted one
    /// (2012: "bis zu fünfmal nachbessern"); accepted versions count.
    pub revisions: u32,
}

impl Default for FloodingConfig {
    fn default() -> Self {
        FloodingConfig {
            runs: crate::discipline::flooding::planner::DEFAULT_RUNS,
            max_rounds: crate::discipline::flooding::rules::DEFAULT_MAX_ROUNDS,
            islands: Vec::new(),
            drawn_islands: None,
            round_ms: 100,
            startup_ms: 10_000,
            cpu_secs: 60,
            memory_mb: 256,
            revisions: 5,
        }
    }
}

impl FloodingConfig {
    /// How many islands the contest draws from its seed.
    pub fn drawn_island_count(&self) -> u32 {
        self.drawn_islands
            .unwrap_or(if self.islands.is_empty() { 3 } else { 0 })
    }

    pub fn params(&self) -> crate::discipline::flooding::rules::Params {
        crate::discipline::flooding::rules::Params {
            max_rounds: self.max_rounds,
        }
    }
    pub fn limits(&self) -> BotLimitsConfig {
        BotLimitsConfig {
            reply_ms: self.round_ms,
            startup_ms: self.startup_ms,
            cpu_secs: self.cpu_secs,
            memory_mb: self.memory_mb,
            memory: crate::lines::MemoryCount::PlusLanguage,
            work_kb: None,
            // The seed: 0.1 s per round, the server's work included; twice
            // that for every round of the longest game, and the start-up.
            waited_secs: (self.startup_ms + 2 * u64::from(self.max_rounds) * self.round_ms)
                .div_ceil(1000),
        }
    }
    pub fn validate(&self) -> Result<(), String> {
        in_range("flooding", "runs", u64::from(self.runs), 1, 100_000)?;
        in_range(
            "flooding",
            "max_rounds",
            u64::from(self.max_rounds),
            1,
            1_000_000,
        )?;
        in_range("flooding", "round_ms", self.round_ms, 1, 60_000)?;
        in_range("flooding", "revisions", u64::from(self.revisions), 0, 1000)?;
        if let Some(n) = self.drawn_islands {
            in_range("flooding", "drawn_islands", u64::from(n), 0, 20)?;
        }
        self.limits().validate("flooding")
    }
}

/// `[footsteps]`: the 2007 contest's parameters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FootstepsConfig {
    /// Games each pair plays in a round (300).
    pub games_per_pair: u32,
    /// Tie replays at most (3); then the tied share their place.
    pub max_tie_rounds: u32,
    /// Fields of the strip (7).
    pub fields: u32,
    /// Points each player starts with (50).
    pub points: u32,
    pub reply_ms: u64,
    pub startup_ms: u64,
    pub cpu_secs: u64,
    pub memory_mb: u64,
}

impl Default for FootstepsConfig {
    fn default() -> Self {
        FootstepsConfig {
            games_per_pair: 300,
            max_tie_rounds: 3,
            fields: 7,
            points: 50,
            reply_ms: 2000,
            startup_ms: 10_000,
            cpu_secs: 10,
            memory_mb: 256,
        }
    }
}

impl FootstepsConfig {
    pub fn params(&self) -> crate::discipline::footsteps::rules::Params {
        crate::discipline::footsteps::rules::Params {
            fields: self.fields,
            points: self.points,
        }
    }
    pub fn tournament(&self) -> crate::discipline::footsteps::planner::Config {
        crate::discipline::footsteps::planner::Config {
            games_per_pair: self.games_per_pair,
            max_tie_rounds: self.max_tie_rounds,
        }
    }
    pub fn limits(&self) -> BotLimitsConfig {
        BotLimitsConfig {
            reply_ms: self.reply_ms,
            startup_ms: self.startup_ms,
            cpu_secs: self.cpu_secs,
            memory_mb: self.memory_mb,
            memory: crate::lines::MemoryCount::PlusLanguage,
            work_kb: None,
            // The seed names no time: twice the CPU a game may use, and
            // the start-up.
            waited_secs: self.startup_ms.div_ceil(1000) + 2 * self.cpu_secs,
        }
    }
    pub fn validate(&self) -> Result<(), String> {
        self.params()
            .validate()
            .map_err(|e| format!("footsteps.{e}"))?;
        self.tournament()
            .validate()
            .map_err(|e| format!("footsteps: {e}"))?;
        self.limits().validate("footsteps")
    }
}

/// `[morabaraba]`: the 2014 contest's parameters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MorabarabaConfig {
    /// CPU seconds per bot and game (120), in seconds of the seed's test
    /// machine (a 2.0 GHz x86-64): see `speed_percent`.
    pub cpu_secs: u64,
    /// Memory per bot in MiB (512), "in total": the runtime's own needs
    /// included (no language allowance on top).
    pub memory_mb: u64,
    /// CPU time for one move, in ms (the seed sets none but the game's).
    pub reply_ms: u64,
    pub startup_ms: u64,
    /// This machine's speed against the seed's 2.0 GHz x86-64, in percent
    /// (150: it does in 1 s what that machine did in 1.5 s). A bot's CPU
    /// time here times this, over 100, is its time there: the CPU limit
    /// here is `cpu_secs` × 100 / `speed_percent`, and f(V) is computed
    /// from the converted time.
    pub speed_percent: u64,
}

impl Default for MorabarabaConfig {
    fn default() -> Self {
        MorabarabaConfig {
            cpu_secs: 120,
            memory_mb: 512,
            reply_ms: 130_000,
            startup_ms: 130_000,
            speed_percent: 100,
        }
    }
}

impl MorabarabaConfig {
    pub fn limits(&self) -> BotLimitsConfig {
        BotLimitsConfig {
            reply_ms: self.here_ms(self.reply_ms),
            startup_ms: self.here_ms(self.startup_ms),
            cpu_secs: self.here_ms(self.cpu_secs * 1000).div_ceil(1000),
            memory_mb: self.memory_mb,
            memory: crate::lines::MemoryCount::Total,
            work_kb: None,
            // The seed: 120 s of the program's own time per match (the
            // clock stops while it waits for the opponent); twice that,
            // and the start-up.
            waited_secs: self.here_ms(self.startup_ms).div_ceil(1000)
                + 2 * self.here_ms(self.cpu_secs * 1000).div_ceil(1000),
        }
    }

    /// A time of the seed's machine as this machine's (rounded up).
    fn here_ms(&self, seed_ms: u64) -> u64 {
        (seed_ms * 100).div_ceil(self.speed_percent.max(1))
    }

    /// CPU time measured here as the seed's machine's, in microseconds
    /// (integers only: the same on every machine for the same figures).
    pub fn seed_micros(&self, here_micros: u64) -> u64 {
        (u128::from(here_micros) * u128::from(self.speed_percent) / 100) as u64
    }

    pub fn validate(&self) -> Result<(), String> {
        in_range(
            "morabaraba",
            "speed_percent",
            self.speed_percent,
            10,
            10_000,
        )?;
        self.limits().validate("morabaraba")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for d in Discipline::all() {
            assert_eq!(d.name().parse::<Discipline>(), Ok(d));
        }
        assert!("chess"
            .parse::<Discipline>()
            .unwrap_err()
            .contains("ultimatum"));
    }

    /// Issue 27: Morabaraba's 512 MB are the whole bot's, and its CPU
    /// seconds are the seed's 2.0 GHz machine's, converted by a factor.
    #[test]
    fn morabaraba_memory_is_in_total_and_cpu_is_the_seed_machines() {
        let m = MorabarabaConfig::default();
        let l = m.limits();
        assert_eq!(l.memory, crate::lines::MemoryCount::Total);
        assert_eq!((l.memory_mb, l.cpu_secs), (512, 120));
        let java = crate::lang::LanguageTable::builtin()
            .languages
            .into_iter()
            .find(|l| l.name == "java")
            .unwrap();
        let (cgroup, heap) = l.line_limits().memory_of(&java);
        assert_eq!(cgroup, 512, "the JVM's allowance is inside the 512 MB");
        assert_eq!(heap, 512 - java.memory_extra_mb);
        // A machine half again as fast: 80 s here are the seed's 120 s, and
        // 2 s of CPU here count as 3 s in f(V).
        let fast = MorabarabaConfig {
            speed_percent: 150,
            ..m
        };
        assert_eq!(fast.limits().cpu_secs, 80);
        assert_eq!(fast.seed_micros(2_000_000), 3_000_000);
        assert!(MorabarabaConfig {
            speed_percent: 5,
            ..m
        }
        .validate()
        .is_err());
        // The other disciplines keep the language's allowance on top.
        assert_eq!(
            UltimatumConfig::default().limits().memory,
            crate::lines::MemoryCount::PlusLanguage
        );
    }

    #[test]
    fn defaults_are_the_seeds_and_valid() {
        let u = UltimatumConfig::default();
        assert_eq!((u.rounds, u.repetitions, u.entry_secs), (2500, 100, 60));
        u.validate().unwrap();
        let f = FloodingConfig::default();
        assert_eq!((f.runs, f.round_ms), (1000, 100));
        f.validate().unwrap();
        let s = FootstepsConfig::default();
        assert_eq!((s.games_per_pair, s.fields, s.points), (300, 7, 50));
        s.validate().unwrap();
        let m = MorabarabaConfig::default();
        assert_eq!((m.cpu_secs, m.memory_mb), (120, 512));
        m.validate().unwrap();
    }
}
