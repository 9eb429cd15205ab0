//! `knobeln demo`: a whole contest by mail from nothing, on the embedded
//! default (spool + SQLite).

use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_knobeln");

#[test]
fn the_demo_runs_a_two_round_contest_by_mail_and_keeps_every_mail() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("demo");
    let out = Command::new(BIN)
        .args(["demo", "--teams", "44", "--throws", "120", "--dir"])
        .arg(&dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("KNOBELN demo: 44 teams, 2 rounds"),
        "{stdout}"
    );
    assert!(
        stdout.contains("disqualified: rulebreaker_0: throw "),
        "{stdout}"
    );
    assert!(
        stdout.contains("The winners of Knobeln Evolution"),
        "{stdout}"
    );
    // Every mail the server sent is in the spool: 44 acknowledgements, 44
    // compile reports, 44 final results, and the mails by preference.
    let outgoing: Vec<String> = std::fs::read_dir(dir.join("spool/outgoing"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    for (kind, n) in [
        ("registration_accepted", 44),
        ("compile_report", 44),
        ("final", 44),
        ("disqualified", 1),
    ] {
        let got = outgoing
            .iter()
            .filter(|f| f.ends_with(&format!("-{kind}.eml")))
            .count();
        assert_eq!(got, n, "{kind}");
    }
    for kind in ["lap", "lgp", "dgp", "grp", "grg", "grr", "rsm"] {
        assert!(
            outgoing
                .iter()
                .any(|f| f.ends_with(&format!("-{kind}.eml"))),
            "no {kind} mail"
        );
    }
    // The participants' mails were taken in by the server's spool path:
    // all in the database, none left in the spool.
    assert!(
        stdout.contains("incoming mails: 88 in the database's inbox"),
        "{stdout}"
    );
    assert_eq!(
        std::fs::read_dir(dir.join("spool/incoming/new"))
            .unwrap()
            .count(),
        0
    );
    assert!(!dir.join("spool/incoming/cur").exists());
    // The results site was regenerated as the contest went, and at its end.
    for page in [
        "index.html",
        "evolution.html",
        "evolution.svg",
        "final-crosstable.html",
        "round-1.html",
        "round-2.html",
    ] {
        assert!(
            dir.join("site").join(page).is_file(),
            "site page {page} missing"
        );
    }
    let article = std::fs::read_to_string(dir.join("results.txt")).unwrap();
    assert!(article.starts_with("Newsgroups: rec.games.misc,misc.misc"));
    // A second demo into the same folder needs --force.
    let again = Command::new(BIN)
        .args(["demo", "--dir"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("--force"));
}

/// What the demo prints of its results: the rounds and both lists of
/// winners (the lines from "round 1:" to the results article).
fn results_of(stdout: &str) -> String {
    let from = stdout.find("  round 1:").expect("the rounds");
    let to = stdout.find("The results article").expect("the article");
    stdout[from..to].to_string()
}

#[test]
fn the_same_seed_plays_the_same_demo() {
    let tmp = tempfile::tempdir().unwrap();
    let play = |folder: &str, seed: &str| {
        let out = Command::new(BIN)
            .args(["demo", "--teams", "42", "--throws", "60", "--seed", seed])
            .arg("--dir")
            .arg(tmp.path().join(folder))
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        results_of(&stdout)
    };
    let first = play("first", "7");
    assert_eq!(play("again", "7"), first, "the same seed, other games");
    assert_ne!(play("other", "8"), first, "another seed, the same games");
}
