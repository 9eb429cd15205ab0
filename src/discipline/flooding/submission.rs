//! A team's own island (the 2012 seed: "Jeder Wettbewerbsteilnehmer darf
//! zusätzlich eine Insel erstellen und einreichen"): the subject `island`,
//! where its text is in a mail, its check ([`Island::parse`]: at most 1000
//! fields, a valid start field) and the accepting mail's lines.
//!
//! What it does not do: read mail, authenticate or store (the generic mail
//! command `crate::mail::commands::submission` does, for any discipline's
//! [`Submission`]).

use crate::discipline::flooding::rules::Island;
use crate::discipline::seam::{Checked, Submission};

/// The flooding island's submission.
pub const ISLAND: Submission = Submission {
    word: "island",
    what: "island",
    whats: "islands",
    help: "  island                     send an island every bot will play: the
                             body holds <<FROM>> team_name auth_string
                             and the island, GAMEBOARDSTART X,Y ...
                             GAMEBOARDEND",
    format: "Send the island in the text format of the rules: a line \
        GAMEBOARDSTART X,Y, then Y rows of X symbols (# dry, o flooded, . water), \
        then GAMEBOARDEND and, if you like, ROUND 1 X,Y for the start field; with \
        the line <<FROM>> team_name authentification_string in the mail.",
    missing: "The mail holds no island: no line GAMEBOARDSTART.",
    find,
    check,
};

/// The island in a text: from its `GAMEBOARDSTART` line to `GAMEBOARDEND`,
/// with the optional start line (`ROUND 1 X,Y`) after it.
fn find(text: &str) -> Option<String> {
    let t = text.replace("\r\n", "\n");
    let at = t.find("GAMEBOARDSTART")?;
    let rest = &t[at..];
    let end = rest
        .find("GAMEBOARDEND")
        .map(|e| {
            let after = &rest[e..];
            // Keep the optional start line after GAMEBOARDEND.
            let mut lines = after.lines();
            let first = lines.next().map_or(0, |l| l.len() + 1);
            match lines.next() {
                Some(l) if l.trim_start().starts_with("ROUND") => e + first + l.len() + 1,
                _ => e + first,
            }
        })
        .unwrap_or(rest.len())
        .min(rest.len());
    Some(rest[..end].to_string())
}

/// The island checked, in the seed's text format, and what the accepting
/// mail says of it.
fn check(text: &str) -> Result<Checked, String> {
    let island = Island::parse(text).map_err(|e| format!("The island is not valid: {e}"))?;
    let report = format!(
        "Size: {} x {} = {} fields, {} of them land.\n\
         Start field: {}{}\n",
        island.width(),
        island.height(),
        island.width() as usize * island.height() as usize,
        island.n_land(),
        island.start(),
        if island.start_given() {
            " (given)"
        } else {
            " (the first dry field)"
        }
    );
    Ok(Checked {
        text: island.to_text(),
        report,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_island_is_found_with_its_start_line_and_checked() {
        let mail = "<<FROM>> a b\nhello\nGAMEBOARDSTART 3,1\n###\nGAMEBOARDEND\nROUND 1 2,1\nbye\n";
        let text = find(mail).unwrap();
        assert_eq!(text, "GAMEBOARDSTART 3,1\n###\nGAMEBOARDEND\nROUND 1 2,1\n");
        let checked = check(&text).unwrap();
        assert!(
            checked.report.contains("3 x 1 = 3 fields"),
            "{}",
            checked.report
        );
        assert!(checked.report.contains("(given)"), "{}", checked.report);
        assert_eq!(find("no island here"), None);
        let bad = check("GAMEBOARDSTART 2,1\n#\nGAMEBOARDEND\n").unwrap_err();
        assert!(bad.starts_with("The island is not valid: "), "{bad}");
    }
}
