//! Every discipline's seam, KNOBELN's included: [`Family`], what the
//! server asks of any discipline (its name, title, seats, what its
//! players are called, its contest mails, what a team may send beside its
//! program), by the machinery that runs its players.
//!
//! The server has two: **strategies** ([`StrategyDiscipline`]: C sources
//! checked and built into WebAssembly modules by `crate::toolchain`,
//! played in rounds of groups and the Evolution by `crate::engine`, with
//! the 1994 announcement's mails; KNOBELN, in `super::knobeln`) and
//! **bots** ([`BotDiscipline`]: programs in any language that talk in
//! lines, played through their seam by `crate::contest::bots`; the seeds'
//! four and any a program registers). The machinery of each is its own;
//! where the server does one thing or the other (the compile service, a
//! contest's run, its results and site), it matches on the family and
//! hands the seam to the machinery. Everything else asks the family.
//!
//! What it deliberately does not do: run anything (the families' own
//! layers above do).

use super::seam::{BotDiscipline, Submission};
use super::Discipline;

/// What is specific to a discipline whose players are C strategies built
/// into WebAssembly modules (KNOBELN). Its rules, rounds and Evolution are
/// the engine's; this is what the rest of the server asks of it.
pub trait StrategyDiscipline: Sync {
    /// Which discipline this is.
    fn discipline(&self) -> Discipline;
    /// Its name in mails and on the site.
    fn title(&self) -> &'static str;
}

/// A discipline's seam, by the machinery that runs its players.
#[derive(Clone, Copy)]
pub enum Family {
    /// C strategies built into WebAssembly modules: KNOBELN.
    Strategies(&'static dyn StrategyDiscipline),
    /// Programs in any language that talk in lines.
    Bots(&'static dyn BotDiscipline),
}

/// The contest mails a team of a bot contest can choose (the results per
/// opponent and the transcripts; the final results go to everyone).
const BOT_MAILS: &str = "DGP, GRP";
/// KNOBELN's contest mails (the 1994 announcement's).
const STRATEGY_MAILS: &str = "LAP, LGP, DGP, GRP, GRG, GRR, RSM";

impl Family {
    /// Which discipline this is.
    pub fn discipline(self) -> Discipline {
        match self {
            Family::Strategies(s) => s.discipline(),
            Family::Bots(b) => b.discipline(),
        }
    }

    /// Its name in mails and on the site.
    pub fn title(self) -> &'static str {
        match self {
            Family::Strategies(s) => s.title(),
            Family::Bots(b) => b.title(),
        }
    }

    /// How many players a game seats (KNOBELN: two; the flooding island:
    /// one).
    pub fn seats(self) -> usize {
        match self {
            Family::Strategies(_) => 2,
            Family::Bots(b) => b.seats(),
        }
    }

    /// The bot discipline's seam, if it is one.
    pub fn bots(self) -> Option<&'static dyn BotDiscipline> {
        match self {
            Family::Strategies(_) => None,
            Family::Bots(b) => Some(b),
        }
    }

    /// What its players are called in mails ("strategy", "bot").
    pub fn player_word(self) -> &'static str {
        match self {
            Family::Strategies(_) => "strategy",
            Family::Bots(_) => "bot",
        }
    }

    /// The contest mails a team can choose, as the `mail-preference`
    /// command and the status mail list them.
    pub fn mail_choices(self) -> &'static str {
        match self {
            Family::Strategies(_) => STRATEGY_MAILS,
            Family::Bots(_) => BOT_MAILS,
        }
    }

    /// What a team may send beside its program, with its own subject.
    pub fn submission(self) -> Option<Submission> {
        self.bots().and_then(|b| b.submission())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_discipline_has_one_family_and_knobeln_is_the_strategies() {
        for d in Discipline::all() {
            let f = d.family();
            assert_eq!(f.discipline(), d);
            assert_eq!(f.title(), d.title());
            assert_eq!(f.bots().is_some(), d != Discipline::KNOBELN, "{d}");
        }
        let k = Discipline::KNOBELN.family();
        assert!(matches!(k, Family::Strategies(_)));
        assert_eq!(
            (k.title(), k.seats(), k.player_word()),
            ("KNOBELN", 2, "strategy")
        );
        assert_eq!(k.mail_choices().split(", ").count(), 7);
        assert!(k.submission().is_none());
        let f = Discipline::FLOODING.family();
        assert_eq!((f.seats(), f.player_word()), (1, "bot"));
        assert_eq!(f.submission().map(|s| s.word), Some("island"));
    }
}
