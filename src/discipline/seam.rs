//! The seam between the generic machinery of the bot disciplines (the
//! referee, the contest run, the site, the mails, the kit) and what is
//! specific to one discipline: [`BotDiscipline`], implemented once per
//! discipline in its folder (`src/discipline/NAME/mod.rs`), and [`of`],
//! the one list of them.
//!
//! A discipline's folder holds its rules (`NAME/rules.rs`), its planner
//! (`NAME/planner.rs`) and its tables (`NAME/tables.rs`); behind the seam
//! is what joins them to the rest: the game it plays for a setup, the
//! replay of stored moves, its picture, its kit (the home referee
//! `referee.py`, the rules template) and its configuration section. What is
//! not behind the seam yet (the dispatch over disciplines of
//! `contest::bots` and `results`, the trial of `trial`, the data enums
//! `Setup`, `Outcome` and `Results` that the store and the wire format
//! carry) is listed in ARCHITECTURE.md.

use crate::discipline::game::{Played, Setup, Transcript};
use crate::discipline::transcript::Moves;
use crate::discipline::{BotLimitsConfig, Discipline, Sections};
use crate::game::lines::Exchange;
use crate::lines::{Match, MatchError};

/// A demo bot: its file name (the extension says the language) and source.
#[derive(Debug, Clone, Copy)]
pub struct DemoBot {
    pub file: &'static str,
    pub source: &'static str,
}

/// What is specific to one bot discipline.
pub trait BotDiscipline: Sync {
    /// Which discipline this is.
    fn discipline(&self) -> Discipline;

    /// Its section of the configuration, as JSON (stored with a started
    /// contest; the kit's rules are rendered from it).
    fn section(&self, sections: &Sections<'_>) -> serde_json::Value;

    /// The limits every bot of its games plays under.
    fn limits(&self, sections: &Sections<'_>) -> BotLimitsConfig;

    /// Plays one game of `setup` on the started match `m`.
    fn play(&self, setup: &Setup, m: Match, transcript: Transcript) -> Result<Played, MatchError>;

    /// The full transcript of a game from its moves (replayed by the rules).
    fn expand(&self, setup: &Setup, moves: &Moves) -> Vec<Exchange>;

    /// The picture of a game for its page on the site (HTML and SVG).
    fn picture(&self, setup: &Setup, transcript: &[Exchange], names: &[String]) -> String;

    /// The kit's home referee: one Python 3 file.
    fn referee_py(&self) -> &'static str;

    /// The name of the kit's `RULES.txt` template (`templates/kit/`).
    fn rules_template(&self) -> &'static str;

    /// The demo bots (C and Python at least), from its folder's `demo/`.
    fn demo_bots(&self) -> &'static [DemoBot];

    /// The data of the kit's `RULES.txt` and `README` beyond the contest's
    /// (names, dates, languages): the section, and what the rules quote.
    fn kit_data(&self, sections: &Sections<'_>) -> serde_json::Value {
        self.section(sections)
    }

    /// How often a team may improve its bot after its first accepted
    /// version, where the seed caps it (the flooding island: five).
    fn revisions(&self, _sections: &Sections<'_>) -> Option<u32> {
        None
    }

    /// Files of the kit beyond README, rules, referee and demo bots (the
    /// flooding island's islands): (file name, text).
    fn kit_files(&self, _sections: &Sections<'_>) -> Vec<(String, String)> {
        Vec::new()
    }
}
