//! The one list of the bot disciplines' seams ([`super::seam::BotDiscipline`]):
//! the four of the seeds, one line each, and those a program adds with
//! [`register`] before it reads a configuration (the tests'
//! rock-paper-scissors: a discipline from outside the crate, through the
//! same seam). And everything that finds a discipline by its name: a seam
//! by discipline or by a game's setup, `Discipline`'s title, seats and
//! list, reading a `Discipline` or a discipline's data (`Tagged`) back.
//!
//! What it deliberately does not do: play, plan or write anything (the
//! dispatchers above it: `play`, `results`, `transcript`, `trial`).

use std::sync::RwLock;

use serde::Deserialize;

use super::data::{Kind, Tagged};
use super::family::Family;
use super::game::Setup;
use super::seam::{plain_key_field, BotDiscipline};
use super::Discipline;

/// The bot disciplines of the seeds, one line each: a sixth is its folder
/// and a line.
static BUILT_IN: [&dyn BotDiscipline; 4] = [
    &super::ultimatum::Ultimatum,
    &super::flooding::Flooding,
    &super::footsteps::Footsteps,
    &super::morabaraba::Morabaraba,
];

/// Those registered by the program (in the order of registration).
static REGISTERED: RwLock<Vec<&'static dyn BotDiscipline>> = RwLock::new(Vec::new());

/// Why a discipline cannot be registered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegisterError {
    #[error("a discipline named `{0}` exists already")]
    Taken(&'static str),
    #[error("`{0}` is no name for a discipline: lower-case letters, digits and `-`, 1 to 32")]
    BadName(&'static str),
    #[error("`{0}` names a section of the configuration; a discipline's section `[{0}]` would replace it")]
    Reserved(&'static str),
    #[error("`{0}` cannot be the subject of a submission: one word of lower-case letters, digits and `-`, which no mail command and no other discipline takes")]
    SubmissionWord(&'static str),
    #[error("{0}: the key field `{1}` of its game order is no plain name (letters, digits, `_`)")]
    KeyField(&'static str, String),
}

/// The top-level keys of the configuration a discipline's name must not
/// take (its section `[NAME]` would shadow them; `crate::config` tests
/// that this is every key of the configuration).
pub const RESERVED: &[&str] = &[
    "database",
    "contest",
    "timeline",
    "limits",
    "rules",
    "transport",
    "spool",
    "site",
    "engine",
    "imap",
    "smtp",
    "language",
];

/// The subjects of the mail commands that are one word (`crate::mail::
/// commands` tests that each is its command's): a discipline's submission
/// cannot take one.
pub const COMMAND_WORDS: &[&str] = &["registration", "status", "kit", "mail-preference"];

/// The names of the seeds' four, in the list's order.
pub fn built_in() -> Vec<Discipline> {
    BUILT_IN.iter().map(|b| b.discipline()).collect()
}

/// Adds a bot discipline to the list. Registering the same seam again is
/// no change; another seam under a name in use is refused.
pub fn register(seam: &'static dyn BotDiscipline) -> Result<(), RegisterError> {
    let name = seam.discipline().name();
    if !good_name(name) {
        return Err(RegisterError::BadName(name));
    }
    if RESERVED.contains(&name) {
        return Err(RegisterError::Reserved(name));
    }
    if let Some(word) = seam.submission().map(|s| s.word) {
        let taken = all().iter().any(|b| {
            b.discipline() != seam.discipline() && b.submission().is_some_and(|s| s.word == word)
        });
        if !submission_word(word) || taken {
            return Err(RegisterError::SubmissionWord(word));
        }
    }
    if let Some(f) = seam.key_order().iter().find(|f| !plain_key_field(f)) {
        return Err(RegisterError::KeyField(name, f.escape_debug().to_string()));
    }
    let mut list = REGISTERED.write().expect("registry");
    let there = BUILT_IN
        .iter()
        .chain(list.iter())
        .find(|b| b.discipline() == seam.discipline());
    if let Some(there) = there {
        // One seam per name: the same seam (its type and its place) again
        // is no change, anything else is refused.
        let same = std::ptr::addr_eq(*there, seam) && there.seam_type() == seam.seam_type();
        return if same {
            Ok(())
        } else {
            Err(RegisterError::Taken(name))
        };
    }
    if name == Discipline::KNOBELN.name() {
        return Err(RegisterError::Taken(name));
    }
    list.push(seam);
    Ok(())
}

/// Whether `name` can name a discipline (in the configuration, a mail's
/// subject, a file name of the site).
fn good_name(name: &str) -> bool {
    (1..=32).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// Whether `word` can be the subject of a discipline's submission: a name
/// no mail command takes.
fn submission_word(word: &str) -> bool {
    good_name(word) && !COMMAND_WORDS.contains(&word)
}

/// Every bot discipline: the seeds' four, then the registered ones.
pub fn all() -> Vec<&'static dyn BotDiscipline> {
    let list = REGISTERED.read().expect("registry");
    BUILT_IN
        .iter()
        .copied()
        .chain(list.iter().copied())
        .collect()
}

/// The seam of `d`; `None` for KNOBELN, which is no bot discipline.
pub fn of(d: Discipline) -> Option<&'static dyn BotDiscipline> {
    if let Some(b) = BUILT_IN.iter().find(|b| b.discipline() == d) {
        return Some(*b);
    }
    let list = REGISTERED.read().expect("registry");
    list.iter().copied().find(|b| b.discipline() == d)
}

/// The seam of `d`, by its family: KNOBELN's, or a bot discipline's.
/// Every `Discipline` there is names one ([`Discipline`] is read through
/// [`std::str::FromStr`], which knows the registered ones only).
pub fn family(d: Discipline) -> Family {
    if d == Discipline::KNOBELN {
        return Family::Strategies(&super::knobeln::Knobeln);
    }
    Family::Bots(of(d).unwrap_or_else(|| panic!("the discipline {d} has no seam")))
}

/// The seam of a setup's discipline.
pub fn of_setup(setup: &Setup) -> &'static dyn BotDiscipline {
    of(setup.discipline()).expect("every setup is a bot discipline's")
}

/// What the list knows of a discipline: its names, its seats, and which
/// names there are (KNOBELN and the registered bot disciplines).
impl Discipline {
    /// Every discipline: KNOBELN, then the registered bot disciplines.
    pub fn all() -> Vec<Discipline> {
        std::iter::once(Discipline::KNOBELN)
            .chain(Discipline::bots())
            .collect()
    }

    /// The bot disciplines (everything but KNOBELN), as registered.
    pub fn bots() -> Vec<Discipline> {
        all().into_iter().map(|b| b.discipline()).collect()
    }

    /// Its seam, by its family ([`family`]).
    pub fn family(self) -> Family {
        family(self)
    }

    /// The name in mails and on the site.
    pub fn title(self) -> &'static str {
        family(self).title()
    }

    /// How many players a game seats (the flooding island: one).
    pub fn seats(self) -> usize {
        family(self).seats()
    }
}

impl std::str::FromStr for Discipline {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        // Every stored game's setup and outcome names its discipline: the
        // lookup allocates nothing; only the refusal lists the names.
        if s == Discipline::KNOBELN.name() {
            return Ok(Discipline::KNOBELN);
        }
        if let Some(b) = BUILT_IN.iter().find(|b| b.discipline().name() == s) {
            return Ok(b.discipline());
        }
        let list = REGISTERED.read().expect("registry");
        if let Some(b) = list.iter().find(|b| b.discipline().name() == s) {
            return Ok(b.discipline());
        }
        drop(list);
        Err(format!(
            "no discipline `{s}`: it is one of {}",
            Discipline::all()
                .iter()
                .map(|d| d.name())
                .collect::<Vec<_>>()
                .join(", ")
        ))
    }
}

impl<'de> Deserialize<'de> for Discipline {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = std::borrow::Cow::<str>::deserialize(d)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

/// A discipline's data read back: the tag names the discipline, whose
/// seam decodes the rest into its own type.
impl<'de, K: Kind> Deserialize<'de> for Tagged<K> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let mut body = serde_json::Map::deserialize(d)?;
        let name = match body.remove(K::TAG) {
            Some(serde_json::Value::String(n)) => n,
            _ => {
                return Err(D::Error::custom(format!(
                    "a {} without its `{}`",
                    K::WHAT,
                    K::TAG
                )))
            }
        };
        let Some(kind) = K::KIND else {
            return Err(D::Error::custom(format!(
                "a {} is never read back (it is made from the stored games)",
                K::WHAT
            )));
        };
        let discipline: Discipline = name.parse().map_err(D::Error::custom)?;
        let seam = of(discipline).ok_or_else(|| {
            D::Error::custom(format!(
                "a {} of {discipline}, which is no bot discipline",
                K::WHAT
            ))
        })?;
        let data = seam
            .decode(kind, serde_json::Value::Object(body))
            .map_err(|e| D::Error::custom(format!("a {} of {discipline}: {e}", K::WHAT)))?;
        Ok(Tagged::decoded(discipline, data))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bot_discipline_is_listed_once_and_knobeln_not() {
        for d in Discipline::bots() {
            let b = of(d).unwrap_or_else(|| panic!("{d} has no seam"));
            assert_eq!(b.discipline(), d);
            assert!(!b.referee_py().is_empty() && !b.demo_bots().is_empty());
            assert!(b.key_order().iter().all(|f| plain_key_field(f)), "{d}");
        }
        assert!(of(Discipline::KNOBELN).is_none());
        let mut names: Vec<&str> = all().iter().map(|b| b.discipline().name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), all().len());
    }

    #[test]
    fn a_name_in_use_or_a_bad_name_is_refused() {
        assert_eq!(
            register(&super::super::ultimatum::Ultimatum),
            Ok(()),
            "the same seam again is no change"
        );
        assert!(good_name("rps") && good_name("rock-paper-2"));
        assert_eq!(built_in().len(), 4);
        for bad in ["", "Rock", "rock paper", "rps!", &"x".repeat(33)] {
            assert!(!good_name(bad), "{bad:?}");
        }
        assert!(submission_word("island") && submission_word("motto"));
        for taken in COMMAND_WORDS.iter().chain(&["Island", "an island"]) {
            assert!(!submission_word(taken), "{taken:?}");
        }
        for b in all() {
            if let Some(sub) = b.submission() {
                assert!(submission_word(sub.word), "{}", sub.word);
            }
        }
    }

    /// Stored games and workers of the same wire version read alike: the
    /// JSON forms are those the closed enums of earlier versions wrote
    /// (`{"game": NAME, …}` for a setup, `{"discipline": NAME, …}` for an
    /// outcome), and reading one gives the discipline's own type back.
    #[test]
    fn setups_and_outcomes_keep_the_json_of_earlier_versions() {
        use crate::discipline::game::{Outcome, Setup};
        use serde_json::json;
        let island = crate::discipline::flooding::rules::Island::parse(
            "GAMEBOARDSTART 1,1\no\nGAMEBOARDEND",
        )
        .unwrap();
        let text = island.to_text();
        for (setup, old) in [
            (
                crate::discipline::ultimatum::setup(crate::discipline::ultimatum::rules::Params {
                    rounds: 7,
                }),
                json!({"game": "ultimatum", "rounds": 7}),
            ),
            (
                crate::discipline::footsteps::setup(Default::default()),
                json!({"game": "footsteps", "fields": 7, "points": 50}),
            ),
            (
                crate::discipline::morabaraba::setup(),
                json!({"game": "morabaraba"}),
            ),
            (
                crate::discipline::flooding::setup(
                    island,
                    crate::discipline::flooding::rules::Params { max_rounds: 9 },
                    3,
                ),
                json!({"game": "flooding", "island": text, "params": {"max_rounds": 9}, "seed": 3}),
            ),
        ] {
            assert_eq!(serde_json::to_value(&setup).unwrap(), old);
            let back: Setup = serde_json::from_value(old).unwrap();
            assert_eq!(back, setup);
        }
        let old = json!({"discipline": "ultimatum", "rounds": 5, "rounds_completed": 5,
            "points": [1, 2], "accepted_offers": [3, 4], "forfeited_by": null});
        let o: Outcome = serde_json::from_value(old.clone()).unwrap();
        let m = o.get::<crate::discipline::ultimatum::rules::MatchOutcome>();
        assert_eq!((m.rounds, m.points), (5, [1, 2]));
        assert_eq!(serde_json::to_value(&o).unwrap(), old);
        // A tag naming no discipline, KNOBELN, or data that is not the
        // discipline's own are refused with what was wrong.
        for (bad, says) in [
            (json!({"game": "chess"}), "no discipline `chess`"),
            (json!({"game": "knobeln"}), "no bot discipline"),
            (json!({"game": "morabaraba", "rounds": 3}), "unknown field"),
            (json!({"rounds": 3}), "without its `game`"),
            (
                json!({"game": "flooding", "island": "x", "params": {"max_rounds": 9}, "seed": 3}),
                "a setup of flooding",
            ),
        ] {
            let e = serde_json::from_value::<Setup>(bad)
                .unwrap_err()
                .to_string();
            assert!(e.contains(says), "{e}");
        }
        // A results table is written for people, never read back.
        let e = serde_json::from_value::<crate::discipline::data::Results>(
            json!({"discipline": "ultimatum"}),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("never read back"), "{e}");
    }
}
