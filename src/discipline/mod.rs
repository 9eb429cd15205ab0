//! The disciplines a contest can be (`[contest] discipline`): KNOBELN (1994,
//! C strategies linked to the runtime) and the four bot disciplines of the
//! seeds, whose players are programs in any language that talk in lines:
//! the ultimatum game (freiesMagazin 2011), the flooding island
//! (freiesMagazin 2012), FootSteps (2007) and Morabaraba (2014).
//!
//! What is here: the discipline's name ([`Discipline`]) and [`Sections`],
//! what a discipline reads of the configuration (the seeds' four sections
//! `[ultimatum]`, `[flooding]`, `[footsteps]`, `[morabaraba]` are each
//! folder's `config.rs`, with the seed's defaults and their checks; the
//! limits every bot plays under are [`limits`]). Each bot discipline is a folder below (`NAME/`: data,
//! rules, planner, contest, tables, trial, picture, its part of the home
//! referee, its side of the seam [`seam::BotDiscipline`]); `home_referee/`
//! holds what the kit's four `referee.py` share (Python, joined to each
//! discipline's `referee_rules.py` by `concat!`); [`registry`] lists them (a
//! program may add its own: the tests' rock-paper-scissors) and dispatches
//! by name; [`data`] carries a discipline's own data through the generic
//! machinery; [`play`], [`results`], [`transcript`] and [`trial`] are the
//! generic sides of a game, a table, a transcript and a trial.
//! [`family`] is every discipline's seam by the machinery that runs its
//! players ([`family::Family`]: KNOBELN's strategies, in [`knobeln`], or a
//! bot discipline's bots); where the server does one or the other, it
//! matches on the family. What is not here: KNOBELN's rules
//! (`crate::game`) and tournament (`crate::tournament`), how a bot is
//! started (`crate::sandbox::bot`), the contest run (`crate::contest`).

pub mod bots;
pub mod data;
pub mod family;
pub mod flooding;
pub mod footsteps;
pub mod game;
pub mod knobeln;
pub mod limits;
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

use serde::Serialize;

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
    /// goes through [`FromStr`](std::str::FromStr), which knows only registered ones.
    pub const fn named(name: &'static str) -> Discipline {
        Discipline(name)
    }

    /// The name in the configuration and on the command line.
    pub fn name(self) -> &'static str {
        self.0
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

pub use flooding::config::FloodingConfig;
pub use footsteps::config::FootstepsConfig;
pub use limits::BotLimitsConfig;
pub use morabaraba::config::MorabarabaConfig;
pub use ultimatum::config::{
    FolderKeeping, UltimatumConfig, DEFAULT_FOLDER_KB, MAX_FOLDER_KB_WITH_WORKERS,
};

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
    /// Where the contest's games are played (`[engine] nats`): what a
    /// game carries must then fit a message.
    pub workers: Workers,
}

/// Where a contest's bot games are played.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Workers {
    /// By this server, in its own sandbox.
    Local,
    /// By workers on other machines, each game and its outcome one NATS
    /// message (`[engine] nats`).
    Nats,
}

impl<'a> Sections<'a> {
    /// The section `[name]` of a registered discipline, when the
    /// configuration has one.
    pub fn table(&self, name: &str) -> Option<&'a toml::Value> {
        self.other.get(name)
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
