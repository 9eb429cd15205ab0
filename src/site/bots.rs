//! The results site of a bot discipline, written in one pass over the
//! stored games (memory independent of their number):
//!
//! - `index.html`: the ranking as an HTML table with every column of the
//!   text table (a column per island; Morabaraba's head-to-head only when
//!   two bots have equal points), each bot's name a link to its page, the
//!   grid of every bot against every bot (the flooding island: every
//!   island against every bot) whose cells open the pairing, FootSteps'
//!   pair table, and the full text of the results;
//! - `bot/TEAM.html`: a bot's page: its language and versions, its place,
//!   one row per opponent (or island) counted as the table counts
//!   ([`opponent_table`](crate::discipline::results::opponent_table): the rows add up to the total, the total is the
//!   bot's row of the table), each a link to the pairing, and its failures
//!   with the offending line; with `[site] publish_sources`, once the
//!   contest is finished, the source of each version (escaped, and as
//!   `bot/TEAM-source-N.txt`, N the team's own version number);
//! - `pairing/P.html`: every game of one pairing, one row each (anchor
//!   `#KEY`): seats, outcome, failures, CPU per bot, and a link to the
//!   game's own page where its transcript was kept (where a team's lines
//!   were more than the transcript budget lets a game keep: whose, in
//!   words; where the game pages' budget cut the pairing: from which game
//!   on and why, in words, under its games);
//! - `game/KEY.html` and `game/KEY.txt`: a kept game: who, parameters and
//!   seed, outcome, failures with the offending line, CPU per bot, the
//!   picture drawn from the transcript (`crate::discipline::NAME::picture`),
//!   the transcript to download (full form), each bot's standard error as
//!   stored, and the replay that steps through the lines the bots printed
//!   (`super::replay`: one inline script over the static page); within
//!   `[site] game_page_bytes`: an even share per pairing that kept a game
//!   ([`pairing_share`]), its pages in the order of its games while their
//!   4 KiB blocks fit, none after.
//!
//! Static HTML and SVG; the game page's replay is its only script, and the
//! page shows everything without it. Every page is written to a temporary
//! name and renamed. What it does not do: decide or compute results (they
//! come in as [`Results`]), play or replay bots (a transcript is expanded
//! from its stored moves by the rules alone).

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::config::Config;
use crate::discipline::play::Played;
use crate::discipline::results::{results_text, table_rows, Results};
use crate::discipline::table::OpponentRow;
use crate::discipline::transcript::full_text;
use crate::discipline::Discipline;
use crate::store::bots::{
    entry_names, for_each_game, name_in, slug, BotContest, BotContestError, StoredGame, Tally,
};
use crate::store::Store;
use crate::tournament::TeamId;

use crate::draw::escape;

use super::spare::{open_spare, HeldFolder};

/// Why the site could not be written.
#[derive(Debug, thiserror::Error)]
pub enum BotSiteError {
    #[error("writing the site: {0}")]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Contest(#[from] BotContestError),
    #[error("database: {0}")]
    Sql(#[from] rusqlite::Error),
}

/// What was written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BotSiteSummary {
    pub n_games: u64,
    /// Games with a page of their own (a kept transcript).
    pub n_game_pages: u64,
    /// Kept games without a page: their pairing's share of `[site]
    /// game_page_bytes` was full ([`pairing_share`]).
    pub n_game_pages_cut: u64,
    /// Each pairing's share of `[site] game_page_bytes`, in bytes of blocks.
    pub pairing_share: u64,
    pub n_pairings: u64,
    pub n_bots: u64,
}

const STYLE: &str = "body{font-family:sans-serif;max-width:72em;margin:2em auto;padding:0 1em}\
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #999;padding:.2em .6em}\
td{text-align:right}td.l,th.l{text-align:left}.fail{color:#a00}\
figure{margin:1em 0}figcaption{font-size:90%;color:#444}\
.strip{display:flex;flex-wrap:wrap;gap:.4em}pre{white-space:pre-wrap}\
tr.total th{text-align:right}tr.total th.l{text-align:left}table.grid td{text-align:center}";

fn page_head(title: &str, up: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>{t}</title><style>{STYLE}</style></head><body>\n\
         <p><a href=\"{up}index.html\">results</a></p>\n",
        t = escape(title)
    )
}

const PAGE_END: &str = "</body></html>\n";

/// Writes `path` through a temporary file and a rename; the temporary
/// file is a spare (`site::spare`): a link or FIFO planted at its name
/// never makes the page's bytes go elsewhere or the writer wait.
fn write_file(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = path.with_extension("tmp~");
    let mut f = open_spare(&tmp)?;
    f.set_len(0)?;
    f.write_all(bytes)?;
    drop(f);
    std::fs::rename(tmp, path)
}

/// The site's folder and its folders held open ([`HeldFolder`]): a page's
/// path under a held folder reaches it through its descriptor, so a link
/// that whoever else can write the site folder puts at `game/` (to a folder
/// elsewhere) never has pages written or files removed there (red team F10:
/// `a_link_at_a_bot_sites_folder_never_writes_or_removes_elsewhere`).
struct SiteFolders {
    root: PathBuf,
    held: Vec<(String, HeldFolder)>,
}

impl SiteFolders {
    fn open(root: &Path, folders: &[&str]) -> std::io::Result<SiteFolders> {
        let mut s = SiteFolders {
            root: root.to_path_buf(),
            held: Vec::new(),
        };
        for f in folders {
            s.hold(f)?;
        }
        Ok(s)
    }

    /// Holds the site's folder `name` (made if missing).
    fn hold(&mut self, name: &str) -> std::io::Result<()> {
        let folder = HeldFolder::open(&self.root.join(name))?;
        self.held.push((name.to_string(), folder));
        Ok(())
    }

    /// `rel` (`index.html`, `game/NAME.html`) in the site: under a held
    /// folder through the folder held.
    fn join(&self, rel: impl AsRef<str>) -> PathBuf {
        let rel = rel.as_ref();
        if let Some((folder, name)) = rel.split_once('/') {
            if let Some((_, held)) = self.held.iter().find(|(f, _)| f == folder) {
                return held.path().join(name);
            }
        }
        self.root.join(rel)
    }
}

/// A page file written as it is produced, renamed into place at the end.
struct Streamed {
    tmp: PathBuf,
    path: PathBuf,
    out: BufWriter<File>,
}

impl Streamed {
    fn create(path: PathBuf) -> std::io::Result<Streamed> {
        let tmp = path.with_extension("tmp~");
        let file = open_spare(&tmp)?;
        file.set_len(0)?;
        Ok(Streamed {
            out: BufWriter::new(file),
            tmp,
            path,
        })
    }

    fn finish(mut self) -> std::io::Result<()> {
        self.out.flush()?;
        drop(self.out);
        std::fs::rename(self.tmp, self.path)
    }
}

/// The outcome in one line (the summary's outcome lines, CPU left out).
fn outcome_line(p: &Played, names: &[String]) -> String {
    p.summary(names)
        .lines()
        .filter(|l| {
            !l.ends_with(" ms CPU") && !l.starts_with("wall clock") && !l.starts_with("FAILURE")
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// A failure shown on a bot's page.
struct FailureNote {
    pairing: String,
    anchor: String,
    text: String,
}

/// A game's full transcript is offered for download up to this size;
/// beyond it, its moves form.
pub const FULL_DOWNLOAD_BYTES: usize = 256 * 1024;

/// At most this many failures are listed on a bot's page (the count is
/// always there).
const FAILURES_LISTED: usize = 50;

/// A pairing's share of the game-page budget `budget` (`[site]
/// game_page_bytes`, counted in 4 KiB blocks as
/// [`on_disk`](super::model::on_disk)): the budget shared evenly by the
/// `n_pairings` pairings that kept a game. Which games keep their moves is
/// fixed before play (the first `transcripts_per_pairing` of each
/// pairing), so the share depends on the stored games alone, never on the
/// order they finished in.
pub fn pairing_share(budget: u64, n_pairings: u64) -> u64 {
    budget / n_pairings.max(1)
}

/// Whether a game of a pairing page has a page of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum GamePage {
    /// Written: its row links to it.
    Written,
    /// No kept transcript: no page was ever meant.
    NotKept,
    /// Kept, but its pairing's share of the budget was full.
    CutByBudget,
}

/// A pairing's use of its share while its games are written in order: a
/// page is written while its blocks fit; the first that does not ends the
/// pairing's pages (its cut).
#[derive(Debug, Default)]
struct PairingBudget {
    used: u64,
    kept: u32,
    /// The first game without a page, by its name (slug).
    cut: Option<String>,
}

/// Why the games of a pairing from `first` on have no page, in words (the
/// pairing page says it under its games).
fn budget_words(first: &str, kept: u32, share: u64, budget: u64, n_pairings: u64) -> String {
    use super::model::size_text;
    let after = match kept {
        0 => "before its first page".to_string(),
        1 => "after 1 page".to_string(),
        n => format!("after {n} pages"),
    };
    format!(
        "Games from {first} on have no page of their own: the game pages of this contest \
         may take {} on disk (the budget the organizer set), shared evenly by its {n_pairings} \
         pairings with kept games, and the share of this pairing ({}) was full {after}. \
         Their results stand as shown.",
        size_text(budget),
        size_text(share),
    )
}

/// Writes the site into `dir` (created): see the module's description.
pub fn write(
    dir: &Path,
    store: &Store,
    c: &BotContest,
    config: &Config,
    results: &Results,
) -> Result<BotSiteSummary, BotSiteError> {
    std::fs::create_dir_all(dir)?;
    let dir = &mut SiteFolders::open(dir, &["bot", "pairing", "game"])?;
    let d = c.discipline;
    let names = entry_names(c);
    let name_of = |t: &TeamId| name_in(&names, t);
    let mut summary = BotSiteSummary {
        n_bots: c.entries.len() as u64,
        ..Default::default()
    };
    let seam = crate::discipline::registry::of(d)
        .ok_or_else(|| BotSiteError::Contest(BotContestError::NoBots("KNOBELN")))?;
    let mut tally = Tally::new(seam);
    let mut fails: BTreeMap<TeamId, Vec<FailureNote>> = BTreeMap::new();
    let budget = config.site.game_page_bytes_of(c.discipline);
    let n_kept_pairings = crate::store::bots::pairings_with_kept_games(store, c, config)?;
    let share = pairing_share(budget, n_kept_pairings);
    summary.pairing_share = share;
    let finish = |s: Streamed, b: &PairingBudget| {
        let words = b
            .cut
            .as_deref()
            .map(|first| budget_words(first, b.kept, share, budget, n_kept_pairings));
        finish_pairing(s, words.as_deref())
    };
    let mut current: Option<(String, Streamed, PairingBudget)> = None;
    for_each_game(store, c, config, |g: StoredGame| {
        let io = |e: std::io::Error| BotContestError::Corrupt(format!("writing the site: {e}"));
        summary.n_games += 1;
        if current
            .as_ref()
            .map(|(p, _, _)| p != &g.pairing)
            .unwrap_or(true)
        {
            if let Some((_, s, b)) = current.take() {
                finish(s, &b).map_err(io)?;
            }
            summary.n_pairings += 1;
            let s = start_pairing(dir, c, &g, &name_of).map_err(io)?;
            current = Some((g.pairing.clone(), s, PairingBudget::default()));
        }
        let seat_names: Vec<String> = g.seats.iter().map(&name_of).collect();
        let anchor = g.slug();
        let (_, s, b) = current.as_mut().expect("a pairing page");
        // A kept game's page is written while its files fit the pairing's
        // share; from the first that does not, the pairing's games have
        // none (a page an earlier write left is removed: no link to it).
        let page = match &g.moves {
            None => GamePage::NotKept,
            Some(_) => {
                let files = b
                    .cut
                    .is_none()
                    .then(|| render_game(c, &g, &seat_names))
                    .filter(|f| b.used + f.on_disk() <= share);
                match files {
                    Some(files) => {
                        b.used += files.on_disk();
                        b.kept += 1;
                        files.write(dir).map_err(io)?;
                        summary.n_game_pages += 1;
                        GamePage::Written
                    }
                    None => {
                        b.cut.get_or_insert_with(|| anchor.clone());
                        remove_game_files(dir, &anchor);
                        summary.n_game_pages_cut += 1;
                        GamePage::CutByBudget
                    }
                }
            }
        };
        pairing_row(&mut s.out, &g, &seat_names, page).map_err(io)?;
        tally.add(&g, &name_of);
        for f in &g.played.failures {
            let Some(team) = g.seats.get(f.bot) else {
                continue;
            };
            let list = fails.entry(*team).or_default();
            if list.len() < FAILURES_LISTED {
                list.push(FailureNote {
                    pairing: g.pairing.clone(),
                    anchor: anchor.clone(),
                    text: f.reason.clone(),
                });
            }
        }
        Ok(())
    })?;
    if let Some((_, s, b)) = current.take() {
        finish(s, &b)?;
    }
    // The bots' pages.
    let (headers, table) = table_rows(results);
    let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
    for e in &c.entries {
        let versions = versions_of(store, e.team, d)?;
        let mine = tally.rows_of(e.team);
        let place = table.iter().find(|r| r.get(1) == Some(&e.name));
        let html = bot_page(
            results,
            &e.name,
            &headers,
            place,
            &versions,
            &mine,
            fails.get(&e.team).map(Vec::as_slice).unwrap_or(&[]),
        );
        let html = with_sources(html, store, e.team, d, dir, publish_sources(config, c))?;
        write_file(&dir.join(format!("bot/{}.html", e.team.0)), html.as_bytes())?;
    }
    // The contest's materials (the flooding island's islands), published
    // with the results (never before: the kit carries test islands only).
    if let Some((folder, _)) = published_materials(c) {
        dir.hold(folder)?;
        for (k, (_, text)) in c.materials.iter().enumerate() {
            write_file(
                &dir.join(format!("{folder}/{}.txt", k + 1)),
                text.as_bytes(),
            )?;
        }
    }
    let index = index_html(&config.contest.name, c, results, &tally);
    write_file(&dir.join("index.html"), index.as_bytes())?;
    Ok(summary)
}

fn start_pairing(
    dir: &SiteFolders,
    c: &BotContest,
    g: &StoredGame,
    name_of: &dyn Fn(&TeamId) -> String,
) -> std::io::Result<Streamed> {
    let mut s = Streamed::create(dir.join(format!("pairing/{}.html", slug(&g.pairing))))?;
    let names: Vec<String> = g.seats.iter().map(name_of).collect();
    let title = crate::discipline::registry::of_setup(&g.setup).pairing_title(&names, &g.subject);
    write!(
        s.out,
        "{}<h1>{}</h1>\n<p>Every game of this pairing in {} (a link opens a \
         game's own page with its picture and transcript).</p>\n\
         <table class=\"games\">\n<tr><th class=\"l\">Game</th><th class=\"l\">Players</th>\
         <th class=\"l\">Outcome</th><th>CPU ms</th><th class=\"l\">Failures</th></tr>\n",
        page_head(&title, "../"),
        escape(&title),
        escape(c.discipline.title())
    )?;
    Ok(s)
}

/// Ends a pairing page: its table, and `budget_words` (why its games from
/// the cut on have no page) where the budget cut it.
fn finish_pairing(mut s: Streamed, budget_words: Option<&str>) -> std::io::Result<()> {
    writeln!(s.out, "</table>")?;
    if let Some(words) = budget_words {
        writeln!(s.out, "<p id=\"budget\">{}</p>", escape(words))?;
    }
    write!(s.out, "{PAGE_END}")?;
    s.finish()
}

fn pairing_row(
    out: &mut impl Write,
    g: &StoredGame,
    names: &[String],
    page: GamePage,
) -> std::io::Result<()> {
    let slug = g.slug();
    let game = if page == GamePage::Written {
        format!("<a href=\"../game/{slug}.html\">{slug}</a>")
    } else if page == GamePage::CutByBudget {
        format!(
            "{} (no page)<br><small><a href=\"#budget\">the game pages' budget</a></small>",
            escape(&slug)
        )
    } else {
        match &g.moves_not_kept {
            // Why a game that keeps its transcript has none: whose lines.
            Some(note) => format!(
                "{} (not kept)<br><small>{}</small>",
                escape(&slug),
                escape(&capitalised(&note.sentence(names)))
            ),
            None => format!("{} (not kept)", escape(&slug)),
        }
    };
    // A note under the game's name (a flooding run's seed: the kit's
    // referee plays it again with it).
    let game = match crate::discipline::registry::of_setup(&g.setup).game_note(&g.setup) {
        Some(note) => format!("{game}<br><small>{}</small>", escape(&note)),
        None => game,
    };
    let cpu: Vec<String> = g.played.cpu_ms.iter().map(u64::to_string).collect();
    let fails: Vec<String> = g
        .played
        .failures
        .iter()
        .map(|f| escape(&f.reason))
        .collect();
    writeln!(
        out,
        "<tr id=\"{slug}\"><td class=\"l\">{game}</td><td class=\"l\">{}</td>\
         <td class=\"l\">{}</td><td>{}</td><td class=\"l fail\">{}</td></tr>",
        escape(&names.join(" vs ")),
        escape(&outcome_line(&g.played, names)),
        cpu.join(" / "),
        fails.join("<br>")
    )
}

/// A kept game's files, rendered and not yet written: its page and its
/// transcript's download (full or moves form), by their names in `game/`.
struct GameFiles {
    page: (String, String),
    download: (String, String),
    /// The bytes the page's CPU figures lack of their widest form
    /// ([`cpu_slack`]): the page is charged as if it had them.
    cpu_slack: usize,
}

/// How often a game page shows each bot's CPU time: in its facts
/// ("N ms CPU") and in the replay's note ("NAME N ms").
const CPU_FIGURES_PER_BOT: usize = 2;

/// The widest a CPU figure can be written: `u64::MAX`'s 20 digits.
const WIDEST_CPU_DIGITS: usize = 20;

/// The bytes the CPU figures of a game page with `seats` bots lack of
/// their widest form. A bot's CPU time depends on the machine's load, so
/// its digits may not decide how many blocks a page takes (and so where a
/// tight pairing's pages are cut): the page is charged with every CPU
/// figure at its widest, whatever its value; only the rules decide.
fn cpu_slack(cpu_ms: &[u64], seats: usize) -> usize {
    (0..seats)
        .map(|i| {
            let ms = cpu_ms.get(i).copied().unwrap_or(0);
            WIDEST_CPU_DIGITS - (ms.checked_ilog10().unwrap_or(0) as usize + 1)
        })
        .sum::<usize>()
        * CPU_FIGURES_PER_BOT
}

impl GameFiles {
    /// The bytes of disk the two files take, in whole 4 KiB blocks, the
    /// page's CPU figures counted at their widest ([`cpu_slack`]): the
    /// same charge for the same game whatever the load it was played at.
    fn on_disk(&self) -> u64 {
        super::model::on_disk(self.page.1.len() + self.cpu_slack)
            + super::model::on_disk(self.download.1.len())
    }

    fn write(&self, dir: &SiteFolders) -> std::io::Result<()> {
        write_file(
            &dir.join(format!("game/{}", self.download.0)),
            self.download.1.as_bytes(),
        )?;
        write_file(
            &dir.join(format!("game/{}", self.page.0)),
            self.page.1.as_bytes(),
        )
    }
}

/// Removes what an earlier write may have left of the game `slug`'s files
/// (its page is cut now: nothing links to them).
fn remove_game_files(dir: &SiteFolders, slug: &str) {
    for ext in ["html", "txt", "moves.txt"] {
        let _ = std::fs::remove_file(dir.join(format!("game/{slug}.{ext}")));
    }
}

/// A kept game's page and its transcript file, rendered.
fn render_game(c: &BotContest, g: &StoredGame, names: &[String]) -> GameFiles {
    let slug = g.slug();
    let transcript = g.transcript().unwrap_or_default();
    let failures: Vec<String> = g.played.failures.iter().map(|f| f.reason.clone()).collect();
    // A long game's download is its moves form (the kit expands it): a
    // 2500-round ultimatum match is 560 kB in full, 25 kB in moves. The
    // full text is not made where its exchanges alone would pass the size.
    let text = (crate::discipline::transcript::full_exchanges_at_least(&transcript)
        <= FULL_DOWNLOAD_BYTES)
        .then(|| full_text(&g.setup, &g.subject, names, &transcript, &failures))
        .filter(|text| text.len() <= FULL_DOWNLOAD_BYTES);
    let (download, full, download_text) = if let Some(text) = text {
        (format!("{slug}.txt"), true, text)
    } else {
        let moves = g.moves.as_ref().expect("a kept game has moves");
        let short = crate::discipline::transcript::moves_text(&g.setup, &g.subject, names, moves);
        (format!("{slug}.moves.txt"), false, short)
    };
    let title = format!(
        "{}: {}",
        capitalised(c.discipline.title()),
        names.join(" vs ")
    );
    let mut h = page_head(&title, "../");
    h.push_str(&format!(
        "<p><a href=\"../pairing/{}.html#{slug}\">all games of this pairing</a></p>\n\
         <h1>{}</h1>\n<table class=\"facts\">\n",
        crate::store::bots::slug(&g.pairing),
        escape(&title)
    ));
    let mut fact = |k: &str, v: String| {
        h.push_str(&format!(
            "<tr><th class=\"l\">{}</th><td class=\"l\">{}</td></tr>\n",
            escape(k),
            v
        ))
    };
    fact("Game", slug.clone());
    for (i, n) in names.iter().enumerate() {
        let team = g.seats[i].0;
        // Players as every text numbers them: from 1; the flooding
        // island's one bot is "Bot".
        let who = if names.len() > 1 {
            format!("Player {}", i + 1)
        } else {
            "Bot".to_string()
        };
        fact(
            &who,
            format!(
                "<a href=\"../bot/{team}.html\">{}</a>, {} ms CPU",
                escape(n),
                g.played.cpu_ms.get(i).copied().unwrap_or(0)
            ),
        );
    }
    for l in crate::discipline::transcript::full_text(&g.setup, &g.subject, &[], &[], &[])
        .lines()
        .skip(1)
        .filter(|l| !l.starts_with("# island-text"))
    {
        if let Some((k, v)) = l.trim_start_matches("# ").split_once(": ") {
            fact(k, escape(v));
        }
    }
    fact("Outcome", escape(&outcome_line(&g.played, names)));
    for f in &g.played.failures {
        fact(
            "Failure",
            format!("<span class=\"fail\">{}</span>", escape(&f.reason)),
        );
    }
    fact(
        "Transcript",
        if full {
            format!(
                "<a href=\"{download}\">{download}</a> ({} lines; the kit's referee writes \
                 the same for the same game)",
                transcript.len()
            )
        } else {
            format!(
                "<a href=\"{download}\">{download}</a> (the moves form of its {} lines: \
                 <code>python3 referee.py --expand {download}</code> with the kit's referee \
                 writes them all)",
                transcript.len()
            )
        },
    );
    h.push_str("</table>\n");
    // The replay over the picture (issue 36): hidden until its script runs.
    let replay = super::replay::replay_data(&g.setup, &transcript, names);
    h.push_str(&super::replay::panel(&replay, &g.played.cpu_ms));
    h.push_str(&picture(&g.setup, &transcript, names));
    h.push_str(&super::replay::stderr_section(
        &replay.players,
        &g.played.stderr,
    ));
    h.push_str(PAGE_END);
    GameFiles {
        page: (format!("{slug}.html"), h),
        download: (download, download_text),
        cpu_slack: cpu_slack(&g.played.cpu_ms, names.len()),
    }
}

/// `s` with its first letter in capitals (a heading).
fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// The discipline's picture of a game.
fn picture(
    setup: &crate::discipline::play::Setup,
    t: &[crate::game::lines::Exchange],
    names: &[String],
) -> String {
    crate::discipline::registry::of_setup(setup).picture(setup, t, names)
}

/// A bot's versions in this discipline: (version id, language, accepted,
/// compiled at).
fn versions_of(
    store: &Store,
    team: TeamId,
    d: Discipline,
) -> Result<Vec<(i64, String, bool, String)>, BotSiteError> {
    let mut st = store.conn().prepare(
        "SELECT v.id, b.language, v.accepted, v.compiled_at FROM strategy_versions v \
         JOIN bot_programs b ON b.version_id = v.id \
         WHERE v.team_id = ?1 AND b.discipline = ?2 ORDER BY v.id",
    )?;
    let rows = st.query_map(rusqlite::params![team.0, d.name()], |r| {
        Ok((r.get(0)?, r.get(1)?, r.get::<_, i64>(2)? == 1, r.get(3)?))
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

fn bot_page(
    results: &Results,
    name: &str,
    headers: &[&str],
    place: Option<&Vec<String>>,
    versions: &[(i64, String, bool, String)],
    rows: &[OpponentRow],
    fails: &[FailureNote],
) -> String {
    let mut h = page_head(name, "../");
    h.push_str(&format!("<h1>{}</h1>\n", escape(name)));
    if let Some(p) = place {
        h.push_str("<table class=\"place\"><tr>");
        for k in headers {
            h.push_str(&format!("<th>{}</th>", escape(k)));
        }
        h.push_str("</tr><tr>");
        for v in p {
            h.push_str(&format!("<td>{}</td>", escape(v)));
        }
        h.push_str("</tr></table>\n");
    }
    h.push_str("<h2>Versions</h2>\n<table class=\"versions\"><tr><th>Version</th>\
                <th class=\"l\">Language</th><th class=\"l\">Verdict</th><th class=\"l\">Compiled</th></tr>\n");
    // The team's own numbers (1, 2, …), not the database's ids.
    let numbers =
        crate::words::version_numbers(&versions.iter().map(|v| ((), v.0)).collect::<Vec<_>>());
    for (id, lang, ok, at) in versions {
        let number = numbers[id];
        h.push_str(&format!(
            "<tr><td>{number}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td></tr>\n",
            escape(lang),
            if *ok { "accepted" } else { "rejected" },
            escape(at)
        ));
    }
    h.push_str("</table>\n");
    h.push_str(&opponents_html(results, rows));
    let total_fails: u64 = rows.iter().map(|r| r.failures).sum();
    h.push_str(&format!("<h2>Failures ({total_fails})</h2>\n"));
    if fails.is_empty() {
        h.push_str("<p>None.</p>\n");
    } else {
        h.push_str("<ul class=\"failures\">\n");
        for f in fails {
            h.push_str(&format!(
                "<li><a href=\"../pairing/{}.html#{}\">{}</a></li>\n",
                slug(&f.pairing),
                f.anchor,
                escape(&f.text)
            ));
        }
        if (total_fails as usize) > fails.len() {
            h.push_str(&format!(
                "<li>… and {} more (on the pairings' pages)</li>\n",
                total_fails as usize - fails.len()
            ));
        }
        h.push_str("</ul>\n");
    }
    h.push_str(PAGE_END);
    h
}

/// Whether the bots' pages show their sources: `[site] publish_sources`,
/// and only once the contest is finished.
pub fn publish_sources(config: &Config, c: &BotContest) -> bool {
    config.site.publish_sources && c.finished
}

/// A source shown on its bot's page up to this size (a bigger one is a
/// link to its file only).
const SOURCE_SHOWN_BYTES: usize = 64 * 1024;

/// `html`, a bot's page, with the sources of its versions before its end
/// when `publish` (each also written as [`source_file`]); without
/// `publish` the page as it is, and no source file of the team is left in
/// `dir`.
fn with_sources(
    html: String,
    store: &Store,
    team: TeamId,
    d: Discipline,
    dir: &SiteFolders,
    publish: bool,
) -> Result<String, BotSiteError> {
    let sources = sources_of(store, team, d)?;
    // The team's own version numbers, as its versions table shows them.
    let numbers =
        crate::words::version_numbers(&sources.iter().map(|s| ((), s.0)).collect::<Vec<_>>());
    let numbered: Vec<(usize, &str, &str)> = sources
        .iter()
        .map(|(id, lang, text)| (numbers[id], lang.as_str(), text.as_str()))
        .collect();
    let file = |n: usize| dir.join(source_file(team, n));
    if !publish {
        for &(n, _, _) in &numbered {
            let _ = std::fs::remove_file(file(n));
        }
        return Ok(html);
    }
    let mut h = html
        .strip_suffix(PAGE_END)
        .map(str::to_string)
        .unwrap_or(html);
    h.push_str(&sources_section(team, &numbered));
    for &(n, _, text) in &numbered {
        write_file(&file(n), text.as_bytes())?;
    }
    h.push_str(PAGE_END);
    Ok(h)
}

/// Where version `n` (the team's own number) of a team's source is
/// published: `bot/TEAM-source-N.txt`, beside the bot's page.
pub fn source_file(team: TeamId, n: usize) -> String {
    format!("bot/{}-source-{n}.txt", team.0)
}

/// The section of a bot's page with its sources: each version's (by the
/// team's own number), escaped, and a link to its file.
fn sources_section(team: TeamId, sources: &[(usize, &str, &str)]) -> String {
    let mut h = String::from(
        "<section id=\"sources\">\n<h2>Sources</h2>\n<p>The contest is over: the \
         organizer publishes the source of every version.</p>\n",
    );
    if sources.is_empty() {
        h.push_str("<p>None.</p>\n");
    }
    for &(n, lang, text) in sources {
        let file = source_file(team, n);
        let file = file.trim_start_matches("bot/");
        h.push_str(&format!(
            "<h3 id=\"source-{n}\">Version {n} ({})</h3>\n<p><a href=\"{file}\">\
             {file}</a> ({} bytes)</p>\n",
            escape(lang),
            text.len()
        ));
        if text.len() <= SOURCE_SHOWN_BYTES {
            h.push_str(&format!(
                "<details><summary>The source</summary><pre>{}</pre></details>\n",
                escape(text)
            ));
        }
    }
    h.push_str("</section>\n");
    h
}

/// A bot's sources in this discipline: (version id, language, source as
/// text), the words of any `<<FROM>>` line masked once more (the store
/// keeps them masked already).
fn sources_of(
    store: &Store,
    team: TeamId,
    d: Discipline,
) -> Result<Vec<(i64, String, String)>, BotSiteError> {
    let mut st = store.conn().prepare(
        "SELECT v.id, b.language, v.source FROM strategy_versions v \
         JOIN bot_programs b ON b.version_id = v.id \
         WHERE v.team_id = ?1 AND b.discipline = ?2 ORDER BY v.id",
    )?;
    let rows = st.query_map(rusqlite::params![team.0, d.name()], |r| {
        Ok((r.get(0)?, r.get(1)?, r.get::<_, Vec<u8>>(2)?))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (id, lang, mut bytes) = row?;
        let mut secrets = std::collections::BTreeSet::new();
        crate::mail::secrets::credential_words(&bytes, &mut secrets);
        crate::mail::secrets::mask(&mut bytes, &secrets);
        out.push((id, lang, String::from_utf8_lossy(&bytes).into_owned()));
    }
    Ok(out)
}

/// The contest's published materials (folder, section of the index),
/// once it is finished and has any.
fn published_materials(c: &BotContest) -> Option<(&'static str, String)> {
    if !c.finished || c.materials.is_empty() {
        return None;
    }
    crate::discipline::registry::of(c.discipline)?.published_materials(&c.materials)
}

/// The index page: the ranking (names link to the bots' pages; a
/// sentence on the head-to-head where it is shown), the grid of every
/// bot against every bot (the flooding island: every island against
/// every bot), FootSteps' pair table, the full text.
pub fn index_html(contest_name: &str, c: &BotContest, results: &Results, tally: &Tally) -> String {
    let (headers, rows) = table_rows(results);
    let team_of: BTreeMap<&str, TeamId> = c
        .entries
        .iter()
        .map(|e| (e.name.as_str(), e.team))
        .collect();
    let mut h = page_head(&format!("{contest_name}: results"), "");
    h.push_str(&format!(
        "<h1>{}</h1>\n<h2>Results: {}</h2>\n<table class=\"results\">\n<tr>",
        escape(contest_name),
        escape(&capitalised(c.discipline.title()))
    ));
    for head in &headers {
        h.push_str(&format!("<th>{}</th>", escape(head)));
    }
    h.push_str("</tr>\n");
    for r in rows {
        h.push_str("<tr>");
        for (i, cell) in r.iter().enumerate() {
            match (i, team_of.get(cell.as_str())) {
                (1, Some(t)) => h.push_str(&format!(
                    "<td class=\"l\"><a href=\"bot/{}.html\">{}</a></td>",
                    t.0,
                    escape(cell)
                )),
                _ => h.push_str(&format!("<td>{}</td>", escape(cell))),
            }
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</table>\n");
    let seam = tally.seam();
    h.push_str(&seam.after_ranking_html(results));
    h.push_str(&grid_html(c, results, tally));
    let names = entry_names(c);
    h.push_str(&seam.after_grid_html(results, &|t| name_in(&names, &t)));
    if let Some((_, section)) = published_materials(c) {
        h.push_str(&section);
    }
    h.push_str("<h2>In full</h2>\n<pre>");
    h.push_str(&escape(&results_text(results)));
    h.push_str("</pre>\n");
    h.push_str(PAGE_END);
    h
}

mod grid;
#[cfg(test)]
mod tests;

use grid::{grid_html, opponents_html};
