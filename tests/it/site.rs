//! The static results site end to end: a real tournament of 44 teams (two
//! rounds, disqualifications, the Evolution) is played into a database,
//! the site is generated from it, and then checked: every page exists,
//! every link resolves, every plot has a size and something drawn, nothing
//! runs scripts, the output is deterministic, the structure of each page
//! type matches its snapshot in `tests/data/snapshots/site/` (regenerate
//! with `KNOBELN_UPDATE_SNAPSHOTS=1`), and Debian's chromium (headless)
//! loads the pages, measures the plots and takes screenshots, kept in
//! `target/site-screenshots/`. Without a working chromium the browser test
//! fails (it never skips); `tests/site-browser.sh` installs it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use regex::Regex;

use knobeln::engine::results::results;
use knobeln::engine::run::{Event, Observer};
use knobeln::site::observer::SiteObserver;
use knobeln::site::{game_page, generate, team_page, SiteOptions};
use knobeln::store::Store;

const BIN: &str = env!("CARGO_BIN_EXE_knobeln");
const CHROMIUM: &str = "/usr/bin/chromium";

struct Fixture {
    db: PathBuf,
    site: PathBuf,
    /// The strategies it played (44 files).
    strategies: PathBuf,
}

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// The tournament database and its site, built once per test run.
fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let root = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("site-fixture-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let strategies = root.join("strategies");
        std::fs::create_dir_all(&strategies).unwrap();
        for (src, copies) in [
            ("cooperator", 12),
            ("climber", 12),
            ("follower", 10),
            ("gambler", 8),
            ("crasher", 2),
        ] {
            let text = std::fs::read(repo(&format!("tests/data/tournament/{src}.c"))).unwrap();
            for i in 1..=copies {
                std::fs::write(strategies.join(format!("{src}_{i}.c")), &text).unwrap();
            }
        }
        let db = root.join("k.db");
        crate::common::tournament_run(&strategies, &db, 60, 1, 2, &[]);
        let site = root.join("site");
        let out = Command::new(BIN)
            .arg("site")
            .arg(&site)
            .arg("--db")
            .arg(&db)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "knobeln site failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Fixture {
            db,
            site,
            strategies,
        }
    })
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn html_pages(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "html"))
        .collect();
    v.sort();
    v
}

/// The pages the site must have, from the store itself.
fn expected_pages(db: &Path) -> BTreeSet<String> {
    let store = Store::open(db).unwrap();
    let res = results(&store, 1, vec![]).unwrap();
    let mut want: BTreeSet<String> = [
        "index.html",
        "style.css",
        "final-crosstable.html",
        "evolution.html",
        "evolution.svg",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for e in store.entries(1).unwrap() {
        want.insert(team_page(e.team.0));
    }
    for r in &res.rounds {
        want.insert(format!("round-{}.html", r.number));
        for g in &r.groups {
            for x in &g.games {
                if x.status != "cancelled" {
                    want.insert(game_page(r.number, g.number, x.slot));
                }
            }
        }
    }
    assert_eq!(res.rounds.len(), 2, "the fixture plays two rounds");
    assert!(res.evolution.is_some());
    assert!(
        !res.rounds[0].disqualified.is_empty(),
        "crashers are disqualified"
    );
    want
}

#[test]
fn every_page_exists_and_every_link_resolves() {
    let f = fixture();
    let want = expected_pages(&f.db);
    let have: BTreeSet<String> = std::fs::read_dir(&f.site)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let missing: Vec<_> = want.difference(&have).collect();
    assert!(missing.is_empty(), "missing pages: {missing:?}");
    let extra: Vec<_> = have.difference(&want).collect();
    assert!(extra.is_empty(), "unexpected files: {extra:?}");

    let link = Regex::new(r#"(?:href|src)="([^"]*)""#).unwrap();
    let mut n_links = 0;
    for page in html_pages(&f.site) {
        let html = read(&page);
        for cap in link.captures_iter(&html) {
            let target = &cap[1];
            assert!(
                !target.contains("://") && !target.starts_with("//"),
                "{}: external link {target}",
                page.display()
            );
            let file = target.split('#').next().unwrap();
            if file.is_empty() {
                continue;
            }
            assert!(
                f.site.join(file).is_file(),
                "{}: link to {target}, which does not exist",
                page.display()
            );
            n_links += 1;
        }
    }
    assert!(n_links > 1000, "only {n_links} links");
}

#[test]
fn pages_have_no_scripts_and_every_plot_has_a_size_and_content() {
    let f = fixture();
    let script = Regex::new(r#"(?i)<script|\son[a-z]+\s*=|javascript:"#).unwrap();
    let svg = Regex::new(r#"(?s)<svg([^>]*)>(.*?)</svg>"#).unwrap();
    let dim = Regex::new(r#"\b(width|height)="([0-9.]+)""#).unwrap();
    let drawn = Regex::new(r#"<(polygon|polyline|rect|circle|line|path)\b"#).unwrap();
    let mut n_svgs = 0;
    for page in html_pages(&f.site) {
        let html = read(&page);
        assert!(
            !script.is_match(&html),
            "{}: has a script or event handler",
            page.display()
        );
        for cap in svg.captures_iter(&html) {
            n_svgs += 1;
            let dims: Vec<f64> = dim
                .captures_iter(&cap[1])
                .map(|d| d[2].parse().unwrap())
                .collect();
            assert_eq!(dims.len(), 2, "{}: svg without size", page.display());
            assert!(
                dims.iter().all(|&d| d > 100.0),
                "{}: {dims:?}",
                page.display()
            );
            let n = drawn.find_iter(&cap[2]).count();
            assert!(n >= 10, "{}: only {n} drawn elements", page.display());
        }
    }
    let name = |p: &str| read(&f.site.join(p));
    assert!(name("evolution.html").contains("<svg"));
    assert!(name("final-crosstable.html").contains("<svg"));
    assert!(name("evolution.svg").starts_with("<svg"));
    assert!(n_svgs > 500, "only {n_svgs} plots");
}

#[test]
fn the_same_database_gives_the_same_site() {
    let f = fixture();
    let store = Store::open(&f.db).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let summary = generate(&store, 1, tmp.path(), &SiteOptions::default()).unwrap();
    // The CLI used the config's contest name; so does this one.
    let mut diff = Vec::new();
    for name in &summary.files {
        let a = std::fs::read(tmp.path().join(name)).unwrap();
        let b = std::fs::read(f.site.join(name)).unwrap();
        let a = String::from_utf8(a)
            .unwrap()
            .replace("KNOBELN contest", "International KNOBELN contest");
        if a.as_bytes() != b {
            diff.push(name.clone());
        }
    }
    assert!(diff.is_empty(), "differ: {diff:?}");
    // Regenerating writes nothing: every file is unchanged.
    let again = generate(&store, 1, tmp.path(), &SiteOptions::default()).unwrap();
    assert_eq!(again.written, 0);
    assert_eq!(again.files, summary.files);
}

/// A site write never holds the database's write lock (red team E14): its
/// read transaction, open while the team pages are written, is deferred
/// (every other transaction of the store takes the lock at its start), so
/// the mail loop's, the intake's and the contest lease's writes, on
/// connections of their own, are never kept waiting by it, however long
/// the pages take. Another connection that waits for nothing (busy timeout
/// 0) takes the write lock again and again while a whole site is written
/// from the database and is never refused; with the site's transaction
/// immediate, as every other, it was refused at once.
#[test]
fn a_site_write_never_holds_the_write_lock() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let f = fixture();
    // A copy of the fixture's database: the other connection writes.
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("k.db");
    Store::open(&f.db)
        .unwrap()
        .conn()
        .execute("VACUUM INTO ?1", [db.to_str().unwrap()])
        .unwrap();
    let store = Store::open(&db).unwrap();
    let done = AtomicBool::new(false);
    let (ready_tx, ready) = std::sync::mpsc::channel();
    let (taken, refused) = std::thread::scope(|s| {
        let other = s.spawn(|| {
            let c = rusqlite::Connection::open(&db).unwrap();
            c.busy_timeout(std::time::Duration::ZERO).unwrap();
            let (mut taken, mut refused) = (0u64, Vec::new());
            ready_tx.send(()).unwrap();
            while !done.load(Ordering::SeqCst) {
                match c.execute_batch("BEGIN IMMEDIATE; COMMIT") {
                    Ok(()) => taken += 1,
                    Err(e) => {
                        let _ = c.execute_batch("ROLLBACK");
                        refused.push(e.to_string());
                    }
                }
            }
            (taken, refused)
        });
        ready.recv().unwrap();
        let out = tempfile::tempdir().unwrap();
        let options = SiteOptions {
            no_game_pages: true,
            ..SiteOptions::default()
        };
        let summary = generate(&store, 1, out.path(), &options).unwrap();
        done.store(true, Ordering::SeqCst);
        assert!(summary.files.len() > 44, "{:?}", summary.files);
        other.join().unwrap()
    });
    assert!(taken > 0);
    assert!(
        refused.is_empty(),
        "the other connection was refused the write lock {} times while the site was written \
         ({taken} taken): {:?}",
        refused.len(),
        refused.first()
    );
}

#[test]
fn the_observer_writes_what_an_event_changed_and_game_pages_once() {
    let f = fixture();
    let store = Store::open(&f.db).unwrap();
    let res = results(&store, 1, vec![]).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let mut obs = SiteObserver::new(tmp.path(), 1);
    obs.event(
        &store,
        &Event::GroupFinished {
            round: 1,
            group: 1,
            outcome: None,
        },
    )
    .unwrap();
    assert!(obs.last_error.is_none(), "{:?}", obs.last_error);
    // The group's own pages, its members' pages and the index ...
    assert!(tmp.path().join("index.html").is_file());
    assert!(tmp.path().join(game_page(1, 1, 1)).is_file());
    let entries = store.entries(1).unwrap();
    let page_of = |name: &str| {
        let e = entries.iter().find(|e| e.name == name).unwrap();
        tmp.path().join(team_page(e.team.0))
    };
    let group_1 = &res.rounds[0].groups[0];
    for m in &group_1.members {
        assert!(page_of(m).is_file(), "{m} plays in group 1: its page");
    }
    // ... and nothing the event did not change.
    let elsewhere: Vec<&String> = res.rounds[0]
        .groups
        .iter()
        .skip(1)
        .flat_map(|g| &g.members)
        .collect();
    assert!(!elsewhere.is_empty(), "the fixture has a second group");
    for m in elsewhere {
        assert!(!page_of(m).exists(), "{m} is not in group 1");
    }
    assert!(!tmp.path().join(game_page(2, 1, 1)).exists());
    assert!(!tmp.path().join("evolution.svg").exists());
    // The rest comes with the whole site; group 1's game pages are not
    // rendered again, but still listed and linked.
    let n_group_1 = group_1
        .games
        .iter()
        .filter(|g| g.status != "cancelled")
        .count();
    let n_all: usize = res
        .rounds
        .iter()
        .flat_map(|r| &r.groups)
        .flat_map(|g| &g.games)
        .filter(|g| g.status != "cancelled")
        .count();
    let second = obs.regenerate(&store).unwrap();
    assert_eq!(second.game_pages_rendered, n_all - n_group_1);
    assert!(second.files.contains(&game_page(1, 1, 1)));
    let third = obs.regenerate(&store).unwrap();
    assert_eq!(third.game_pages_rendered, 0);
    assert_eq!(third.written, 0);
    // Events that do not change results do nothing.
    obs.event(
        &store,
        &Event::GameFinished {
            round: 1,
            done: 1,
            total: 2,
        },
    )
    .unwrap();
    // The results-mail attachment.
    let svg = knobeln::site::evolution_svg(&res).unwrap();
    assert_eq!(svg, read(&tmp.path().join("evolution.svg")));
    // What the observer wrote bit by bit is what one whole write gives,
    // group 1's game pages too (written once, when the group finished:
    // their navigation ends at their own round).
    let whole = tempfile::tempdir().unwrap();
    let summary = generate(&store, 1, whole.path(), &SiteOptions::default()).unwrap();
    let differ: Vec<&String> = summary
        .files
        .iter()
        .filter(|name| read(&whole.path().join(name)) != read(&tmp.path().join(name)))
        .collect();
    assert!(differ.is_empty(), "differ: {differ:?}");
}

/// Every file of a folder but the hidden ones, and its bytes.
fn folder_files(dir: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| !n.starts_with('.'))
        .map(|n| {
            let bytes = std::fs::read(dir.join(&n)).unwrap();
            (n, bytes)
        })
        .collect()
}

/// A contest played as the server plays it (the demo: real strategies,
/// their games stored for replay, two rounds, a disqualification, the
/// Evolution), its site written event by event while playing with a page
/// per game, is the site written whole afterwards from the same database
/// into another folder: every file, game pages, rounds and index, byte for
/// byte.
#[test]
fn a_site_written_while_playing_with_game_pages_is_the_whole_site_byte_for_byte() {
    let tmp = tempfile::tempdir().unwrap();
    let demo = demo_in(
        tmp.path(),
        &["--teams", "44", "--throws", "60", "--game-pages"],
    );
    let whole = tmp.path().join("whole");
    let out = Command::new(BIN)
        .arg("site")
        .arg(&whole)
        .arg("--db")
        .arg(demo.join("knobeln.db"))
        .env_remove("KNOBELN_CONFIG")
        .current_dir(tmp.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "knobeln site failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let live = folder_files(&demo.join("site"));
    let afresh = folder_files(&whole);
    assert_eq!(
        live.keys().collect::<Vec<_>>(),
        afresh.keys().collect::<Vec<_>>(),
        "the same files"
    );
    let differ: Vec<&String> = live
        .iter()
        .filter(|(name, bytes)| afresh.get(*name) != Some(*bytes))
        .map(|(name, _)| name)
        .collect();
    assert!(differ.is_empty(), "differ: {differ:?}");
    // What was compared: game pages of both rounds, the rounds' pages,
    // the index, the Evolution.
    for (prefix, at_least) in [("game-r1-", 100), ("game-r2-", 20), ("round-", 2)] {
        let n = live.keys().filter(|n| n.starts_with(prefix)).count();
        assert!(n >= at_least, "{n} files {prefix}*");
    }
    for name in ["index.html", "evolution.html", "final-crosstable.html"] {
        assert!(live.contains_key(name), "{name}");
    }
}

/// Plays `knobeln demo ARGS` into `TMP/demo` (no organizer's config from
/// the environment), asserts it succeeded, and returns that folder.
fn demo_in(tmp: &Path, args: &[&str]) -> PathBuf {
    let dir = tmp.join("demo");
    let out = Command::new(BIN)
        .arg("demo")
        .args(args)
        .arg("--dir")
        .arg(&dir)
        .env_remove("KNOBELN_CONFIG")
        .current_dir(tmp)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "demo failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    dir
}

/// `knobeln site OUT --db DB --game-page-bytes BYTES`.
fn site_with_budget(db: &Path, out: &Path, game_page_bytes: u64) {
    let out = Command::new(BIN)
        .arg("site")
        .arg(out)
        .arg("--db")
        .arg(db)
        .args(["--game-page-bytes", &game_page_bytes.to_string()])
        .env_remove("KNOBELN_CONFIG")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "knobeln site failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Every relative link of every page of `site` names a file there.
fn assert_every_link_resolves(site: &Path) -> usize {
    let link = Regex::new(r#"(?:href|src)="([^"]*)""#).unwrap();
    let mut n_links = 0;
    for page in html_pages(site) {
        let html = read(&page);
        for cap in link.captures_iter(&html) {
            let file = cap[1].split('#').next().unwrap();
            if file.is_empty() {
                continue;
            }
            assert!(
                site.join(file).is_file(),
                "{}: link to {}, which does not exist",
                page.display(),
                &cap[1]
            );
            n_links += 1;
        }
    }
    n_links
}

/// The differing files of two folders (their names must be the same).
fn differing(a: &Path, b: &Path) -> Vec<String> {
    let (a, b) = (folder_files(a), folder_files(b));
    assert_eq!(
        a.keys().collect::<Vec<_>>(),
        b.keys().collect::<Vec<_>>(),
        "the same files"
    );
    a.iter()
        .filter(|(name, bytes)| b.get(*name) != Some(*bytes))
        .map(|(name, _)| name.clone())
        .collect()
}

/// A site budget small enough to cut every group of the fixture (2 MiB:
/// a group of the first round may keep 448 KiB of pages in 4 KiB blocks,
/// the final 256 KiB).
const SMALL_BUDGET: u64 = 2 << 20;

/// The site budget (`[site] game_page_bytes`) under a small budget: the
/// fixture's seed played one game at a time (the fixture: two at a time)
/// gives the same site byte for byte; so does the observer written group
/// by group with the first round's groups finishing the other way round
/// (which pages are kept depends on the groups' shares and their own
/// pages, never on the order groups finish in); every link resolves (a
/// game cut has no link anywhere); the game pages kept take no more
/// blocks than the budget, each group no more than its share; a group's
/// games from its cut on have no page, and the round's page and the
/// teams' pages say why in words.
#[test]
fn a_small_site_budget_gives_the_same_pages_whatever_the_threads_and_says_why() {
    let f = fixture();
    let tmp = tempfile::tempdir().unwrap();
    let one_db = tmp.path().join("one.db");
    crate::common::tournament_run(&f.strategies, &one_db, 60, 1, 1, &[]);
    let site = tmp.path().join("two-threads");
    let one = tmp.path().join("one-thread");
    site_with_budget(&f.db, &site, SMALL_BUDGET);
    site_with_budget(&one_db, &one, SMALL_BUDGET);
    // The index says when each run started and finished; nothing else
    // differs.
    assert_eq!(differing(&site, &one), ["index.html"]);
    let times = Regex::new(r"\d{4}-\d\d-\d\dT[\d:.]+Z").unwrap();
    let index = |dir: &Path| {
        times
            .replace_all(&read(&dir.join("index.html")), "")
            .into_owned()
    };
    assert_eq!(index(&site), index(&one));
    // Group by group, the first round's second group first.
    let store = Store::open(&f.db).unwrap();
    let observed = tmp.path().join("observed");
    let mut obs = SiteObserver::new(&observed, 1);
    obs.options.title = Some("International KNOBELN contest".into());
    obs.options.game_page_bytes = SMALL_BUDGET;
    let res = results(&store, 1, vec![]).unwrap();
    assert_eq!(res.rounds.len(), 2);
    assert_eq!(res.rounds[0].groups.len(), 2);
    for r in &res.rounds {
        for g in r.groups.iter().rev() {
            let event = Event::GroupFinished {
                round: r.number,
                group: g.number,
                outcome: None,
            };
            obs.event(&store, &event).unwrap();
            assert!(obs.last_error.is_none(), "{:?}", obs.last_error);
        }
        let event = Event::RoundFinished {
            round: r.number,
            advanced: Vec::new(),
            disqualified: Vec::new(),
        };
        obs.event(&store, &event).unwrap();
    }
    obs.event(&store, &Event::EvolutionFinished { generations: 1 })
        .unwrap();
    obs.finish(&store).unwrap();
    assert!(obs.last_error.is_none(), "{:?}", obs.last_error);
    assert_eq!(differing(&site, &observed), Vec::<String>::new());

    assert!(assert_every_link_resolves(&site) > 1000);
    // The pages kept, group by group, against the shares.
    let files = folder_files(&site);
    let blocks = |len: usize| (len as u64).div_ceil(4096) * 4096;
    let mut total = 0;
    let mut cut_teams = BTreeSet::new();
    let cut_words = Regex::new(r"([A-Za-z_0-9]+) from game (\d+) on").unwrap();
    for r in &res.rounds {
        let n_groups = r.groups.len() as u64;
        let share = if r.is_final {
            SMALL_BUDGET / 8
        } else {
            (SMALL_BUDGET - SMALL_BUDGET / 8) >> r.number
        } / n_groups;
        let round = read(&site.join(format!("round-{}.html", r.number)));
        let words = "Some games have no page of their own: the game pages of this contest may \
                     take 2.0 MiB on disk";
        assert!(round.contains(words), "round {}: {words}", r.number);
        // The teams cut, each from the game the round's page names.
        let cut_from: std::collections::BTreeMap<String, u32> = cut_words
            .captures_iter(&round)
            .map(|c| (c[1].to_string(), c[2].parse().unwrap()))
            .collect();
        assert!(!cut_from.is_empty(), "round {}", r.number);
        for g in &r.groups {
            let mut used = 0;
            let mut kept = 0;
            for x in g.games.iter().filter(|x| x.status != "cancelled") {
                let name = game_page(r.number, g.number, x.slot);
                let cut = x
                    .players
                    .iter()
                    .any(|p| cut_from.get(&p.to_string()).is_some_and(|&s| x.slot >= s));
                match files.get(&name) {
                    Some(bytes) => {
                        assert!(!cut, "{name}: a page of a team after its cut");
                        used += blocks(bytes.len());
                        kept += 1;
                    }
                    None => {
                        assert!(cut, "{name}: no page, and neither team cut before it");
                        cut_teams.extend(x.players.iter().map(|p| p.to_string()));
                    }
                }
            }
            assert!(
                used <= share,
                "round {} group {}: {used} > {share}",
                r.number,
                g.number
            );
            assert!(
                kept > 10,
                "round {} group {}: {kept} pages",
                r.number,
                g.number
            );
            total += used;
        }
    }
    assert!(total <= SMALL_BUDGET);
    // Every team with a game cut says so on its page; one without does not.
    let entries = store.entries(1).unwrap();
    assert!(cut_teams.len() > 20);
    for e in &entries {
        let page = read(&site.join(team_page(e.team.0)));
        let says = page.contains("Games without a link have no page of their own");
        assert_eq!(says, cut_teams.contains(&e.name), "{}", e.name);
    }
}

/// Red team F10: one team whose throws span 1..12288 makes game pages of
/// about twice the usual blocks; charged to the group in slot order, its
/// pages took the share others' pages would have had (at 12 MiB, 74
/// pages of games between the other teams kept against 79 when it threw
/// plainly; 3 to 10 fewer at each budget tried). Each page is now charged
/// to its two teams, each by its own series of the plot and half the
/// rest, within each team's share of its group's: the same 17 teams,
/// once with the spreader and once with a team of that name that throws
/// plainly, under four budgets: the spreader's pages are cut first (it
/// keeps fewer than its plain twin), the games between the other teams
/// keep as many pages within one (the one: the spreader's opponents' part
/// of its pages' blocks, and who is cut after them), the group's pages
/// stay within its share, and a team's games have no page only after the
/// game from which the round's page says its share was full.
#[test]
fn a_team_with_large_game_pages_uses_its_own_share_not_the_others() {
    let tmp = tempfile::tempdir().unwrap();
    let cooperator = std::fs::read_to_string(repo("tests/data/tournament/cooperator.c")).unwrap();
    let climber = std::fs::read(repo("tests/data/tournament/climber.c")).unwrap();
    let (head, _) = cooperator.split_once("#endif").unwrap();
    let spreader = format!(
        "{}#endif\nmain() {{ int v[8]; int i; v[0] = 1; v[1] = 5; v[2] = 23; v[3] = 97; \
         v[4] = 401; v[5] = 1733; v[6] = 5987; v[7] = 12288; \
         for (i = 0;; i++) make_throw(v[i % 8]); }}\n",
        head.replace(
            "Cooperator: always throws 100, which pairs well with itself.",
            "Spreader: throws from 1 to 12288 in rising series of eight.",
        )
    );
    let play = |name: &str, the_spreader: &str| {
        let dir = tmp.path().join(name);
        std::fs::create_dir_all(&dir).unwrap();
        for i in 1..=8 {
            std::fs::write(dir.join(format!("cooperator_{i}.c")), &cooperator).unwrap();
            std::fs::write(dir.join(format!("climber_{i}.c")), &climber).unwrap();
        }
        std::fs::write(dir.join("spreader.c"), the_spreader).unwrap();
        let db = tmp.path().join(format!("{name}.db"));
        crate::common::tournament_run(&dir, &db, 1000, 1, 1, &[]);
        db
    };
    let spread_db = play("spread", &spreader);
    let plain_db = play("plain", &cooperator);
    let blocks = |len: usize| (len as u64).div_ceil(4096) * 4096;
    let cut_words = Regex::new(r"([A-Za-z_0-9]+) from game (\d+) on").unwrap();
    // (pages of games without the spreader, the spreader's pages)
    let kept = |db: &Path, budget: u64| {
        let site = tmp.path().join(format!("site-{budget}"));
        let _ = std::fs::remove_dir_all(&site);
        site_with_budget(db, &site, budget);
        let store = Store::open(db).unwrap();
        let res = results(&store, 1, vec![]).unwrap();
        assert_eq!(res.rounds.len(), 1, "one group of 17");
        let (r, g) = (&res.rounds[0], &res.rounds[0].groups[0]);
        assert_eq!(g.members.len(), 17);
        let round = read(&site.join(format!("round-{}.html", r.number)));
        let cut_from: std::collections::BTreeMap<String, u32> = cut_words
            .captures_iter(&round)
            .map(|c| (c[1].to_string(), c[2].parse().unwrap()))
            .collect();
        let (mut others, mut spreaders, mut used) = (0, 0, 0);
        for x in g.games.iter().filter(|x| x.status != "cancelled") {
            let page = site.join(game_page(r.number, g.number, x.slot));
            let names = x.players.iter().map(|p| p.to_string()).collect::<Vec<_>>();
            let cut = names
                .iter()
                .any(|p| cut_from.get(p).is_some_and(|&s| x.slot >= s));
            assert_eq!(page.is_file(), !cut, "{}", page.display());
            if let Ok(bytes) = std::fs::read(&page) {
                used += blocks(bytes.len());
                if names.iter().any(|p| p == "spreader") {
                    spreaders += 1;
                } else {
                    others += 1;
                }
            }
        }
        assert!(used <= budget / 8, "the group's pages within its share");
        (others, spreaders)
    };
    for mib in [8, 10, 12, 16] {
        let budget = mib << 20;
        let (others_spread, spreader) = kept(&spread_db, budget);
        let (others_plain, twin) = kept(&plain_db, budget);
        eprintln!(
            "{mib} MiB: others {others_spread} (plain {others_plain}), the spreader {spreader} \
             (plain {twin})"
        );
        assert!(spreader < twin, "{mib} MiB: {spreader} against {twin}");
        assert!(
            others_spread + 1 >= others_plain,
            "{mib} MiB: the others kept {others_spread} pages, {others_plain} beside a plain team"
        );
    }
}

/// A contest played as the server plays it (the demo), its site written
/// while playing under a small budget, is the site a whole write with
/// that budget gives afterwards, byte for byte: the cuts the groups' writes
/// made are the whole write's.
#[test]
fn a_budgeted_site_written_while_playing_is_the_whole_site_byte_for_byte() {
    let tmp = tempfile::tempdir().unwrap();
    let budget = SMALL_BUDGET.to_string();
    let demo = demo_in(
        tmp.path(),
        &[
            "--teams",
            "44",
            "--throws",
            "60",
            "--game-pages",
            "--game-page-bytes",
            &budget,
        ],
    );
    let whole = tmp.path().join("whole");
    site_with_budget(&demo.join("knobeln.db"), &whole, SMALL_BUDGET);
    let live = demo.join("site");
    assert_eq!(differing(&live, &whole), Vec::<String>::new());
    let n_games = folder_files(&live)
        .keys()
        .filter(|n| n.starts_with("game-"))
        .count();
    assert!((100..400).contains(&n_games), "{n_games} game pages");
    assert_every_link_resolves(&live);
}

/// A game page cut short (left by a crash of an older version that wrote
/// pages in place, or by a power loss before the page reached the disk)
/// is written again whole: by the group's write of a server that resumes
/// the contest, and by a whole write (`knobeln site`, the contest's end),
/// which give the page a whole site gives; the pages whole already are
/// not written again.
#[test]
fn a_game_page_cut_short_is_written_again_whole() {
    let f = fixture();
    let store = Store::open(&f.db).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let first = generate(&store, 1, tmp.path(), &SiteOptions::default()).unwrap();
    let cut = |name: &str, len: usize| {
        let path = tmp.path().join(name);
        let whole = std::fs::read(&path).unwrap();
        assert!(whole.len() > len);
        std::fs::write(&path, &whole[..len]).unwrap();
        whole
    };
    // The resumed server's first event: group 1's pages, its own game
    // pages among them, compared with what is there.
    let whole = cut(&game_page(1, 1, 1), 100);
    let mut obs = SiteObserver::new(tmp.path(), 1);
    obs.event(
        &store,
        &Event::GroupFinished {
            round: 1,
            group: 1,
            outcome: None,
        },
    )
    .unwrap();
    assert!(obs.last_error.is_none(), "{:?}", obs.last_error);
    assert_eq!(
        std::fs::read(tmp.path().join(game_page(1, 1, 1))).unwrap(),
        whole
    );
    // A whole write: another group's page, empty and cut short.
    let whole_empty = cut(&game_page(1, 2, 1), 0);
    let whole_cut = cut(&game_page(2, 1, 1), 4096);
    let again = generate(&store, 1, tmp.path(), &SiteOptions::default()).unwrap();
    assert_eq!(again.files, first.files);
    let read_back = |name: &str| std::fs::read(tmp.path().join(name)).unwrap();
    assert_eq!(read_back(&game_page(1, 2, 1)), whole_empty);
    assert_eq!(read_back(&game_page(2, 1, 1)), whole_cut);
    // Every page is what a whole write into an empty folder gives.
    let fresh = tempfile::tempdir().unwrap();
    generate(&store, 1, fresh.path(), &SiteOptions::default()).unwrap();
    let differ: Vec<&String> = again
        .files
        .iter()
        .filter(|name| std::fs::read(fresh.path().join(name)).unwrap() != read_back(name))
        .collect();
    assert!(differ.is_empty(), "differ: {differ:?}");
    assert!(again.written >= 2);
    assert_eq!(
        generate(&store, 1, tmp.path(), &SiteOptions::default())
            .unwrap()
            .written,
        0
    );
}

// ---- snapshots of the HTML structure ----

/// The structure of a page: its block elements with ids and classes, the
/// text of its headings, tables and lists as row counts, plots as `svg`.
fn structure(html: &str) -> String {
    let tag = Regex::new(r#"<(/?)([a-zA-Z][a-zA-Z0-9]*)([^>]*)>"#).unwrap();
    let id_re = Regex::new(r#"\bid="([^"]*)""#).unwrap();
    let class_re = Regex::new(r#"\bclass="([^"]*)""#).unwrap();
    let strip = Regex::new(r"<[^>]*>").unwrap();
    let attr = |re: &Regex, attrs: &str| re.captures(attrs).map(|c| c[1].to_string());
    const BLOCKS: &[&str] = &[
        "html",
        "head",
        "title",
        "body",
        "header",
        "nav",
        "main",
        "footer",
        "section",
        "h1",
        "h2",
        "h3",
        "table",
        "thead",
        "tbody",
        "ul",
        "ol",
        "figure",
        "figcaption",
        "svg",
        "pre",
        "div",
        "p",
        "link",
        "meta",
    ];
    let mut out = Vec::new();
    let mut depth = 0usize;
    // Inside a plot, a table body or a list: only rows or entries are counted.
    let mut inside: Option<&'static str> = None;
    let mut counted = 0usize;
    let mut last = 0;
    for c in tag.captures_iter(html) {
        let m = c.get(0).unwrap();
        let closing = &c[1] == "/";
        let name = c[2].to_ascii_lowercase();
        let attrs = &c[3];
        if let Some(inner) = inside {
            if closing && name == inner {
                inside = None;
                if inner != "svg" {
                    let what = if inner == "tbody" { "rows" } else { "entries" };
                    out.push(format!("{}({counted} {what})", "  ".repeat(depth)));
                }
                depth = depth.saturating_sub(1);
            } else if !closing
                && ((inner == "tbody" && name == "tr") || (inner != "tbody" && name == "li"))
            {
                counted += 1;
            }
            last = m.end();
            continue;
        }
        if !BLOCKS.contains(&name.as_str()) {
            last = m.end();
            continue;
        }
        if closing {
            if matches!(name.as_str(), "h1" | "h2" | "h3" | "title") {
                let text = strip.replace_all(&html[last..m.start()], "");
                if let Some(l) = out.last_mut() {
                    l.push_str(&format!(" \"{}\"", text.trim()));
                }
            }
            depth = depth.saturating_sub(1);
            last = m.end();
            continue;
        }
        let mut line = format!("{}{name}", "  ".repeat(depth));
        if let Some(id) = attr(&id_re, attrs) {
            line.push_str(&format!("#{id}"));
        }
        if let Some(class) = attr(&class_re, attrs) {
            line.push_str(&format!(".{}", class.replace(' ', ".")));
        }
        out.push(line);
        match name.as_str() {
            "link" | "meta" => {}
            "svg" | "tbody" | "ul" | "ol" => {
                inside = Some(match name.as_str() {
                    "svg" => "svg",
                    "tbody" => "tbody",
                    "ul" => "ul",
                    _ => "ol",
                });
                counted = 0;
                depth += 1;
            }
            _ => depth += 1,
        }
        last = m.end();
    }
    out.join("\n") + "\n"
}

fn check_snapshot(name: &str, actual: &str) {
    let path = repo("tests/data/snapshots/site").join(format!("{name}.txt"));
    if std::env::var_os("KNOBELN_UPDATE_SNAPSHOTS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|_| {
        panic!(
            "no snapshot {}; run with KNOBELN_UPDATE_SNAPSHOTS=1 to write it",
            path.display()
        )
    });
    assert_eq!(
        actual, expected,
        "structure of {name} changed; if intended, run with KNOBELN_UPDATE_SNAPSHOTS=1"
    );
}

#[test]
fn the_structure_of_each_page_type_matches_its_snapshot() {
    let f = fixture();
    let store = Store::open(&f.db).unwrap();
    let res = results(&store, 1, vec![]).unwrap();
    // A team with failures and a disqualification: the first crasher.
    let entries = store.entries(1).unwrap();
    let crasher = entries.iter().find(|e| e.name == "crasher_1").unwrap();
    let winner = entries
        .iter()
        .find(|e| e.name == res.winners[0].team)
        .unwrap();
    let failed_game = res.rounds[0].groups[0]
        .games
        .iter()
        .find(|g| !g.failures.is_empty() && g.status != "cancelled");
    let mut pages = vec![
        ("index", "index.html".to_string()),
        ("round-preliminary", "round-1.html".to_string()),
        ("round-final", "round-2.html".to_string()),
        ("final-crosstable", "final-crosstable.html".to_string()),
        ("evolution", "evolution.html".to_string()),
        ("team-disqualified", team_page(crasher.team.0)),
        ("team-winner", team_page(winner.team.0)),
        ("game", game_page(2, 1, 1)),
    ];
    if let Some(g) = failed_game {
        pages.push(("game-with-failure", game_page(1, 1, g.slot)));
    }
    for (kind, file) in pages {
        check_snapshot(kind, &structure(&read(&f.site.join(file))));
    }
}

// ---- the browser ----

fn chromium() -> &'static str {
    if !Path::new(CHROMIUM).exists() {
        let st = Command::new("bash")
            .arg(repo("tests/site-browser.sh"))
            .status()
            .expect("running tests/site-browser.sh");
        assert!(
            st.success() && Path::new(CHROMIUM).exists(),
            "chromium is needed for the results-site browser test and could not be \
             installed: run `bash tests/site-browser.sh` as root (apt-get install chromium)"
        );
    }
    CHROMIUM
}

/// Runs headless chromium with a fresh profile; returns stdout.
fn run_chromium(args: &[&str]) -> String {
    let profile = tempfile::tempdir().unwrap();
    let out = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {CHROMIUM}: {e}"));
    assert!(
        out.status.success(),
        "chromium failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn file_url(p: &Path) -> String {
    format!("file://{}", p.canonicalize().unwrap().display())
}

/// Loads `page` in an iframe of a test-only harness page (the site's own
/// pages have no scripts) whose script `js` pushes lines to `out` from the
/// page's document `d`; returns those lines.
fn harness(page: &Path, harness_dir: &Path, kind: &str, js: &str) -> Vec<String> {
    harness_at(page, "", "", harness_dir, kind, js)
}

/// [`harness`] with the page opened at `fragment` (`#move=17`, or empty)
/// in an iframe with the attributes `attrs` (`sandbox="allow-same-origin"`:
/// the page runs no script).
fn harness_at(
    page: &Path,
    fragment: &str,
    attrs: &str,
    harness_dir: &Path,
    kind: &str,
    js: &str,
) -> Vec<String> {
    let harness = harness_dir.join(format!(
        "harness-{kind}{}",
        page.file_name().unwrap().to_string_lossy()
    ));
    std::fs::write(
        &harness,
        format!(
            r#"<!doctype html><html><body><pre id="out">pending</pre>
<iframe id="f" src="{}{fragment}" {attrs} width="1200" height="1600"></iframe>
<script>
document.getElementById('f').onload = function () {{
  var out = [];
  try {{
    var d = this.contentDocument;
{js}
  }} catch (e) {{ out.push('error ' + e); }}
  document.getElementById('out').textContent = out.join('\n') + '\ndone';
}};
</script></body></html>"#,
            file_url(page)
        ),
    )
    .unwrap();
    let dom = run_chromium(&[
        "--allow-file-access-from-files",
        "--virtual-time-budget=5000",
        "--dump-dom",
        &file_url(&harness),
    ]);
    let start = dom.find("<pre id=\"out\">").expect("harness output") + 14;
    let end = dom[start..].find("</pre>").unwrap() + start;
    let text = dom[start..end]
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    let lines: Vec<String> = text.lines().map(str::to_string).collect();
    assert_eq!(
        lines.last().map(String::as_str),
        Some("done"),
        "{}: the harness did not finish: {lines:?}",
        page.display()
    );
    assert!(
        !lines.iter().any(|l| l.starts_with("error")),
        "{}: {lines:?}",
        page.display()
    );
    lines
}

/// The page's plots (size and drawn elements) and style sheets.
fn measure(page: &Path, harness_dir: &Path) -> Vec<String> {
    harness(
        page,
        harness_dir,
        "",
        r#"    out.push('title ' + d.title.length);
    var svgs = d.querySelectorAll('svg');
    for (var i = 0; i < svgs.length; i++) {
      var r = svgs[i].getBoundingClientRect();
      out.push('svg ' + r.width.toFixed(0) + ' ' + r.height.toFixed(0) + ' ' +
        svgs[i].querySelectorAll('polygon,polyline,rect,circle,path,line').length);
    }
    for (var k = 0; k < d.styleSheets.length; k++)
      out.push('css ' + d.styleSheets[k].cssRules.length);"#,
    )
}

#[test]
fn chromium_renders_the_pages_and_their_plots() {
    let f = fixture();
    let shots = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .unwrap()
        .join("site-screenshots");
    std::fs::create_dir_all(&shots).unwrap();
    for (page, shot) in [
        ("index.html", "ranking.png"),
        ("evolution.html", "evolution.png"),
    ] {
        let png = shots.join(shot);
        let _ = std::fs::remove_file(&png);
        run_chromium(&[
            &format!("--screenshot={}", png.display()),
            "--window-size=1200,1600",
            &file_url(&f.site.join(page)),
        ]);
        let bytes =
            std::fs::read(&png).unwrap_or_else(|e| panic!("no screenshot {}: {e}", png.display()));
        assert!(bytes.starts_with(b"\x89PNG"), "{shot} is not a PNG");
        assert!(
            bytes.len() > 20_000,
            "{shot} is tiny: {} bytes",
            bytes.len()
        );
    }

    let harness = tempfile::tempdir().unwrap();
    let store = Store::open(&f.db).unwrap();
    let res = results(&store, 1, vec![]).unwrap();
    let winner = store
        .entries(1)
        .unwrap()
        .into_iter()
        .find(|e| e.name == res.winners[0].team)
        .unwrap();
    for (page, plots) in [
        ("index.html", 0),
        ("round-1.html", 0),
        ("evolution.html", 1),
        ("final-crosstable.html", 1),
        (team_page(winner.team.0).as_str(), 0),
        (game_page(2, 1, 1).as_str(), 1),
    ] {
        let lines = measure(&f.site.join(page), harness.path());
        let svgs: Vec<Vec<u64>> = lines
            .iter()
            .filter_map(|l| l.strip_prefix("svg "))
            .map(|l| l.split(' ').map(|n| n.parse().unwrap()).collect())
            .collect();
        assert_eq!(svgs.len(), plots, "{page}: {lines:?}");
        for s in &svgs {
            assert!(
                s[0] >= 300 && s[1] >= 200 && s[2] >= 10,
                "{page}: a plot renders as {s:?}"
            );
        }
        assert!(
            lines.iter().any(|l| l.starts_with("css ") && l != "css 0"),
            "{page}: the style sheet did not load: {lines:?}"
        );
        assert!(lines
            .iter()
            .any(|l| l != "title 0" && l.starts_with("title")));
    }
}

// ---- the bot disciplines' game pages (issue 26) ----

/// Loads a game page in the test harness and returns the final picture's
/// size, its number of drawn elements and its caption.
fn measure_final(page: &Path, harness_dir: &Path) -> (f64, f64, usize, String) {
    let lines = harness(
        page,
        harness_dir,
        "final-",
        r#"    var s = d.getElementById('final');
    var r = s.getBoundingClientRect();
    out.push('final ' + r.width.toFixed(0) + ' ' + r.height.toFixed(0) + ' ' +
      s.querySelectorAll('polygon,polyline,rect,circle,path,line,text').length);
    var fig = s.closest('figure');
    var cap = fig ? fig.querySelector('figcaption') : null;
    out.push('caption ' + (cap ? cap.textContent.replace(/\s+/g, ' ') : ''));"#,
    );
    let f: Vec<&str> = lines[0].split_whitespace().collect();
    assert_eq!(f[0], "final", "{}: {lines:?}", page.display());
    let caption = lines[1].trim_start_matches("caption ").to_string();
    (
        f[1].parse().unwrap(),
        f[2].parse().unwrap(),
        f[3].parse().unwrap(),
        caption,
    )
}

/// The "Outcome" row of a game page, as the server wrote it from the
/// stored record (not from the picture's code).
fn outcome_row(html: &str) -> String {
    let head = "<th class=\"l\">Outcome</th><td class=\"l\">";
    let start = html.find(head).unwrap() + head.len();
    let end = html[start..].find("</td>").unwrap() + start;
    html[start..end].to_string()
}

/// The whole numbers in `s` (`1,247,500` is one number: thousands are
/// separated by commas in the pictures' captions; a field `5,5` is two).
fn numbers(s: &str) -> Vec<u64> {
    Regex::new(r"\d{1,3}(,\d{3})+|\d+")
        .unwrap()
        .find_iter(s)
        .filter_map(|m| m.as_str().replace(',', "").parse().ok())
        .collect()
}

#[test]
fn chromium_draws_the_last_state_of_a_game_of_every_bot_discipline() {
    let shots = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .unwrap()
        .join("site-screenshots");
    std::fs::create_dir_all(&shots).unwrap();
    let is_on = Regex::new(r" is on (\d+,\d+)").unwrap();
    for d in ["ultimatum", "flooding", "footsteps", "morabaraba"] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = demo_in(tmp.path(), &["--discipline", d, "--games", "1"]);
        let games = dir.join("site/game");
        let mut pages: Vec<PathBuf> = std::fs::read_dir(&games)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "html"))
            .collect();
        pages.sort();
        assert!(!pages.is_empty(), "{d}: no game pages");
        let page = &pages[pages.len() / 2];
        let html = std::fs::read_to_string(page).unwrap();
        // Its only scripts are the replay's data and code (issue 36).
        assert_eq!(
            html.matches("<script").count(),
            2,
            "{d}: a game page runs the replay's script only"
        );
        let (w, h, n, caption) = measure_final(page, tmp.path());
        assert!(
            w >= 100.0 && h >= 50.0 && n >= 5,
            "{d}: final picture {w}x{h}, {n} elements"
        );
        // The picture's last state is the game's outcome as stored.
        let outcome = outcome_row(&html);
        let (o, c) = (numbers(&outcome), numbers(&caption));
        match d {
            // "A: P points (..), .. B: Q points" / "Points earned: A P, B Q."
            "ultimatum" => assert!(
                c.contains(&o[0]) && c.contains(&o[3]),
                "{d}: {outcome} / {caption}"
            ),
            // "survived R rounds (..), flood level L, at X,Y" / "After round R: .. is on X,Y"
            "flooding" => assert!(
                c[0] == o[0] && {
                    let at = &is_on.captures(&caption).expect("where the bot is")[1];
                    outcome.ends_with(&format!("at {at}"))
                },
                "{d}: {outcome} / {caption}"
            ),
            // ".. after T turns; token on field F, points left A / B"
            "footsteps" => {
                let n = o.len();
                assert!(
                    c[0] == o[n - 4]
                        && c[1] == o[n - 3]
                        && c.contains(&o[n - 2])
                        && c.contains(&o[n - 1]),
                    "{d}: {outcome} / {caption}"
                )
            }
            // ".. after T turns (..); cows left A / B" / "After T moves: .. has A cows .. B cows"
            _ => {
                let n = o.len();
                assert!(
                    c[0] == o[0] && c.contains(&o[n - 2]) && c.contains(&o[n - 1]),
                    "{d}: {outcome} / {caption}"
                )
            }
        }
        // Its transcript is there to download: in the full form, or for a
        // long game (a 2500-round ultimatum match) in the moves form.
        match std::fs::read_to_string(page.with_extension("txt")) {
            Ok(txt) => assert!(txt.starts_with(&format!("# knobeln transcript 2: {d}\n"))),
            Err(_) => {
                let txt = std::fs::read_to_string(page.with_extension("moves.txt")).unwrap();
                assert!(txt.starts_with(&format!("# knobeln moves 2: {d}\n")));
                assert!(
                    html.contains("--expand"),
                    "{d}: the page says how to expand it"
                );
            }
        }
        run_chromium(&[
            "--window-size=1200,1600",
            &format!(
                "--screenshot={}",
                shots.join(format!("game-{d}.png")).display()
            ),
            &file_url(page),
        ]);
        assert!(
            shots
                .join(format!("game-{d}.png"))
                .metadata()
                .unwrap()
                .len()
                > 10_000
        );
    }
}

// ---- the replay of a bot game page (issue 36) ----

/// The K-th line (from 1) a bot printed in a transcript (the full form,
/// or the moves form of a long game, format 2), with its player (from 1),
/// and the move, round or turn it belongs to as the rules count them:
/// Morabaraba's moves after the two names, FootSteps' turns of two bids,
/// the ultimatum game's rounds of two offers and two answers, the flooding
/// referee's `ROUND z`.
fn printed(txt: &str, d: &str, k: usize) -> (usize, String, u64) {
    let (mut count, mut round) = (0, 0);
    let moves = Regex::new(r"^(\d+): (.*)$").unwrap();
    for l in txt.lines() {
        if let Some(r) = l.strip_prefix("to 1: ROUND ") {
            round = r.split_whitespace().next().unwrap().parse().unwrap();
        }
        let (seat, line) = match l.strip_prefix("from ") {
            Some(rest) => rest.split_once(": ").unwrap(),
            None => match moves.captures(l) {
                Some(c) => (c.get(1).unwrap().as_str(), c.get(2).unwrap().as_str()),
                None => continue,
            },
        };
        count += 1;
        if count == k {
            let number = match d {
                "morabaraba" => (k as u64).saturating_sub(2),
                "footsteps" => (k as u64).div_ceil(2),
                "ultimatum" => (k as u64).div_ceil(4),
                _ => round,
            };
            return (seat.parse().unwrap(), line.to_string(), number);
        }
    }
    panic!("{d}: the transcript has only {count} lines from bots, not {k}");
}

/// A game page's transcript: the full form, or a long game's moves form.
fn transcript_of(page: &Path) -> String {
    std::fs::read_to_string(page.with_extension("txt"))
        .or_else(|_| std::fs::read_to_string(page.with_extension("moves.txt")))
        .unwrap()
}

/// What the replay shows: the step, the line, the frame and the heading.
const REPLAY_STATE: &str = r#"function state(tag) {
      out.push(tag + ' step=' + d.getElementById('replay-line').getAttribute('data-step') +
        ' frame=' + d.getElementById('replay-frame').getAttribute('data-frame') +
        ' copy=' + ((d.querySelector('#replay-frame svg') || {getAttribute: function () { return ''; }}).getAttribute('data-id')) +
        ' hidden=' + d.getElementById('replay').hidden);
      out.push(tag + ' line=' + d.getElementById('replay-line').textContent);
      out.push(tag + ' who=' + d.getElementById('replay-who').textContent);
    }
    function key(k) {
      d.dispatchEvent(new d.defaultView.KeyboardEvent('keydown', {key: k, bubbles: true}));
    }"#;

#[test]
fn chromium_steps_through_the_replay_of_a_game_as_its_transcript_says() {
    let step_id = Regex::new(r#"<svg id="step-(\d+)""#).unwrap();
    for d in ["morabaraba", "footsteps", "flooding", "ultimatum"] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = demo_in(tmp.path(), &["--discipline", d, "--games", "1"]);
        let games = dir.join("site/game");
        let mut pages: Vec<PathBuf> = std::fs::read_dir(&games)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "html"))
            .collect();
        pages.sort();
        // The longest game: its strip is the most likely to be thinned.
        let page = pages
            .iter()
            .max_by_key(|p| transcript_of(p).len())
            .expect("a game page");
        let html = std::fs::read_to_string(page).unwrap();
        let txt = transcript_of(page);
        let n_lines = txt
            .lines()
            .filter(|l| l.starts_with("from ") || l.starts_with(|c: char| c.is_ascii_digit()))
            .count();
        let frames: Vec<u64> = step_id
            .captures_iter(&html)
            .map(|c| c[1].parse().unwrap())
            .collect();
        // The ultimatum game's picture is a chart, without frames.
        assert!(
            n_lines > 6 && (frames.is_empty() == (d == "ultimatum")),
            "{d}: {n_lines} lines"
        );
        let k = (n_lines * 2 / 3).max(3);
        // The frame for a step: its own, or the nearest earlier one shown.
        let frame_of = |n: u64| frames.iter().copied().filter(|&f| f <= n).max();
        let lines = harness_at(
            page,
            &format!("#move={k}"),
            "",
            tmp.path(),
            "replay-",
            &format!(
                "    {REPLAY_STATE}
    state('start');
    key('ArrowRight'); key('ArrowRight'); state('right2');
    key('ArrowLeft'); state('left1');
    key('End'); state('end');
    key('Home'); state('home');
    d.getElementById('replay-next').click(); d.getElementById('replay-next').click();
    d.getElementById('replay-back').click(); state('buttons');
    var sl = d.getElementById('replay-slider');
    sl.value = '{k}'; sl.dispatchEvent(new d.defaultView.Event('input')); state('slider');
    d.getElementById('replay-last').click(); state('last');"
            ),
        );
        // `TAG step=.. frame=.. copy=.. hidden=..`: one of them.
        let get = |tag: &str, what: &str| -> String {
            let p = format!("{what}=");
            lines
                .iter()
                .filter_map(|l| l.strip_prefix(&format!("{tag} ")))
                .flat_map(|l| l.split(' '))
                .find_map(|w| w.strip_prefix(&p))
                .unwrap_or_else(|| panic!("{d}: no {tag} {p} in {lines:?}"))
                .to_string()
        };
        let whole = |tag: &str, what: &str| -> String {
            let p = format!("{tag} {what}=");
            lines
                .iter()
                .find_map(|l| l.strip_prefix(&p))
                .unwrap()
                .to_string()
        };
        for (tag, step) in [
            ("start", k),
            ("right2", k + 2),
            ("left1", k + 1),
            ("end", n_lines),
            ("home", 1),
            ("buttons", 2),
            ("slider", k),
            ("last", n_lines),
        ] {
            let (seat, line, number) = printed(&txt, d, step);
            assert_eq!(get(tag, "step"), step.to_string(), "{d} {tag}: {lines:?}");
            assert_eq!(get(tag, "hidden"), "false", "{d}: the panel shows");
            assert_eq!(whole(tag, "line"), line, "{d} {tag}: the line printed");
            let who = whole(tag, "who");
            let player = if d == "flooding" {
                "the bot".to_string()
            } else {
                format!("player {seat}")
            };
            assert!(who.contains(&player), "{d} {tag}: {who}");
            if number > 0 {
                assert!(who.contains(&number.to_string()), "{d} {tag}: {who}");
            }
            let want = frame_of(number).map(|f| f.to_string()).unwrap_or_default();
            assert_eq!(get(tag, "frame"), want, "{d} {tag}: the frame of {number}");
            let copy = if want.is_empty() {
                String::new()
            } else {
                format!("step-{want}")
            };
            assert_eq!(get(tag, "copy"), copy, "{d} {tag}: the picture shown");
        }

        // Without JavaScript the page is the static page: the panel stays
        // hidden and every frame of the strip is there and drawn.
        let lines = harness_at(
            page,
            &format!("#move={k}"),
            r#"sandbox="allow-same-origin""#,
            tmp.path(),
            "nojs-",
            r#"    var p = d.getElementById('replay');
    out.push('hidden ' + p.hidden + ' ' + p.getBoundingClientRect().height);
    out.push('copies ' + d.querySelectorAll('#replay-frame svg').length);
    var s = d.querySelectorAll('svg[id^="step-"]');
    for (var i = 0; i < s.length; i++) {
      var r = s[i].getBoundingClientRect();
      out.push('frame ' + s[i].id.slice(5) + ' ' + (r.width > 20 && r.height > 20));
    }"#,
        );
        assert_eq!(lines[0], "hidden true 0", "{d}: {lines:?}");
        assert_eq!(lines[1], "copies 0", "{d}: {lines:?}");
        let drawn: Vec<u64> = lines
            .iter()
            .filter_map(|l| l.strip_prefix("frame "))
            .map(|l| {
                assert!(l.ends_with(" true"), "{d}: a frame not drawn: {l}");
                l.split(' ').next().unwrap().parse().unwrap()
            })
            .collect();
        assert_eq!(drawn, frames, "{d}: the strip without JavaScript");
    }
}

// ---- the bots' sources after the contest (issue 36) ----

/// Writes the site of the contest in `db` with `[site] publish_sources =
/// publish` into `out`; returns each bot page's text and the source files.
fn bot_site(db: &Path, out: &Path, publish: bool) -> (Vec<String>, Vec<PathBuf>) {
    let cfg = out.with_extension("toml");
    std::fs::write(
        &cfg,
        format!("[contest]\ndiscipline = \"morabaraba\"\n[site]\npublish_sources = {publish}\n"),
    )
    .unwrap();
    let o = Command::new(BIN)
        .arg("site")
        .arg(out)
        .arg("--db")
        .arg(db)
        .arg("--config")
        .arg(&cfg)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut pages = Vec::new();
    let mut files = Vec::new();
    for e in std::fs::read_dir(out.join("bot")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|e| e == "html") {
            pages.push(std::fs::read_to_string(&p).unwrap());
        } else {
            files.push(p);
        }
    }
    files.sort();
    (pages, files)
}

#[test]
fn bot_pages_show_the_sources_only_when_allowed_and_the_contest_is_over() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = demo_in(tmp.path(), &["--discipline", "morabaraba", "--games", "1"]);
    let db = dir.join("knobeln.db");
    let out = tmp.path().join("site");
    // A hostile source, and a <<FROM>> line whose secret must not show.
    let store = Store::open(&db).unwrap();
    let (hostile_id, team): (i64, i64) = store
        .conn()
        .query_row(
            "SELECT v.id, v.team_id FROM strategy_versions v \
             JOIN bot_programs b ON b.version_id = v.id ORDER BY v.id LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    let hostile =
        "/* <<FROM>> team1 Sup3rSecretAuth */\n</pre><script>alert(1)</script>\nint main(){}\n";
    store
        .conn()
        .execute(
            "UPDATE strategy_versions SET source = ?1 WHERE id = ?2",
            rusqlite::params![hostile.as_bytes(), hostile_id],
        )
        .unwrap();

    // The default: no sources.
    let (pages, files) = bot_site(&db, &out, false);
    assert!(!pages.is_empty());
    assert!(pages.iter().all(|p| !p.contains("id=\"sources\"")));
    assert!(files.is_empty(), "{files:?}");

    // Allowed, the contest over: every version's source, escaped.
    let (pages, files) = bot_site(&db, &out, true);
    let n_versions: i64 = store
        .conn()
        .query_row(
            "SELECT COUNT(*) FROM strategy_versions v JOIN bot_programs b ON b.version_id = v.id",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(files.len() as i64, n_versions, "{files:?}");
    assert!(pages.iter().all(|p| p.contains("<section id=\"sources\">")));
    let mine = std::fs::read_to_string(out.join(format!("bot/{team}.html"))).unwrap();
    assert!(
        mine.contains("&lt;/pre&gt;&lt;script&gt;alert(1)&lt;/script&gt;"),
        "{mine}"
    );
    assert!(!mine.contains("<script") && !mine.contains("Sup3rSecretAuth"));
    // Each team's versions by its own numbers (the demo's teams have one).
    let file = std::fs::read_to_string(out.join(format!("bot/{team}-source-1.txt"))).unwrap();
    assert!(file.contains("</pre><script>") && !file.contains("Sup3rSecretAuth"));
    assert!(mine.contains(&format!("href=\"{team}-source-1.txt\"")));
    assert!(mine.contains("Version 1 ("), "{mine}");
    // Another bot's page shows its own, as stored.
    let (other_team, other_src): (i64, Vec<u8>) = store
        .conn()
        .query_row(
            "SELECT team_id, source FROM strategy_versions WHERE id != ?1 ORDER BY id LIMIT 1",
            [hostile_id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(
        std::fs::read(out.join(format!("bot/{other_team}-source-1.txt"))).unwrap(),
        other_src
    );

    // A running contest never shows them, and the files go.
    store
        .conn()
        .execute("UPDATE bot_contests SET state = 'running'", [])
        .unwrap();
    let (pages, files) = bot_site(&db, &out, true);
    assert!(pages.iter().all(|p| !p.contains("id=\"sources\"")));
    assert!(files.is_empty(), "{files:?}");
}

/// A runner that answers every game at once with the fake worker's canned
/// record, with a failure of `victim` in every game it plays as P (so it is
/// disqualified and its groups' pages show it).
struct InstantWithFailures {
    referee: knobeln::referee::RefereeConfig,
    victim: knobeln::tournament::TeamId,
    done: std::cell::RefCell<std::collections::VecDeque<knobeln::engine::pool::Done>>,
}

impl knobeln::engine::pool::Runner for InstantWithFailures {
    fn capacity(&self) -> usize {
        64
    }
    fn submit(&self, job: knobeln::engine::pool::Job) {
        let mut record = knobeln::distributed::worker::canned_record(&self.referee, job.game.seed);
        if job.game.players[0] == self.victim {
            record.failures.push(knobeln::referee::Failure {
                player: 0,
                throw: 1,
                kind: knobeln::referee::FailureKind::Output { line: "x".into() },
                reason: "printed x".into(),
            });
        }
        self.done
            .borrow_mut()
            .push_back(knobeln::engine::pool::Done::played(job.game, record));
    }
    fn next_done(&self) -> Option<knobeln::engine::pool::Done> {
        self.done.borrow_mut().pop_front()
    }
}

/// The live observer, and at each round's end the whole site written by a
/// fresh observer into a folder of its own: the index, the round's page
/// and its players' pages must equal the live ones.
struct RoundEndCheck {
    live: SiteObserver,
    tournament: i64,
    rounds: Vec<(u32, bool)>,
    compared: usize,
    differ: Vec<String>,
}

impl Observer for RoundEndCheck {
    fn event(&mut self, store: &Store, event: &Event) -> Result<(), String> {
        self.live.event(store, event)?;
        assert!(self.live.last_error.is_none(), "{:?}", self.live.last_error);
        if let Event::RoundFinished { round, .. } = event {
            let dir = tempfile::tempdir().unwrap();
            let mut fresh = SiteObserver::new(dir.path(), self.tournament);
            fresh.options = self.live.options.clone();
            fresh.regenerate(store).unwrap();
            let is_final = store
                .round(self.tournament, *round)
                .unwrap()
                .unwrap()
                .is_final;
            self.rounds.push((*round, is_final));
            let res = results(store, self.tournament, vec![]).unwrap();
            let ids: std::collections::HashMap<String, u32> = store
                .entries(self.tournament)
                .unwrap()
                .into_iter()
                .map(|e| (e.name, e.team.0))
                .collect();
            let mut names = vec!["index.html".to_string(), knobeln::site::round_page(*round)];
            names.extend(
                res.rounds[*round as usize - 1]
                    .groups
                    .iter()
                    .flat_map(|g| &g.members)
                    .map(|m| team_page(ids[m])),
            );
            for name in names {
                self.compared += 1;
                if std::fs::read(dir.path().join(&name)).ok()
                    != std::fs::read(self.live.dir.join(&name)).ok()
                {
                    self.differ.push(format!("round {round}: {name}"));
                }
            }
        }
        Ok(())
    }
}

/// A field of 100 instant teams (one of them, `t005`, failing as P in
/// every game) in a new store: its folder, the store, the tournament and
/// the runner.
fn instant_field_with_a_victim() -> (
    tempfile::TempDir,
    Store,
    i64,
    Box<knobeln::engine::run::RunnerFactory<'static>>,
) {
    use knobeln::engine::run::TournamentConfig;
    use knobeln::referee::RefereeConfig;
    let tmp = tempfile::tempdir().unwrap();
    let mut store = Store::open(&tmp.path().join("k.db")).unwrap();
    let now = chrono::Utc::now();
    let mut entries = Vec::new();
    for i in 0..100 {
        let team = store.ensure_team(&format!("t{i:03}"), now).unwrap();
        let source = format!("main() {{ for (;;) make_throw({}); }}\n", i + 1);
        let version = store
            .insert_version(
                &knobeln::store::NewVersion {
                    team,
                    source: source.as_bytes(),
                    source_sha256: "instant",
                    binary: Some(b"instant"),
                    lexical_elements: None,
                    description: None,
                    report_json: "{}",
                },
                now,
            )
            .unwrap();
        entries.push((team, version));
    }
    let config = TournamentConfig {
        referee: RefereeConfig::default(),
        evolution: Default::default(),
    };
    let tid = store
        .create_tournament(
            1,
            &knobeln::seed::SeedKey::public_from_seed(1),
            &serde_json::to_string(&config).unwrap(),
            "rounds",
            &entries,
            now,
        )
        .unwrap();
    let victim = entries[5].0;
    let runner = move |referee: &RefereeConfig| -> Result<
        Box<dyn knobeln::engine::pool::Runner>,
        knobeln::engine::EngineError,
    > {
        Ok(Box::new(InstantWithFailures {
            referee: *referee,
            victim,
            done: Default::default(),
        }))
    };
    (tmp, store, tid, Box::new(runner))
}

#[test]
fn a_rounds_end_leaves_every_page_as_a_whole_write_of_the_round_makes_it() {
    use knobeln::engine::run::run_tournament_with;
    let (tmp, mut store, tid, runner) = instant_field_with_a_victim();
    let mut live = SiteObserver::new(tmp.path().join("site"), tid);
    live.options.no_game_pages = true;
    let mut check = RoundEndCheck {
        live,
        tournament: tid,
        rounds: Vec::new(),
        compared: 0,
        differ: Vec::new(),
    };
    let clock = knobeln::engine::SystemClock;
    run_tournament_with(&mut store, tid, &*runner, &clock, &mut check).unwrap();
    assert!(
        check.rounds.iter().filter(|r| !r.1).count() >= 2,
        "rounds that are not the final: {:?}",
        check.rounds
    );
    let res = results(&store, tid, vec![]).unwrap();
    assert!(
        res.rounds[0].disqualified.iter().any(|d| d.team == "t005"),
        "the victim is disqualified"
    );
    assert!(check.compared > 200, "{} pages compared", check.compared);
    assert!(check.differ.is_empty(), "differ: {:?}", check.differ);
}

/// Records the progress every GameFinished reports, and the games of each
/// round as the store has them when the round ends.
#[derive(Default)]
struct Progress {
    /// Per round: (done, total) of each GameFinished, in order.
    reported: std::collections::BTreeMap<u32, Vec<(usize, usize)>>,
    finished: Vec<u32>,
}

impl Observer for Progress {
    fn event(&mut self, _store: &Store, event: &Event) -> Result<(), String> {
        match event {
            Event::GameFinished { round, done, total } => {
                self.reported
                    .entry(*round)
                    .or_default()
                    .push((*done, *total));
            }
            Event::RoundFinished { round, .. } => self.finished.push(*round),
            _ => {}
        }
        Ok(())
    }
}

#[test]
fn the_progress_of_a_round_grows_to_its_total_game_by_game() {
    use knobeln::engine::run::run_tournament_with;
    let (_tmp, mut store, tid, runner) = instant_field_with_a_victim();
    let mut progress = Progress::default();
    let clock = knobeln::engine::SystemClock;
    run_tournament_with(&mut store, tid, &*runner, &clock, &mut progress).unwrap();
    assert!(progress.finished.len() >= 3, "{:?}", progress.finished);
    for round in &progress.finished {
        let reported = &progress.reported[round];
        assert!(
            reported
                .windows(2)
                .all(|w| w[0].0 <= w[1].0 && w[0].1 <= w[1].1),
            "round {round}: progress never goes back: {reported:?}"
        );
        assert!(reported.iter().all(|(d, t)| d <= t), "round {round}");
        let stored: usize = store
            .conn()
            .query_row(
                "SELECT COUNT(*) FROM games WHERE tournament_id = ?1 AND round = ?2",
                rusqlite::params![tid, round],
                |r| r.get(0),
            )
            .unwrap();
        let last = *reported.last().unwrap();
        assert_eq!(
            last.0, last.1,
            "round {round}: every game applied at its end"
        );
        assert!(last.1 >= stored, "round {round}: {last:?}, {stored} stored");
    }
}
