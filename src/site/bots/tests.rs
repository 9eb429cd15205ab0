//! Unit tests of the bot site's pages.

use super::*;
use crate::discipline::transcript::{Move, Moves};
use crate::lines::{BotFailure, BotFailureKind};
use crate::store::bots::Entry;

/// The contest's islands are published with its results, never while
/// it runs; a name is text.
#[test]
fn the_islands_show_only_once_the_contest_is_finished() {
    let island = crate::discipline::flooding::islands::drawn_island(7, 1).to_text();
    let mut c = BotContest {
        id: 1,
        discipline: Discipline::FLOODING,
        seed: 7,
        entries: vec![],
        materials: vec![("<b>bay</b>".into(), island)],
        finished: false,
    };
    assert_eq!(published_materials(&c), None);
    c.finished = true;
    let (folder, h) = published_materials(&c).unwrap();
    assert_eq!(folder, "island");
    assert!(
        h.contains("<a href=\"island/1.txt\">&lt;b&gt;bay&lt;/b&gt;</a>"),
        "{h}"
    );
}

/// A stranger's bot names itself and prints HTML: every page shows it
/// as text, and the download keeps it as printed.
#[test]
fn what_a_bot_printed_and_its_name_are_text_on_every_page() {
    let evil = "<script>alert(1)</script>";
    let c = BotContest {
        id: 1,
        discipline: Discipline::ULTIMATUM,
        seed: 1,
        entries: vec![
            Entry {
                team: TeamId(1),
                version: 1,
                name: evil.into(),
            },
            Entry {
                team: TeamId(2),
                version: 2,
                name: "b\"><img src=x>".into(),
            },
        ],
        materials: vec![],
        finished: true,
    };
    let setup = crate::discipline::ultimatum::setup(crate::discipline::ultimatum::rules::Params {
        rounds: 3,
    });
    let failure = BotFailure {
        bot: 0,
        turn: 1,
        kind: BotFailureKind::Rule {
            rule: "an offer is a number".into(),
        },
        line: Some(evil.into()),
        reason: format!("player 1, turn 1: broke a rule; its line: \"{evil}\""),
    };
    let g = StoredGame {
        key: r#"{"repetition":0,"slot":0}"#.into(),
        seats: vec![TeamId(1), TeamId(2)],
        pairing: "1-2".into(),
        setup,
        subject: String::new(),
        result: String::new(),
        moves_not_kept: None,
        played: Played {
            outcome: None,
            failures: vec![failure],
            cpu_ms: vec![1, 1],
            cpu_us: vec![1000, 1000],
            wall_ms: 1,
            stderr: vec![String::new(); 2],
            transcript: None,
            transcript_truncated: false,
            moves: None,
            folders: None,
        },
        moves: Some(Moves {
            moves: vec![Move {
                seat: 0,
                line: evil.into(),
            }],
            forfeits: vec![],
            ends_after: None,
        }),
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("game")).unwrap();
    let names: Vec<String> = c.entries.iter().map(|e| e.name.clone()).collect();
    write_game(dir.path(), &c, &g, &names).unwrap();
    let mut row = Vec::new();
    pairing_row(&mut row, &g, &names, true).unwrap();
    let page = std::fs::read_to_string(dir.path().join("game/repetition-0-slot-0.html")).unwrap();
    for html in [page.as_str(), std::str::from_utf8(&row).unwrap()] {
        // The replay's data and script are the only scripts (issue 36).
        let ours = if html == page { 2 } else { 0 };
        assert_eq!(html.matches("<script").count(), ours, "{html}");
        assert_eq!(html.matches("</script").count(), ours, "{html}");
        assert!(!html.contains("<img"), "{html}");
        assert!(html.contains("&lt;script&gt;"), "{html}");
    }
    let txt = std::fs::read_to_string(dir.path().join("game/repetition-0-slot-0.txt")).unwrap();
    assert!(txt.contains(&format!("from 1: {evil}")), "{txt}");
    // Issue 36: a game without a page is named for people, not by its
    // raw key.
    let mut row = Vec::new();
    pairing_row(&mut row, &g, &names, false).unwrap();
    let row = String::from_utf8(row).unwrap();
    assert!(row.contains("repetition-0-slot-0 (not kept)"), "{row}");
    assert!(!row.contains("&quot;repetition"), "{row}");
}

/// Whoever else can write the site folder plants a symbolic link at a
/// bot page's temporary name (to a file elsewhere) and a FIFO at a
/// pairing page's: the pages are written, the file elsewhere keeps its
/// bytes, and nothing waits on the FIFO.
#[test]
fn a_link_or_fifo_at_a_bot_pages_temporary_name_never_writes_elsewhere() {
    let dir = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let victim = elsewhere.path().join("authorized_keys");
    std::fs::write(&victim, "ssh-ed25519 AAAA the owner's key\n").unwrap();
    std::os::unix::fs::symlink(&victim, dir.path().join("index.tmp~")).unwrap();
    let fifo = std::ffi::CString::new(
        dir.path()
            .join("pairing.tmp~")
            .as_os_str()
            .as_encoded_bytes(),
    )
    .unwrap();
    // SAFETY: mkfifo with a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    // A longer file at a spare's name is cut to the page.
    std::fs::write(dir.path().join("bot.tmp~"), "x".repeat(100)).unwrap();

    write_file(&dir.path().join("index.html"), b"<p>the index</p>").unwrap();
    write_file(&dir.path().join("bot.html"), b"<p>a bot</p>").unwrap();
    let mut s = Streamed::create(dir.path().join("pairing.html")).unwrap();
    s.out.write_all(b"<p>a pairing</p>").unwrap();
    s.finish().unwrap();

    assert_eq!(
        std::fs::read_to_string(&victim).unwrap(),
        "ssh-ed25519 AAAA the owner's key\n"
    );
    for (page, text) in [
        ("index.html", "<p>the index</p>"),
        ("bot.html", "<p>a bot</p>"),
        ("pairing.html", "<p>a pairing</p>"),
    ] {
        assert_eq!(
            std::fs::read_to_string(dir.path().join(page)).unwrap(),
            text
        );
    }
}
