//! The demo bots of the bot disciplines (each in its folder,
//! `src/discipline/NAME/demo/`, listed by its side of the seam): our own
//! programs after the seeds' sample and reference bots (the
//! ultimatum game's `simple`, `more` and `random`, the island's bot that
//! stands still, a trivial FootSteps and Morabaraba bot) and stronger ones,
//! in C and Python; and the kit's test islands, the flooding island's
//! (`src/discipline/flooding/test_islands/`).
//!
//! Only sources as text; building and playing them is the caller's.

use crate::discipline::Discipline;
use crate::mail::registration::Preference;

pub use crate::discipline::seam::DemoBot;

/// The demo bots of `d` (none for KNOBELN, whose demo strategies are
/// [`super::FAMILIES`]): each bot discipline's own, from its folder
/// (`src/discipline/NAME/demo/`).
pub fn demo_bots(d: Discipline) -> &'static [DemoBot] {
    crate::discipline::registry::of(d).map_or(&[], |b| b.demo_bots())
}

/// The name of a bot discipline's demo contest, after its seed's contest.
pub fn demo_contest_name(d: Discipline) -> &'static str {
    crate::discipline::registry::of(d).map_or("KNOBELN demo contest", |b| b.demo_contest_name())
}

/// The demo field of a bot discipline: one team per demo bot, named after
/// its file (`simple_c`, `random_py`). The first team asks for the
/// transcripts of its games and its summary per opponent (`DGP,GRP`); the
/// others name no preference and get the seeds' default (the summary).
pub fn bot_teams(d: Discipline) -> Vec<(super::DemoTeam, DemoBot)> {
    demo_bots(d)
        .iter()
        .enumerate()
        .map(|(k, b)| {
            let name = b.file.replace('.', "_");
            let team = super::DemoTeam {
                address: format!("{name}@participants.example"),
                name,
                family: b.file,
                variant: 0,
                organization: super::ORGANIZATIONS[k % super::ORGANIZATIONS.len()],
                preferences: if k == 0 {
                    &[Preference::DGP, Preference::GRP]
                } else {
                    &[]
                },
            };
            (team, *b)
        })
        .collect()
}

/// The "please compile" mail of a demo bot: the `<<FROM>>` line in the
/// body, the source attached under its file name (which says the language).
pub fn bot_compile_mail(
    team: &super::DemoTeam,
    auth: &str,
    bot: &DemoBot,
    contest_address: &str,
    n: usize,
) -> String {
    format!(
        "From: {name} <{addr}>\r\nTo: {contest_address}\r\nSubject: please compile\r\n\
         Message-ID: <demo-bot-compile-{n}@participants.example>\r\nMIME-Version: 1.0\r\n\
         Content-Type: multipart/mixed; boundary=\"b0undary\"\r\n\r\n\
         --b0undary\r\nContent-Type: text/plain; charset=us-ascii\r\n\r\n\
         <<FROM>> {name} {auth}\r\n\r\n\
         --b0undary\r\nContent-Type: text/plain; charset=us-ascii\r\n\
         Content-Disposition: attachment; filename=\"{file}\"\r\n\r\n{src}\r\n\
         --b0undary--\r\n",
        name = team.name,
        addr = team.address,
        file = bot.file,
        src = bot.source.replace('\n', "\r\n"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discipline::flooding::rules::Island;

    #[test]
    fn the_demo_islands_are_valid() {
        for (name, text) in crate::discipline::flooding::TEST_ISLANDS {
            Island::parse(text).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
    }

    #[test]
    fn every_bot_discipline_has_bots_in_c_and_python() {
        for d in Discipline::bots() {
            let bots = demo_bots(d);
            assert!(bots.iter().any(|b| b.file.ends_with(".c")), "{d}");
            assert!(bots.iter().any(|b| b.file.ends_with(".py")), "{d}");
        }
    }

    /// The Morabaraba kit's `miller.c` is `first.c` with `MILLER` defined
    /// (a bot is one file, so it carries the rules again): the two never
    /// drift apart.
    #[test]
    fn miller_is_first_with_miller_defined() {
        let first = include_str!("../discipline/morabaraba/demo/first.c");
        let miller = include_str!("../discipline/morabaraba/demo/miller.c");
        let header = miller
            .strip_suffix(first)
            .expect("miller.c ends with first.c, unchanged");
        assert!(header.ends_with("#define MILLER 1\n"), "{header}");
        assert_eq!(header.lines().count(), 5, "{header}");
    }
}
