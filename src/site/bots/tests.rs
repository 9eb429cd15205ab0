//! Unit tests of the bot site's pages.

use super::*;
use crate::discipline::transcript::{Move, Moves};
use crate::lines::{BotFailure, BotFailureKind};
use crate::store::bots::Entry;

/// A game of teams 1 and 2 (slot 0 of repetition 0) on `setup` whose
/// only kept move is seat 0's `line`, with `failures` and the bots' CPU
/// times `cpu_ms`.
fn one_move_game(
    setup: crate::discipline::game::Setup,
    failures: Vec<BotFailure>,
    cpu_ms: Vec<u64>,
    line: &str,
) -> StoredGame {
    StoredGame {
        key: r#"{"repetition":0,"slot":0}"#.into(),
        seats: vec![TeamId(1), TeamId(2)],
        pairing: "1-2".into(),
        setup,
        subject: String::new(),
        result: String::new(),
        moves_not_kept: None,
        played: Played {
            outcome: None,
            failures,
            cpu_us: cpu_ms.iter().map(|ms| ms.saturating_mul(1000)).collect(),
            cpu_ms,
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
                line: line.into(),
            }],
            forfeits: vec![],
            ends_after: None,
        }),
    }
}

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
    let g = one_move_game(setup, vec![failure], vec![1, 1], evil);
    let dir = tempfile::tempdir().unwrap();
    let names: Vec<String> = c.entries.iter().map(|e| e.name.clone()).collect();
    let folders = SiteFolders::open(dir.path(), &["game"]).unwrap();
    render_game(&c, &g, &names).write(&folders).unwrap();
    let mut row = Vec::new();
    pairing_row(&mut row, &g, &names, GamePage::Written).unwrap();
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
    pairing_row(&mut row, &g, &names, GamePage::NotKept).unwrap();
    let row = String::from_utf8(row).unwrap();
    assert!(row.contains("repetition-0-slot-0 (not kept)"), "{row}");
    assert!(!row.contains("&quot;repetition"), "{row}");
}

/// A bot's CPU time depends on the machine's load: a page within a few
/// bytes of a 4 KiB boundary took one block more where its CPU figures
/// had more digits, so a tight pairing's cut moved with the load. The
/// charge is the same whatever the digits: names of every length (pages
/// at every distance from a boundary), played at 1 ms and at 12,345,678
/// ms and at the widest figure, cost the same blocks; at some length the
/// pages themselves straddle a boundary (the attack is reached: the
/// charge differed there before), and the widest page is the page with
/// its slack.
#[test]
fn a_game_pages_charge_is_the_same_whatever_the_digits_of_its_cpu_figures() {
    let game = |cpu_ms: Vec<u64>| {
        let setup =
            crate::discipline::ultimatum::setup(crate::discipline::ultimatum::rules::Params {
                rounds: 3,
            });
        one_move_game(setup, vec![], cpu_ms, "50")
    };
    let (mut straddled, mut lengths) = (0, 0);
    for len in 1..=600 {
        let names = vec!["a".repeat(len), "b".into()];
        let c = BotContest {
            id: 1,
            discipline: Discipline::ULTIMATUM,
            seed: 1,
            entries: names
                .iter()
                .enumerate()
                .map(|(i, n)| Entry {
                    team: TeamId(i as u32 + 1),
                    version: 1,
                    name: n.clone(),
                })
                .collect(),
            materials: vec![],
            finished: true,
        };
        let quiet = render_game(&c, &game(vec![1, 1]), &names);
        let loaded = render_game(&c, &game(vec![12_345_678, 1]), &names);
        let widest = render_game(&c, &game(vec![u64::MAX, u64::MAX]), &names);
        assert_eq!(quiet.on_disk(), loaded.on_disk(), "names of {len}");
        assert_eq!(quiet.on_disk(), widest.on_disk(), "names of {len}");
        assert_eq!(widest.cpu_slack, 0);
        assert_eq!(
            widest.page.1.len(),
            quiet.page.1.len() + quiet.cpu_slack,
            "every CPU figure of the page is counted"
        );
        let blocks = |f: &GameFiles| crate::site::model::on_disk(f.page.1.len());
        if blocks(&quiet) != blocks(&loaded) || blocks(&quiet) != blocks(&widest) {
            straddled += 1;
        }
        lengths += 1;
    }
    assert!(
        straddled > 0,
        "no page near a boundary in {lengths} lengths"
    );
}

/// A bot that resumed itself while it was stopped for its opponent's turn
/// fails `ran_while_stopped`; how much CPU it had run by the time the
/// referee's check came is the machine's load's as much as the bot's.
/// Measured at 51 ms and at 4 s, the verdict, the game's page, its text
/// and the pairing's row are the same bytes, and the measurement is on
/// none of them (before, the page said "ran for 51 ms" or "ran for 4000
/// ms"). A game stored before, with `ran_ms`, reads as the same verdict.
#[test]
fn a_bot_that_ran_while_stopped_has_the_same_page_whatever_it_was_measured_at() {
    use std::time::Duration;
    let c = BotContest {
        id: 1,
        discipline: Discipline::ULTIMATUM,
        seed: 1,
        entries: (1..=2)
            .map(|i| Entry {
                team: TeamId(i),
                version: 1,
                name: format!("bot{i}"),
            })
            .collect(),
        materials: vec![],
        finished: true,
    };
    let names: Vec<String> = c.entries.iter().map(|e| e.name.clone()).collect();
    assert_eq!(
        crate::lines::ran_while_stopped(crate::lines::FROZEN_SLACK),
        None,
        "within the slack: no verdict"
    );
    let published = |ran: Duration| {
        let kind = crate::lines::ran_while_stopped(ran).unwrap();
        let failure = BotFailure {
            bot: 1,
            turn: 2,
            reason: crate::lines::describe_bot_failure(1, 2, &kind, None),
            kind,
            line: None,
        };
        let setup =
            crate::discipline::ultimatum::setup(crate::discipline::ultimatum::rules::Params {
                rounds: 3,
            });
        let g = one_move_game(setup, vec![failure], vec![7, 7], "50");
        let dir = tempfile::tempdir().unwrap();
        let folders = SiteFolders::open(dir.path(), &["game"]).unwrap();
        render_game(&c, &g, &names).write(&folders).unwrap();
        let mut row = Vec::new();
        pairing_row(&mut row, &g, &names, GamePage::Written).unwrap();
        let read =
            |name: &str| std::fs::read_to_string(dir.path().join("game").join(name)).unwrap();
        (
            g.played.failures[0].clone(),
            read("repetition-0-slot-0.html"),
            read("repetition-0-slot-0.txt"),
            String::from_utf8(row).unwrap(),
        )
    };
    let quick = published(Duration::from_millis(51));
    let slow = published(Duration::from_millis(4000));
    assert_eq!(quick, slow);
    assert!(
        quick
            .1
            .contains("ran for more than 50 ms of CPU time while it was stopped"),
        "{}",
        quick.1
    );
    for text in [&quick.1, &quick.2, &quick.3] {
        assert!(!text.contains("51 ms") && !text.contains("4000"), "{text}");
    }
    let stored: BotFailure = serde_json::from_str(
        r#"{"bot":1,"turn":2,"failure":"ran_while_stopped","ran_ms":4000,"line":null,
            "reason":"player 2, turn 2: ran for 4000 ms"}"#,
    )
    .unwrap();
    assert_eq!(stored.kind, BotFailureKind::RanWhileStopped);
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

/// Every file under `dir` by its path there, with its bytes.
fn site_files(dir: &std::path::Path) -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap().display().to_string();
                files.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    files
}

/// Every relative link (`href`, `src`) of every page names a file of the
/// site, and every `#budget` anchor is on its own page.
fn assert_every_link_resolves(dir: &std::path::Path, files: &BTreeMap<String, Vec<u8>>) {
    let link = regex::Regex::new(r#"(?:href|src)="([^"]*)""#).unwrap();
    for (name, bytes) in files.iter().filter(|(n, _)| n.ends_with(".html")) {
        let html = String::from_utf8_lossy(bytes);
        let here = dir.join(name);
        let folder = here.parent().unwrap();
        for cap in link.captures_iter(&html) {
            let (file, anchor) = cap[1].split_once('#').unwrap_or((&cap[1], ""));
            if file.is_empty() {
                assert!(
                    html.contains(&format!("id=\"{anchor}\"")),
                    "{name}: #{anchor} is on no element of the page"
                );
                continue;
            }
            assert!(
                folder.join(file).is_file(),
                "{name}: link to {}, which does not exist",
                &cap[1]
            );
        }
    }
}

/// A small field of each of the seeds' four keeping three games a pairing,
/// under a budget whose share per pairing is one block less than the
/// smallest pairing's kept pages: each pairing's pages are written in the
/// order of its games while they fit its share and none after (the files
/// of the kept games only, each pairing within its share), its page says
/// why in words, every link resolves; the same site byte for byte when the
/// games were stored in the opposite order, and when written over the
/// whole site (the cut pages' files removed). At the default budget every
/// page of the field is there.
#[test]
fn a_small_budget_cuts_each_pairings_game_pages_where_the_rule_says_whatever_the_order() {
    use crate::bench_site::{fill_started, ContestState, ScriptedContest};
    for d in crate::discipline::registry::built_in() {
        let mut s = ScriptedContest::start(d, 4, Some(3), ContestState::Finished).unwrap();
        s.config.site.transcripts_per_pairing = 3;
        let (mut s, _) = fill_started(s).unwrap();
        let c = crate::store::bots::contest(s.store.conn(), d)
            .unwrap()
            .unwrap();
        let results = crate::contest::bots::results(&s.store, &c, &s.config)
            .unwrap()
            .unwrap();
        // The whole site at the default budget: every kept game's page.
        let whole = s.tmp.path().join("whole");
        let w = write(&whole, &s.store, &c, &s.config, &results).unwrap();
        assert_eq!(w.n_game_pages_cut, 0, "{d}: the default keeps every page");
        // Each pairing's kept games in order, with what their files take.
        let mut kept: BTreeMap<String, Vec<(String, u64)>> = BTreeMap::new();
        crate::store::bots::for_each_game(&s.store, &c, &s.config, |g| {
            if g.moves.is_some() {
                let slug = g.slug();
                let cost: u64 = ["html", "txt", "moves.txt"]
                    .iter()
                    .filter_map(|ext| {
                        std::fs::metadata(whole.join(format!("game/{slug}.{ext}"))).ok()
                    })
                    .map(|m| crate::site::model::on_disk(m.len() as usize))
                    .sum();
                kept.entry(g.pairing.clone())
                    .or_default()
                    .push((slug, cost));
            }
            Ok(())
        })
        .unwrap();
        assert_eq!(
            w.n_game_pages,
            kept.values().map(Vec::len).sum::<usize>() as u64
        );
        assert!(
            kept.values().any(|k| k.len() > 1),
            "{d}: a pairing keeps games"
        );
        let smallest = kept
            .values()
            .map(|k| k.iter().map(|(_, c)| c).sum::<u64>())
            .min()
            .unwrap();
        let share = smallest - crate::site::model::PAGE_BLOCK;
        s.config.site.game_page_bytes = Some(share * kept.len() as u64);
        // The rule: a pairing's pages in order while they fit, none after.
        let mut expected = std::collections::BTreeSet::new();
        let mut cut = 0;
        for games in kept.values() {
            let mut used = 0;
            for (slug, cost) in games {
                if used + cost > share {
                    cut += 1;
                    break;
                }
                used += cost;
                expected.insert(format!("game/{slug}.html"));
            }
        }
        assert!(cut >= 1, "{d}: the budget cuts a pairing");
        let small = s.tmp.path().join("small");
        let sum = write(&small, &s.store, &c, &s.config, &results).unwrap();
        assert_eq!(sum.pairing_share, share, "{d}");
        assert_eq!(sum.n_game_pages, expected.len() as u64, "{d}");
        let files = site_files(&small);
        let pages: std::collections::BTreeSet<String> = files
            .keys()
            .filter(|n| n.starts_with("game/") && n.ends_with(".html"))
            .cloned()
            .collect();
        assert_eq!(pages, expected, "{d}: the pages the rule keeps");
        // No file of a cut game; each pairing within its share.
        for games in kept.values() {
            let mut used = 0;
            for (slug, _) in games {
                let mine: Vec<_> = files
                    .iter()
                    .filter(|(n, _)| {
                        n.strip_prefix("game/")
                            .and_then(|n| n.strip_prefix(slug.as_str()))
                            .is_some_and(|rest| rest.starts_with('.'))
                    })
                    .collect();
                let has_page = expected.contains(&format!("game/{slug}.html"));
                assert_eq!(mine.len(), if has_page { 2 } else { 0 }, "{d} {slug}");
                used += mine
                    .iter()
                    .map(|(_, b)| crate::site::model::on_disk(b.len()))
                    .sum::<u64>();
            }
            assert!(used <= share, "{d}: {used} > {share}");
        }
        assert_every_link_resolves(&small, &files);
        // The words, on each cut pairing's page.
        let said = files
            .iter()
            .filter(|(n, _)| n.starts_with("pairing/"))
            .filter(|(_, b)| {
                String::from_utf8_lossy(b).contains(&crate::draw::escape(&format!(
                    "have no page of their own: the game pages of this contest may take {} on \
                     disk (the budget the organizer set), shared evenly by its {} pairings \
                     with kept games, and the share of this pairing ({}) was full",
                    crate::site::model::size_text(share * kept.len() as u64),
                    kept.len(),
                    crate::site::model::size_text(share),
                )))
            })
            .count();
        assert_eq!(said, cut, "{d}: each cut pairing says why");
        // Written over the whole site: the same files, the cut pages gone.
        write(&whole, &s.store, &c, &s.config, &results).unwrap();
        assert!(site_files(&whole) == files, "{d}: over the whole site");
        // The games stored in the opposite order: the same site.
        s.store
            .conn()
            .execute_batch(
                "CREATE TEMP TABLE g AS SELECT * FROM bot_games ORDER BY rowid DESC; \
                 DELETE FROM bot_games; INSERT INTO bot_games SELECT * FROM g; DROP TABLE g;",
            )
            .unwrap();
        let other = s.tmp.path().join("other");
        write(&other, &s.store, &c, &s.config, &results).unwrap();
        assert!(
            site_files(&other) == files,
            "{d}: the games in the other order"
        );
    }
}

/// Red team (F10): whoever else can write the site folder (a shared web
/// root) puts a symbolic link at `game/`, `pairing/` and `bot/`, each to a
/// folder elsewhere that the server can write and they cannot. The site
/// written again (under a budget that cuts every game page, so that the
/// files of cut games are removed) writes nothing there and removes
/// nothing there: its pages go into folders of the site's own. Before,
/// every page and download went through the links, and a cut game's
/// files were removed from the folder elsewhere (a file there named like
/// a game's page went with them).
#[test]
fn a_link_at_a_bot_sites_folder_never_writes_or_removes_elsewhere() {
    use crate::bench_site::{fill_started, ContestState, ScriptedContest};
    let d = Discipline::ULTIMATUM;
    let s = ScriptedContest::start(d, 3, Some(3), ContestState::Finished).unwrap();
    let (mut s, _) = fill_started(s).unwrap();
    let c = crate::store::bots::contest(s.store.conn(), d)
        .unwrap()
        .unwrap();
    let results = crate::contest::bots::results(&s.store, &c, &s.config)
        .unwrap()
        .unwrap();
    let site = s.tmp.path().join("site");
    write(&site, &s.store, &c, &s.config, &results).unwrap();
    let pages: Vec<String> = std::fs::read_dir(site.join("game"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!pages.is_empty());
    let elsewhere = tempfile::tempdir().unwrap();
    for sub in ["game", "pairing", "bot"] {
        let target = elsewhere.path().join(sub);
        std::fs::create_dir(&target).unwrap();
        std::fs::rename(site.join(sub), site.join(format!("{sub}-before"))).unwrap();
        std::os::unix::fs::symlink(&target, site.join(sub)).unwrap();
    }
    // The owner's files elsewhere, named as the site's game files are.
    for name in &pages {
        std::fs::write(elsewhere.path().join("game").join(name), "the owner's\n").unwrap();
    }
    let before = site_files(elsewhere.path());
    s.config.site.game_page_bytes = Some(1);
    let w = write(&site, &s.store, &c, &s.config, &results).unwrap();
    assert!(w.n_game_pages_cut > 0, "{w:?}");
    let after = site_files(elsewhere.path());
    assert!(
        after == before,
        "the folders elsewhere were written or removed from: before {:?}, after {:?}",
        before.keys().collect::<Vec<_>>(),
        after.keys().collect::<Vec<_>>()
    );
    for sub in ["pairing", "bot"] {
        let meta = std::fs::symlink_metadata(site.join(sub)).unwrap();
        assert!(meta.is_dir(), "{sub}: {meta:?}");
        assert!(std::fs::read_dir(site.join(sub)).unwrap().next().is_some());
    }
    assert!(std::fs::symlink_metadata(site.join("game"))
        .unwrap()
        .is_dir());
}
