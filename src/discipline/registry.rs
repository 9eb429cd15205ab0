//! The one list of the bot disciplines' seams ([`super::seam::BotDiscipline`]):
//! a sixth discipline is its folder and a line here. Looking a seam up by
//! discipline or by a game's setup; nothing else.

use super::game::Setup;
use super::seam::BotDiscipline;
use super::Discipline;

/// The bot disciplines, one line each: a sixth is its folder and a line.
static ALL: [&dyn BotDiscipline; 4] = [
    &super::ultimatum::Ultimatum,
    &super::flooding::Flooding,
    &super::footsteps::Footsteps,
    &super::morabaraba::Morabaraba,
];

/// The seam of `d`; `None` for KNOBELN, which is no bot discipline.
pub fn of(d: Discipline) -> Option<&'static dyn BotDiscipline> {
    ALL.iter().copied().find(|b| b.discipline() == d)
}

/// The seam of a setup's discipline.
pub fn of_setup(setup: &Setup) -> &'static dyn BotDiscipline {
    of(setup.discipline()).expect("every setup is a bot discipline's")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bot_discipline_is_listed_once_and_knobeln_not() {
        for d in Discipline::BOTS {
            let b = of(d).unwrap_or_else(|| panic!("{d} has no seam"));
            assert_eq!(b.discipline(), d);
            assert!(!b.referee_py().is_empty() && !b.demo_bots().is_empty());
        }
        assert!(of(Discipline::Knobeln).is_none());
        assert_eq!(ALL.len(), Discipline::BOTS.len());
    }
}
