//! `knobeln demo [--dir DIR] [--teams N] [--seed N]`: a complete contest on
//! the embedded default (spool transport, SQLite) in a fresh folder: teams
//! register by mail, send their strategies by mail, the server compiles
//! them, runs the contest and the Evolution, and writes every mail into the
//! spool. Prints where everything is and a short summary of the results.
//! With `--nats URL` the games are played by workers, as with `[engine] nats`.

use knobeln::discipline::family::Family;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Context};
use chrono::Utc;
use clap::Args;

use knobeln::config::Config;
use knobeln::contest::run::{run, start, PlayersKey};
use knobeln::demo::{auth_in, compile_mail, drop_mail, field, registration_mail};
use knobeln::discipline::Discipline;
use knobeln::engine::results::results;
use knobeln::engine::SystemClock;
use knobeln::mail::transport::spool::Spool;
use knobeln::server::Server;
use knobeln::store::Store;

use super::tournament::Progress;

#[derive(Args, Debug)]
pub struct Demo {
    /// Folder for the demo's database and spool (created; must be empty or absent).
    #[arg(long, default_value = "knobeln-demo")]
    pub dir: PathBuf,
    /// Number of teams (at least 42 makes two rounds; at most 53).
    #[arg(long, default_value_t = 48)]
    pub teams: usize,
    /// Tournament seed.
    #[arg(long, default_value_t = 1994)]
    pub seed: u64,
    /// Throws per game.
    #[arg(long, default_value_t = 1000)]
    pub throws: u32,
    /// Remove an existing demo folder first.
    #[arg(long)]
    pub force: bool,
    /// Also draw a page per game on the results site (about 11 kB each).
    #[arg(long)]
    pub game_pages: bool,
    /// The bytes of disk the game pages may take (`[site]
    /// game_page_bytes`; default 1 GiB, a bot discipline's 8 GiB: every page of the demo).
    #[arg(long, value_name = "BYTES")]
    pub game_page_bytes: Option<u64>,
    /// Games played at once (`[rules] jobs`; default: one per CPU).
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
    /// What to play: knobeln, ultimatum, flooding, footsteps, morabaraba
    /// (the bot disciplines are played by the demo bots, one team each).
    #[arg(long, default_value = "knobeln")]
    pub discipline: Discipline,
    /// Bot disciplines: repetitions (ultimatum), runs per island
    /// (flooding) or games per pair (footsteps); the default keeps the demo
    /// well under two minutes.
    #[arg(long)]
    pub games: Option<u32>,
    /// Have the games played by workers (`knobeln worker --nats URL`)
    /// through this NATS server, as `[engine] nats` does.
    #[arg(long, value_name = "URL")]
    pub nats: Option<String>,
}

impl Demo {
    pub fn apply(self) -> anyhow::Result<ExitCode> {
        let t0 = Instant::now();
        self.prepare_dir()?;
        if let Family::Bots(_) = self.discipline.family() {
            return self.apply_bots(t0);
        }
        self.apply_knobeln(t0)
    }

    /// Creates the demo folder (empty, or emptied with --force).
    fn prepare_dir(&self) -> anyhow::Result<()> {
        if self.dir.exists() {
            let empty = std::fs::read_dir(&self.dir)?.next().is_none();
            if !empty && !self.force {
                bail!(
                    "{} exists; use --force to replace it, or --dir for another folder",
                    self.dir.display()
                );
            }
            if !empty {
                std::fs::remove_dir_all(&self.dir)
                    .with_context(|| format!("removing {}", self.dir.display()))?;
            }
        }
        std::fs::create_dir_all(&self.dir)?;
        Ok(())
    }

    fn apply_knobeln(self, t0: Instant) -> anyhow::Result<ExitCode> {
        let mut config = Config {
            database: self.dir.join("knobeln.db"),
            ..Config::default()
        };
        config.spool.dir = self.dir.join("spool");
        config.rules.throws = self.throws;
        config.site.dir = Some(self.dir.join("site"));
        config.site.no_game_pages = !self.game_pages;
        if let Some(bytes) = self.game_page_bytes {
            config.site.game_page_bytes = Some(bytes);
        }
        if let Some(jobs) = self.jobs {
            config.rules.jobs = jobs;
        }
        config.engine.nats = self.nats.clone();
        Spool::open(&config.spool.dir)?;
        let store = Store::open(&config.database)?;
        let teams = field(self.teams);
        let addr = config.contest.address.clone();
        let mut server = Server::new(config.clone(), store);

        eprintln!("{} teams register by mail ...", teams.len());
        for (i, t) in teams.iter().enumerate() {
            drop_mail(
                spool_dir(&config),
                &format!("{i:03}-registration.eml"),
                &registration_mail(t, &addr, i),
            )?;
        }
        if let Some(why) = server.cycle()?.take_in_failed {
            bail!("taking the demo's mails in: {why}");
        }
        let mut auths = Vec::new();
        for t in &teams {
            auths.push(acknowledged_auth(&server, &config, &t.address, &t.name)?);
        }
        eprintln!("... each sends its strategy by mail; the server compiles them ...");
        for (i, (t, auth)) in teams.iter().zip(&auths).enumerate() {
            drop_mail(
                spool_dir(&config),
                &format!("{i:03}-compile.eml"),
                &compile_mail(t, auth, &addr, i),
            )?;
        }
        if let Some(why) = server.cycle()?.take_in_failed {
            bail!("taking the demo's mails in: {why}");
        }
        let rejected: i64 = server.store.conn().query_row(
            "SELECT COUNT(*) FROM strategy_versions WHERE accepted = 0",
            [],
            |r| r.get(0),
        )?;
        if rejected > 0 {
            bail!("{rejected} demo strategies were rejected by the compile service (see spool/outgoing)");
        }
        // The demo's teams are the server's own: their random numbers
        // follow from the seed, so one seed plays the same demo again (a
        // real contest draws their key secretly, `knobeln contest`).
        eprintln!(
            "... the contest starts (seed {}: the same seed plays the same games):",
            self.seed
        );
        let tid = start(
            &mut server.store,
            &config,
            Some(self.seed),
            PlayersKey::FromSeed,
            Utc::now(),
        )?;
        let mut progress = Progress::new();
        run(&mut server.store, &config, &SystemClock, &mut progress)?;
        progress.finish();
        let flushed = server.flush()?;
        let res = results(&server.store, tid, vec![])?;

        let out = config.spool.dir.join("outgoing");
        outln!(
            "KNOBELN demo: {} teams, {} rounds, {:.0} s",
            teams.len(),
            res.rounds.len(),
            t0.elapsed().as_secs_f64()
        );
        outln!("  database:       {}", config.database.display());
        let taken: i64 = server
            .store
            .conn()
            .query_row("SELECT COUNT(*) FROM inbox", [], |r| r.get(0))?;
        outln!("  incoming mails: {taken} in the database's inbox (sealed once processed)");
        outln!(
            "  outgoing mails: {} ({} files)",
            out.display(),
            std::fs::read_dir(&out)?.count()
        );
        let mut kinds: Vec<(String, i64)> = {
            let mut st = server
                .store
                .conn()
                .prepare("SELECT kind, COUNT(*) FROM outbox GROUP BY kind ORDER BY kind")?;
            let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
            rows.collect::<Result<_, _>>()?
        };
        kinds.retain(|(_, n)| *n > 0);
        outln!(
            "  mails by kind:  {}",
            kinds
                .iter()
                .map(|(k, n)| format!("{k} {n}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        let _ = flushed;
        for r in &res.rounds {
            outln!(
                "  round {}{}: {} group(s) of {}, {} advance, {} disqualified",
                r.number,
                if r.is_final { " (final)" } else { "" },
                r.groups.len(),
                r.groups
                    .iter()
                    .map(|g| g.members.len().to_string())
                    .collect::<Vec<_>>()
                    .join("+"),
                r.advanced.len(),
                r.disqualified.len()
            );
            for d in &r.disqualified {
                outln!("    disqualified: {}: {}", d.team, d.reason);
            }
        }
        outln!("\nThe winners of the International KNOBELN contest:");
        for w in res.winners.iter().take(10) {
            outln!("  {:>3}. {:<24} {:>10}", w.place, w.team, w.points);
        }
        if let Some(evo) = &res.evolution {
            outln!(
                "\nThe winners of Knobeln Evolution ({} generations computed after the initial population):",
                evo.generations.len().saturating_sub(1)
            );
            for e in evo.ranking.iter().take(10) {
                outln!(
                    "  {:>3}. {:<24} {:>6.2} %",
                    e.place,
                    e.team,
                    100.0 * e.fraction
                );
            }
        }
        let teams_info = knobeln::contest::article::team_infos(&server.store, &res)?;
        let text = knobeln::contest::article::article(&knobeln::contest::article::ArticleInput {
            results: &res,
            teams: &teams_info,
            contest_name: &config.contest.name,
            contest_address: &config.contest.address,
            organizer_name: "the KNOBELN demo",
            now: Utc::now(),
        });
        let article_path = self.dir.join("results.txt");
        std::fs::write(&article_path, text)?;
        outln!(
            "\nThe results article (for rec.games.misc and misc.misc): {}",
            article_path.display()
        );
        outln!(
            "The results site: {}",
            self.dir.join("site/index.html").display()
        );
        Ok(ExitCode::SUCCESS)
    }
}

impl Demo {
    /// A contest of a bot discipline by mail: every demo bot is a team.
    fn apply_bots(self, t0: Instant) -> anyhow::Result<ExitCode> {
        let d = self.discipline;
        let mut config = bot_demo_config(&self.dir, d, self.games);
        config.engine.nats = self.nats.clone();
        Spool::open(&config.spool.dir)?;
        let store = Store::open(&config.database)?;
        let teams = knobeln::demo::bots::bot_teams(d);
        let addr = config.contest.address.clone();
        let mut server = Server::new(config.clone(), store);
        eprintln!("{} teams register by mail ...", teams.len());
        for (i, (t, _)) in teams.iter().enumerate() {
            drop_mail(
                spool_dir(&config),
                &format!("{i:03}-registration.eml"),
                &registration_mail(t, &addr, i),
            )?;
        }
        // The first team asks for the discipline's kit (rules, referee.py,
        // demo bots) as it registers.
        if let Some((t, _)) = teams.first() {
            drop_mail(
                spool_dir(&config),
                "900-kit.eml",
                &format!(
                    "From: {name} <{addr0}>\r\nTo: {addr}\r\nSubject: send kit\r\n\
                     Message-ID: <demo-kit@participants.example>\r\n\r\nThe kit, please.\r\n",
                    name = t.name,
                    addr0 = t.address
                ),
            )?;
        }
        server.cycle()?;
        let mut auths = Vec::new();
        for (t, _) in &teams {
            auths.push(acknowledged_auth(&server, &config, &t.address, &t.name)?);
        }
        eprintln!("... each sends its bot by mail; the server builds and tries them ...");
        for (i, ((t, bot), auth)) in teams.iter().zip(&auths).enumerate() {
            drop_mail(
                spool_dir(&config),
                &format!("{i:03}-compile.eml"),
                &knobeln::demo::bots::bot_compile_mail(t, auth, bot, &addr, i),
            )?;
        }
        server.cycle()?;
        let rejected: i64 = server.store.conn().query_row(
            "SELECT COUNT(*) FROM strategy_versions WHERE accepted = 0",
            [],
            |r| r.get(0),
        )?;
        if rejected > 0 {
            bail!("{rejected} demo bots were rejected by the compile service (see spool/outgoing)");
        }
        eprintln!(
            "... the contest of {} starts (seed {}):",
            d.title(),
            self.seed
        );
        let now = || Utc::now();
        let res = knobeln::contest::bots::run_contest(&mut server.store, &config, self.seed, &now)?;
        server.flush()?;
        let c = knobeln::contest::bots::contest(server.store.conn(), d)?
            .context("the contest was started")?;
        let games = knobeln::contest::bots::games_played(server.store.conn(), &c)?;
        let article = knobeln::contest::bots::article(&config.contest.name, d, &res, games);
        let article_path = self.dir.join("results.txt");
        std::fs::write(&article_path, &article)?;
        let site = self.dir.join("site");
        let written = knobeln::site::bots::write(&site, &server.store, &c, &config, &res)?;
        let out = config.spool.dir.join("outgoing");
        outln!(
            "{} demo: {} teams, {} games, {:.0} s",
            d.title(),
            teams.len(),
            games,
            t0.elapsed().as_secs_f64()
        );
        outln!("  database:       {}", config.database.display());
        outln!(
            "  outgoing mails: {} ({} files)",
            out.display(),
            std::fs::read_dir(&out)?.count()
        );
        outln!();
        out!("{}", knobeln::contest::bots::results_text(&res));
        outln!("\nThe results article: {}", article_path.display());
        outln!(
            "The results site: {} ({} games on {} pairing pages, {} with a page of their own)",
            site.join("index.html").display(),
            written.n_games,
            written.n_pairings,
            written.n_game_pages
        );
        Ok(ExitCode::SUCCESS)
    }
}

/// The embedded default with the demo's folder and a bot discipline,
/// scaled down so that the demo runs in well under two minutes here.
pub fn bot_demo_config(dir: &std::path::Path, d: Discipline, games: Option<u32>) -> Config {
    let mut config = Config {
        database: dir.join("knobeln.db"),
        ..Config::default()
    };
    config.spool.dir = dir.join("spool");
    config.contest.discipline = d;
    config.contest.name = knobeln::demo::bots::demo_contest_name(d).to_string();
    config.ultimatum.repetitions = games.unwrap_or(2);
    // A demo is small: every game keeps its transcript and has its page.
    config.site.transcripts_per_pairing = 1000;
    config.flooding.runs = games.unwrap_or(5);
    // The seed's 0.1 s a round is a contest machine's figure; on a busy
    // demo machine a wall-clock limit would make the results vary.
    config.flooding.round_ms = 2000;
    config.footsteps.games_per_pair = games.unwrap_or(10);
    config
}

/// The auth string from a team's registration acknowledgement, as the
/// team reads it in its mailbox (the spool's outgoing folder): the outbox
/// copy is sealed once delivered.
fn acknowledged_auth(
    server: &Server,
    config: &Config,
    address: &str,
    name: &str,
) -> anyhow::Result<String> {
    let id: Option<i64> = server
        .store
        .conn()
        .query_row(
            "SELECT id FROM outbox WHERE kind = 'registration_accepted' AND recipients = ?1",
            [serde_json::to_string(&vec![address])?],
            |r| r.get(0),
        )
        .ok();
    let body = id.and_then(|id| {
        std::fs::read(
            spool_dir(config)
                .join("outgoing")
                .join(format!("{id:06}-registration_accepted.eml")),
        )
        .ok()
    });
    let text = body
        .and_then(|raw| {
            mail_parser::MessageParser::default()
                .parse(&raw)
                .and_then(|m| m.body_text(0).map(|b| b.into_owned()))
        })
        .unwrap_or_default();
    auth_in(&text).with_context(|| format!("no acknowledgement for {name}"))
}

fn spool_dir(config: &Config) -> &std::path::Path {
    &config.spool.dir
}
