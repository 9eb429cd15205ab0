//! The one list of the bot disciplines' seams ([`super::seam::BotDiscipline`]):
//! the four of the seeds, one line each, and those a program adds with
//! [`register`] before it reads a configuration (the tests'
//! rock-paper-scissors: a discipline from outside the crate, through the
//! same seam). Looking a seam up by discipline or by a game's setup;
//! nothing else.

use std::sync::RwLock;

use serde::Deserialize;

use super::data::{Kind, Tagged};
use super::game::Setup;
use super::seam::BotDiscipline;
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
}

/// Adds a bot discipline to the list. Registering the same seam again is
/// no change; another seam under a name in use is refused.
pub fn register(seam: &'static dyn BotDiscipline) -> Result<(), RegisterError> {
    let name = seam.discipline().name();
    if !good_name(name) {
        return Err(RegisterError::BadName(name));
    }
    let mut list = REGISTERED.write().expect("registry");
    let there = BUILT_IN
        .iter()
        .chain(list.iter())
        .find(|b| b.discipline() == seam.discipline());
    if let Some(there) = there {
        // One seam value per discipline: the same one again is no change.
        return if std::ptr::addr_eq(*there, seam) {
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

    /// The name in mails and on the site.
    pub fn title(self) -> &'static str {
        match of(self) {
            Some(b) => b.title(),
            None => "KNOBELN",
        }
    }

    /// How many bots a game seats (the flooding island: one).
    pub fn seats(self) -> usize {
        of(self).map_or(2, |b| b.seats())
    }
}

impl std::str::FromStr for Discipline {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let all = Discipline::all();
        all.iter().copied().find(|d| d.name() == s).ok_or_else(|| {
            format!(
                "no discipline `{s}`: it is one of {}",
                all.iter().map(|d| d.name()).collect::<Vec<_>>().join(", ")
            )
        })
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
        for bad in ["", "Rock", "rock paper", "rps!", &"x".repeat(33)] {
            assert!(!good_name(bad), "{bad:?}");
        }
    }
}
