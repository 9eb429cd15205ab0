//! Snapshot tests of every mail template: the text a participant reads,
//! rendered from fixed data, must equal `tests/data/snapshots/mail/NAME.txt`.
//! After an intended change, regenerate with `KNOBELN_UPDATE_SNAPSHOTS=1`
//! and review the diff.

use std::path::PathBuf;

use serde_json::{json, Value};

use knobeln::mail::texts::{render, TEMPLATES};

fn fixture(name: &str) -> Value {
    match name {
        "registration_accepted_bot" => json!({
            "contest_name": "freiesMagazin contest",
            "contest_address": "knobeln@contest.example",
            "team_name": "the_heavy_lords_of_knobeln_2",
            "requested_name": "the_heavy_lords_of_knobeln",
            "renamed": true,
            "auth": "k7mq2x9vbt4hc8np3rw6yd5ags",
            "warnings": [],
            "discipline": "the ultimatum game",
            "languages": "C (gcc -O2), C++ (g++ -O2), Python 3, Java, Rust",
            "registration_deadline": "2011-10-31 12:00 UT",
            "compile_end": "2011-10-31 12:00 UT",
            "contest_start": "2011-11-01 12:00 UT",
            "waits_for_proof": true,
            "proof_days": 3,
        }),
        "bot_results" => json!({
            "heading": "freiesMagazin contest (the ultimatum game)",
            "table": "Place  Bot                        Plus      Minus  Won Draw Lost\n   1.  simple                  6682555    4515445    2    0    2",
        }),
        "check_report" => json!({
            "accepted": false,
            "accepted_note": "Your program passed every check.",
            "rejected_note": "Your program was not accepted. Fix the errors below and send it again.",
            "team": "the_heavy_lords_of_knobeln",
            "lexical_elements": 71,
            "max_lexical_elements": 10000,
            "checks": [{"number": 1, "title": "header (<<FROM>> team_name auth_string)", "verdict": "passed"}],
            "errors": ["check 5 (compilation with gcc): line 3: expected ';' before '}' token"],
            "warnings": [],
            "compiler_heading": "gcc said:",
            "compiler_output": "strategy.c:3:5: error: expected ';' before '}' token",
            "trial": null,
        }),
        "registration_accepted" => json!({
            "contest_name": "International KNOBELN contest",
            "contest_address": "knobeln@contest.example",
            "team_name": "the_heavy_lords_of_knobeln_2",
            "requested_name": "the_heavy_lords_of_knobeln",
            "renamed": true,
            "auth": "k7mq2x9vbt4hc8np3rw6yd5ags",
            "record": "mail-address: joe@lords.example\nmail-preference: LAP,DGP\nteam-name: the_heavy_lords_of_knobeln_2\nOrganization: University of Northeast Sacrodata, Intellect City, Eggland\nteam-members:\n Joe Cool, 45, professional systems programmer,\n 20-year-experienced programmer\n",
            "compile_start": "1994-03-23 00:00 UT",
            "registration_deadline": "1994-05-12 12:00 UT",
            "compile_end": "1994-05-14 10:00 UT",
            "contest_start": "1994-05-14 12:00 UT",
            "warnings": ["Your team has 11 members; the announcement says \"Team size should be anywhere between 1 and 10\"."],
            "a": 1, "b": 12288, "log2_b": 13, "k": 8, "throws": 1000, "memory_kb": 1024, "fuel": 1710000000,
            "waits_for_proof": true,
            "proof_days": 3,
        }),
        "registration_rejected" => json!({
            "contest_name": "International KNOBELN contest",
            "bots": false,
            "reason": null,
            "problems": ["line 1: mail-address: \"joe at lords\" is not an internet domain style address", "line 3: team-name: \"9lives\" is not a valid C identifier"],
        }),
        "registration_exists" => json!({
            "contest_name": "International KNOBELN contest",
            "mail_address": "joe@lords.example",
            "team_name": "the_heavy_lords_of_knobeln",
            "organizer": "organizer@contest.example",
        }),
        "confirm_address" => json!({
            "contest_name": "International KNOBELN contest",
            "days": 7,
        }),
        "registration_confirm_sent" => json!({
            "mail_address": "joe@lords.example",
            "days": 7,
        }),
        "registration_confirm_refused" => json!({
            "mail_address": "joe@lords.example",
            "why": "a confirmation request went to that address in the last 24 hours \
                    already, and it must be answered first.",
        }),
        "confirm_unknown" => json!({
            "contest_name": "International KNOBELN contest",
            "days": 7,
            "from": "joe@lords.example",
            "went_to": "joe@cs.uni.example",
        }),
        "compile_report" => json!({
            "team": "the_heavy_lords_of_knobeln",
            "received": "1994-04-01 09:30 UT",
            "accepted": false,
            "has_current": true,
            "program": "strategy",
            "report": "KNOBELN compile report\n======================\n\nResult: REJECTED\n",
        }),
        "compile_refused" => json!({
            "reason": "The team name and the authentification string in the <<FROM>> line do not match any registration.",
            "hint": "Copy both exactly from the acknowledgement of your registration.",
        }),
        "software" => {
            json!({ "files": [{"name": "README"}, {"name": "knobellib.c"}], "bots": false, "discipline": "KNOBELN", "contest_name": "International KNOBELN contest" })
        }
        "bot_summary" => json!({
            "heading": "freiesMagazin contest (the ultimatum game)",
            "team": "the_heavy_lords_of_knobeln",
            "per_what": "opponent", "transcripts": false,
            "played": true,
            "table": "Opponent  Matches     Plus    Minus  Won  Draw  Lost  Failures\nsimple_c      200  2495000  2505000    0     0     2         0\ntotal         200  2495000  2505000    0     0     2         0\n\nPlus and Minus are the mean points per repetition; the results table\nshows their totals rounded to whole points. Won, Draw and Lost count the\ntwo orders of each pairing, each decided over all its repetitions.",
        }),
        "bot_transcripts" => json!({
            "heading": "freiesMagazin contest (the ultimatum game)",
            "team": "the_heavy_lords_of_knobeln",
            "first": true, "n_attached": 16, "one_game": false, "n_parts": 2,
            "one_part": false, "n_left_out": 3,
            "kept_per_pairing": 10, "one_kept": false, "one_bot": false, "attachment": "transcripts-1.txt",
        }),
        "kit_rules_ultimatum"
        | "kit_rules_flooding"
        | "kit_rules_footsteps"
        | "kit_rules_morabaraba"
        | "kit_bot_readme" => {
            let d = name.trim_start_matches("kit_rules_");
            let mut config = knobeln::config::Config::default();
            config.contest.discipline = d
                .parse()
                .unwrap_or(knobeln::discipline::Discipline::FLOODING);
            let mut data = knobeln::kit::bot_kit_data(&config);
            data["bots"] = json!(["simple.c", "random.py"]);
            data["first_bot"] = json!("random.py");
            data["referee_args"] = json!("./mybot ./otherbot");
            data
        }
        "help" => json!({
            "bots": false, "discipline": "KNOBELN", "flooding": false, "languages": "",
            "ways": [], "contest_address": "knobeln@contest.example",
            "contest_name": "International KNOBELN contest",
            "organizer": "organizer@contest.example",
            "subject": "hello",
            "html_only": true,
            "forwarded": true,
        }),
        "automatic_note" => json!({ "value": "auto-generated", "until": "2026-12-02 10:40 UTC" }),
        "kit_refused" => {
            json!({ "why": "at most 2 kits a day to one mailbox", "per_day": 2, "with_string": false })
        }
        "too_large" => {
            json!({ "size": 40_000_000, "limit": 524_288, "size_mb": "40.0 MB", "limit_mb": "0.5 MB",
                    "bots": false, "max_lexical_elements": 10_000 })
        }
        "organizer_digest" => json!({
            "contest_name": "International KNOBELN contest", "n_failed": 1, "more_failed": 0,
            "failed": [{"id": 4, "kind": "registration_accepted", "to": "joe@nowhere.example",
                        "subject": "KNOBELN: registration accepted", "reason": "554 5.7.1 <joe@nowhere.example>: Relay access denied"}],
            "n_set_aside": 1, "more_set_aside": 0,
            "set_aside": [{"id": 17, "from": "ann@x.example", "origin": "imap:INBOX", "subject": "please compile",
                           "why": "set aside: compile service i/o: No such file or directory"}],
            "n_dropped": 2, "interval": "hour",
        }),
        "lap" => json!({
            "contest_name": "International KNOBELN contest", "n": 2,
            "records": ["mail-address: a@x.example\nteam-name: a\n", "mail-address: b@y.example\nteam-name: b\n"],
        }),
        "lgp" => json!({
            "contest_name": "International KNOBELN contest", "round": 1, "group": 2, "n": 2,
            "members": ["climbers", "the_heavy_lords_of_knobeln"],
        }),
        "dgp" => json!({
            "team": "climbers", "round": 1, "group": 2, "several": true, "part": 1, "parts": 2,
            "protocols": "KNOBELN-PROTOCOL 1\n...\nKNOBELN-END 9 78ad2756\n",
        }),
        "grp" => {
            json!({ "team": "climbers", "round": 1, "group": 2, "table": "  opponent  you  them", "note": null })
        }
        "grg" => json!({ "round": 1, "group": 2, "table": "  P  Q  points", "note": null }),
        "grr" => json!({ "round": 1, "group": 2, "n": 2, "table": "  1. climbers  123  advances",
                         "advancing": "The team marked \"advances\" proceeds to round 2." }),
        "rsm" => json!({
            "contest_name": "International KNOBELN contest", "round": 1, "is_final": false,
            "organizer_text": "Round 1 was a slaughter: the cooperators won.",
            "note": "The organizer's paragraph.", "summary": "Group 1: ...",
        }),
        "rsm_pause" => json!({
            "contest_name": "International KNOBELN contest", "round": 2, "is_final": false,
            "ends": "1994-05-14 14:30 UT", "organizer": "organizer@contest.example",
            "contest_address": "knobeln@contest.example", "token": "k7mq2x9vbt4hc8np3rw6yd5ags",
            "summary": "Group 1 (20 teams):\n  ...",
        }),
        "rsm_accepted" => json!({ "round": 2, "text": "Round 2 was wild." }),
        "disqualified" => json!({
            "team": "crasher", "contest_name": "International KNOBELN contest", "round": 1,
            "first": "throw 6: crashed", "second": "throw 6: crashed",
            "protocol": "KNOBELN-PROTOCOL 1\n...\n",
        }),
        "final" => json!({
            "contest_name": "International KNOBELN contest",
            "ranking": "  1. climbers  123", "evolution": "  1. climbers  55.00 %", "plot": true,
            "evolution_intro": "The population reached a fixed point.",
        }),
        "no_strategy" => json!({
            "team": "the_heavy_lords_of_knobeln", "bots": false, "contest_name": "International KNOBELN contest",
            "contest_address": "knobeln@contest.example", "organizer": "organizer@contest.example",
            "compile_end": "1994-05-14 10:00 UT", "contest_start": "1994-05-14 12:00 UT",
        }),
        "organizer_start" => json!({
            "contest_name": "International KNOBELN contest", "tournament": 1, "n_entrants": 47,
            "n_without": 1, "without": [{"name": "late_team", "address": "late@x.example"}],
        }),
        "refused" => json!({
            "subject": "status",
            "reason": "The team name and the authentification string in the <<FROM>> line do not match any registration.",
            "problems": [],
            "hint": "Copy both exactly from the acknowledgement of your registration.",
        }),
        "status" => json!({
            "bots": false, "choices": "LAP, LGP, DGP, GRP, GRG, GRR, RSM",
            "team": "the_heavy_lords_of_knobeln", "contest_name": "International KNOBELN contest",
            "now": "1994-05-01 08:00 UT", "registered_at": "1994-03-25 14:02 UT",
            "record": "mail-address: joe@lords.example\nmail-preference: LAP,DGP\nteam-name: the_heavy_lords_of_knobeln\n",
            "current": {"number": 2, "compiled_at": "1994-04-30 22:10 UT",
                        "report": "KNOBELN compile report\n======================\n\nResult: ACCEPTED"},
            "newer_rejected": {"number": 3, "compiled_at": "1994-05-01 07:55 UT", "report": null},
            "compile_end": "1994-05-14 10:00 UT", "contest_start": "1994-05-14 12:00 UT",
            "phase": "the compilation service is open", "preferences": "LAP,DGP",
        }),
        "preference" => json!({
            "team": "the_heavy_lords_of_knobeln", "old": "LAP,DGP,GRG,RSM", "new": "GRR,RSM",
            "described": ["GRR  send group result (ranking)", "RSM  send summaries of rounds (includes all group rankings)"],
        }),
        "forward" => json!({
            "contest_address": "knobeln@contest.example", "from": "Joe Cool <joe@lords.example>",
            "subject": "question about rule 6", "message_id": "m1@lords.example", "inbox_id": 42,
            "reply_to": "joe@lords.example", "text": "Does a series of 8 equal throws count?",
            "truncated": false, "limit": 16384,
        }),
        "auth_reset" => json!({
            "team": "the_heavy_lords_of_knobeln", "contest_name": "International KNOBELN contest",
            "auth": "k7mq2x9vbt4hc8np3rw6yd5ags", "organizer": "organizer@contest.example",
        }),
        "address_changed" => json!({
            "team": "the_heavy_lords_of_knobeln", "contest_name": "International KNOBELN contest",
            "old": "joe@lords.example", "new": "joe@new.example", "organizer": "organizer@contest.example",
        }),
        "withdrawn" => json!({
            "team": "the_heavy_lords_of_knobeln", "contest_name": "International KNOBELN contest",
            "reason": "two teams of the same people", "organizer": "organizer@contest.example",
        }),
        "registration_lapsed" => json!({
            "team": "the_heavy_lords_of_knobeln", "contest_name": "International KNOBELN contest",
            "proof_days": 3, "organizer": "organizer@contest.example",
        }),
        "kit_rules" => json!({
            "contest_name": "International KNOBELN contest",
            "contest_address": "knobeln@contest.example",
            "organizer": "organizer@contest.example",
            "a": 1, "b": 12288, "k": 8, "throws": 1000,
            "fuel": 1710000000, "memory_kb": 1024, "wall_secs": 10.0,
            "exemplars": 5, "max_generations": 1000,
            "max_lexical_elements": 10000, "min_description_lines": 15,
            "tolerated_description_lines": 12, "rsm_pause_minutes": 30,
            "registration_start": "1994-03-22 12:00 UT",
            "compile_start": "1994-03-23 12:00 UT",
            "registration_deadline": "1994-05-12 12:00 UT",
            "compile_end": "1994-05-14 10:00 UT",
            "contest_start": "1994-05-14 12:00 UT",
            "compile_closes": "2 hours",
        }),
        "submission_refused" => json!({
            "word": "island",
            "reason": "The island is not valid: it has 1001 fields, at most 1000 are allowed.",
            "hint": "Send the island in the text format of the rules.",
        }),
        other => panic!("no fixture for template {other}: add one"),
    }
}

#[test]
fn every_mail_template_matches_its_snapshot() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/snapshots/mail");
    let update = std::env::var_os("KNOBELN_UPDATE_SNAPSHOTS").is_some();
    let mut mismatches = Vec::new();
    for (name, _) in TEMPLATES {
        let text = render(name, &fixture(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        let path = dir.join(format!("{name}.txt"));
        if update {
            std::fs::write(&path, &text).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(&path)
            .unwrap_or_else(|_| panic!("missing snapshot {}", path.display()));
        if want != text {
            mismatches.push(format!("--- {name}: want\n{want}\n--- got\n{text}"));
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

#[test]
fn every_mail_is_7_bit_ascii_within_72_columns() {
    // Long data (a gcc message with its curly quotes, a long sentence) is
    // transliterated and wrapped; an indented line continues deeper.
    let mut data = fixture("check_report");
    data["errors"] = json!([format!(
        "check 5 (compilation with gcc): line 3: \u{2018}x\u{2019} undeclared \u{2014} {}",
        "and more words ".repeat(8)
    )]);
    for (name, _) in TEMPLATES {
        let value = if *name == "check_report" {
            data.clone()
        } else {
            fixture(name)
        };
        let text = render(name, &value).unwrap();
        if *name == "forward" {
            continue; // a stranger's mail, passed on to the organizer as it came
        }
        for line in text.lines() {
            assert!(line.is_ascii(), "{name}: {line:?}");
            assert!(line.len() <= 72, "{name}: {line:?}");
            assert_eq!(line, line.trim_end(), "{name}: trailing blanks");
        }
    }
    let report = render("check_report", &data).unwrap();
    assert!(
        report.contains("line 3: 'x' undeclared -- and more"),
        "{report}"
    );
    assert!(report.contains("\n      and more"), "{report}");
}

#[test]
fn strict_templates_refuse_missing_data() {
    // A missing value is an error, never an empty string in a participant's mail.
    assert!(render("too_large", &json!({ "size": 1 })).is_err());
}

#[test]
fn the_acknowledgement_speaks_the_words_of_1994() {
    let text = render("registration_accepted", &fixture("registration_accepted")).unwrap();
    assert!(text
        .contains("is accepted and your\nauthentification string is k7mq2x9vbt4hc8np3rw6yd5ags"));
    assert!(text.contains("slightly modified"));
    assert!(text.contains(" <<FROM>> the_heavy_lords_of_knobeln_2 k7mq2x9vbt4hc8np3rw6yd5ags"));
}

/// Issue 36: no mail says anything in Rust's `Debug` form (`Some(`,
/// `FieldSank { … }`, `a::b`): every template rendered with its fixture.
#[test]
fn no_mail_template_shows_debug_output() {
    for (name, _) in TEMPLATES {
        if *name == "forward" {
            continue; // a stranger's mail, passed on to the organizer as it came
        }
        let text = render(name, &fixture(name)).unwrap();
        let found = crate::common::debug_text(&text);
        assert!(found.is_empty(), "{name}: Debug output: {found:#?}");
    }
}
