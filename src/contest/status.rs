//! Where the contest stands: the phase of the timeline, the teams with
//! their current versions, the mail the organizer must look after, what
//! comes next, and while the contest runs its progress: the round, groups
//! and games done, games per second, the estimated time left, and which
//! process plays it (`knobeln status`).
//!
//! The figures are computed by the pure [`progress`] from what the store
//! holds; nothing here asks a running server anything.

use crate::discipline::family::Family;
use chrono::{DateTime, Utc};
use rusqlite::OptionalExtension;

use crate::config::Config;
use crate::store::admin::{
    count_inbox, count_outbox, first_game_at, games_since, lease, rounds_progress, RoundProgress,
};
use crate::store::mail::{all_registrations, contest, OutState};
use crate::store::{Store, StoreError};
use crate::tournament::grouping::{group_sizes, is_final};

/// The window over which `status` measures games per second.
pub const RATE_WINDOW_SECS: i64 = 300;

/// How far a running contest is.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    pub round: u32,
    pub is_final: bool,
    pub n_groups: usize,
    pub n_groups_finished: usize,
    /// Game attempts stored in this round.
    pub n_games_played: u64,
    /// The games this round will have (each group's n(n+1)/2, or what a
    /// finished group actually played).
    pub n_games_round: u64,
    /// Game attempts stored in all rounds.
    pub n_games_played_all: u64,
    /// Estimated games of the rounds after this one (half of each group
    /// advancing).
    pub n_games_later: u64,
    /// Games per second over the window, when any game finished in it.
    pub games_per_sec: Option<f64>,
}

fn games_of_group(n: u64) -> u64 {
    n * (n + 1) / 2
}

/// The games of the rounds after one whose groups have these sizes,
/// assuming the top half of each group advances (ties can add a few).
pub fn later_games(group_members: &[u32], round_is_final: bool) -> u64 {
    if round_is_final {
        return 0;
    }
    let mut field: usize = group_members
        .iter()
        .map(|&n| (n as usize).div_ceil(2))
        .sum();
    let mut games = 0;
    loop {
        let sizes = group_sizes(field);
        games += sizes.iter().map(|&s| games_of_group(s as u64)).sum::<u64>();
        if is_final(field) || sizes.is_empty() {
            return games;
        }
        field = sizes.iter().map(|&s| s.div_ceil(2)).sum();
    }
}

/// Pure: the progress of the latest round, from the stored rounds and the
/// games finished within the last `window_secs`.
pub fn progress(rounds: &[RoundProgress], recent_games: u64, window_secs: f64) -> Option<Progress> {
    let current = rounds.last()?;
    let n_games_round = current
        .groups
        .iter()
        .map(|g| {
            let planned = games_of_group(g.n_members as u64);
            if g.finished {
                g.n_played as u64
            } else {
                planned.max(g.n_played as u64)
            }
        })
        .sum();
    let sizes: Vec<u32> = current.groups.iter().map(|g| g.n_members).collect();
    Some(Progress {
        round: current.number,
        is_final: current.is_final,
        n_groups: current.groups.len(),
        n_groups_finished: current.groups.iter().filter(|g| g.finished).count(),
        n_games_played: current.groups.iter().map(|g| g.n_played as u64).sum(),
        n_games_round,
        n_games_played_all: rounds
            .iter()
            .flat_map(|r| &r.groups)
            .map(|g| g.n_played as u64)
            .sum(),
        n_games_later: if current.finished {
            0
        } else {
            later_games(&sizes, current.is_final)
        },
        games_per_sec: (recent_games > 0 && window_secs > 0.0)
            .then(|| recent_games as f64 / window_secs),
    })
}

impl Progress {
    /// Seconds left in this round and in the whole contest (estimates).
    pub fn eta_secs(&self) -> Option<(f64, f64)> {
        let rate = self.games_per_sec?;
        let round_left = self.n_games_round.saturating_sub(self.n_games_played) as f64;
        Some((
            round_left / rate,
            (round_left + self.n_games_later as f64) / rate,
        ))
    }
}

/// `95 s`, `12 min 05 s`, `3 h 02 min`.
pub fn duration_words(secs: f64) -> String {
    let s = secs.max(0.0).round() as u64;
    if s < 60 {
        format!("{s} s")
    } else if s < 3600 {
        format!("{} min {:02} s", s / 60, s % 60)
    } else {
        format!("{} h {:02} min", s / 3600, (s % 3600) / 60)
    }
}

fn progress_section(
    store: &Store,
    tournament: i64,
    now: DateTime<Utc>,
) -> Result<String, StoreError> {
    let conn = store.conn();
    let rounds = rounds_progress(conn, tournament)?;
    let window = match first_game_at(conn, tournament)? {
        Some(first) => {
            (now - first)
                .num_milliseconds()
                .clamp(0, RATE_WINDOW_SECS * 1000) as f64
                / 1000.0
        }
        None => 0.0,
    };
    let recent = games_since(
        conn,
        tournament,
        now - chrono::Duration::seconds(RATE_WINDOW_SECS),
    )?;
    let mut out = String::new();
    if let Some((round, ends)) = crate::store::rsm::open_pause(conn, tournament)? {
        let until = ends
            .map(|e| format!(" until {}", e.format("%Y-%m-%d %H:%M UT")))
            .unwrap_or_default();
        out.push_str(&format!(
            "  PAUSED after round {round} for the organizer's summary{until}: \
             `knobeln rsm --round {round} FILE` (or the RSM mail with the token) \
             sends it and the contest goes on\n"
        ));
    }
    match progress(&rounds, recent, window) {
        None => out.push_str("  no round has started yet\n"),
        Some(p) => {
            out.push_str(&format!(
                "  round:            {}{}\n",
                p.round,
                if p.is_final { " (the final round)" } else { "" }
            ));
            out.push_str(&format!(
                "  groups finished:  {} / {}\n",
                p.n_groups_finished, p.n_groups
            ));
            out.push_str(&format!(
                "  games played:     {} / {} in this round ({} in all rounds)\n",
                p.n_games_played, p.n_games_round, p.n_games_played_all
            ));
            match (p.games_per_sec, p.eta_secs()) {
                (Some(rate), Some((round, all))) => {
                    out.push_str(&format!(
                        "  speed:            {rate:.1} games/s over the last {}\n",
                        duration_words(window)
                    ));
                    out.push_str(&format!(
                        "  time left:        this round about {}; the contest about {}{}\n",
                        duration_words(round),
                        duration_words(all),
                        if p.n_games_later > 0 {
                            format!(
                                " (later rounds estimated at {} games: half of each group advancing)",
                                p.n_games_later
                            )
                        } else {
                            String::new()
                        }
                    ));
                }
                _ => out.push_str(&format!(
                    "  speed:            no game finished in the last {}: is the contest being played?\n",
                    duration_words(RATE_WINDOW_SECS as f64)
                )),
            }
        }
    }
    match lease(conn)? {
        Some(l) if l.expires_at > now => out.push_str(&format!(
            "  played by:        {}, last heartbeat {} s ago\n",
            l.description,
            (now - l.renewed_at).num_seconds().max(0)
        )),
        Some(l) => out.push_str(&format!(
            "  played by:        nobody (the lease of {} expired at {}); \
             `knobeln serve` or `knobeln contest start` resumes it\n",
            l.description,
            l.expires_at.format("%Y-%m-%d %H:%M:%S UT")
        )),
        None => out.push_str(
            "  played by:        nobody; `knobeln serve` or `knobeln contest start` resumes it\n",
        ),
    }
    Ok(out)
}

/// The phases of the contest's timeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    BeforeRegistration,
    RegistrationOnly,
    RegistrationAndCompile,
    CompileOnly,
    Closed,
    Running,
    Finished,
}

impl Phase {
    pub fn describe(self) -> &'static str {
        match self {
            Phase::BeforeRegistration => "before the registration opens",
            Phase::RegistrationOnly => "registration open, compilation service not yet",
            Phase::RegistrationAndCompile => "registration and compilation service open",
            Phase::CompileOnly => "registration closed, compilation service open",
            Phase::Closed => "compilation service closed, the contest starts soon",
            Phase::Running => "the contest is running",
            Phase::Finished => "the contest is over",
        }
    }
}

pub fn phase(store: &Store, config: &Config, now: DateTime<Utc>) -> Result<Phase, StoreError> {
    // The contest of the discipline the server runs, in its family's table.
    let finished = crate::store::mail::contest_state(store.conn(), config.contest.discipline)?
        .map(|s| s == crate::store::mail::ContestState::Finished);
    if let Some(finished) = finished {
        return Ok(if finished {
            Phase::Finished
        } else {
            Phase::Running
        });
    }
    let t = &config.timeline;
    let reg = t.registration_open(now);
    let comp = t.compile_open(now);
    Ok(match (reg, comp) {
        _ if now < t.registration_start && !comp => Phase::BeforeRegistration,
        (true, true) => Phase::RegistrationAndCompile,
        (true, false) if now < t.compile_start => Phase::RegistrationOnly,
        (false, true) => Phase::CompileOnly,
        _ => Phase::Closed,
    })
}

/// The failed outgoing mails: recipient, subject, reason; the newest few.
fn failed_mails(conn: &rusqlite::Connection) -> Result<String, StoreError> {
    const SHOWN: usize = 5;
    let mut out = String::new();
    let failed = crate::store::admin::failed_outgoing(conn)?;
    for f in failed.iter().rev().take(SHOWN) {
        let clip = |s: &str, n: usize| -> String {
            let s: String = s.chars().filter(|c| !c.is_control()).collect();
            if s.chars().count() > n {
                format!("{}...", s.chars().take(n).collect::<String>())
            } else {
                s
            }
        };
        out.push_str(&format!(
            "  failed: outbox {} to {}: {:?}\n          {}\n",
            f.id,
            clip(&f.recipients.join(", "), 60),
            clip(&f.subject, 60),
            clip(f.last_error.as_deref().unwrap_or("-"), 100)
        ));
    }
    if failed.len() > SHOWN {
        out.push_str(&format!(
            "  ... {} more (knobeln admin failed-mail)\n",
            failed.len() - SHOWN
        ));
    }
    Ok(out)
}

/// The mails dropped as unanswerable, and the organizer's digest.
fn dropped_and_digest(
    conn: &rusqlite::Connection,
    config: &Config,
    now: DateTime<Utc>,
) -> Result<String, StoreError> {
    use crate::mail::digest::DIGEST_KIND;
    use crate::mail::process::DROPPED_UNANSWERABLE;
    let mut out = String::new();
    let dropped: u64 = conn.query_row(
        "SELECT COUNT(*) FROM inbox WHERE state = 'ignored' AND substr(outcome, 1, length(?1)) = ?1",
        [DROPPED_UNANSWERABLE],
        |r| r.get(0),
    )?;
    if dropped > 0 {
        out.push_str(&format!(
            "  {dropped} mail(s) dropped: unanswerable sender (kept, not answered)\n"
        ));
    }
    // A flood past the strangers' budget (`mail::admission`).
    let since = now - chrono::Duration::days(1);
    let keys = crate::store::mail::keys_kept_since(conn, since)?;
    let (unkept, unkept_bytes) = crate::store::mail::unkept_since(conn, since)?;
    if keys > 0 || unkept > 0 {
        out.push_str(&format!(
            "  past their budget in 24 hours: {keys} mail(s) kept as their keys only, \
             {unkept} not stored ({unkept_bytes} bytes; since the start of yesterday, UTC)\n"
        ));
    }
    let pending = crate::store::mail::unreported_failures(conn, DIGEST_KIND)?.len()
        + crate::store::mail::unreported_set_aside(conn)?.len();
    let last = crate::store::mail::last_queued_at(conn, DIGEST_KIND)?;
    out.push_str(&format!(
        "digest: {}; {pending} failure(s) waiting for the next (to {}, at most one per {} min)\n",
        match last {
            Some(t) => format!(
                "last sent to the organizer {}",
                t.format("%Y-%m-%d %H:%M UT")
            ),
            None => "none sent yet".to_string(),
        },
        config.contest.organizer,
        config.limits.digest_interval_minutes
    ));
    Ok(out)
}

/// The status report.
/// How many teams `knobeln status` lists one by one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TeamList {
    /// Every team up to [`TEAMS_LISTED`]; above it a summary line.
    UpTo,
    /// Every team (`--teams`).
    All,
}

/// Teams listed one by one unless `--teams` asks for all.
pub const TEAMS_LISTED: usize = 40;

pub fn report(
    store: &Store,
    config: &Config,
    now: DateTime<Utc>,
    teams: TeamList,
) -> Result<String, StoreError> {
    let t = &config.timeline;
    let p = phase(store, config, now)?;
    let mut out = format!("{} -- phase: {}\n\n", config.contest.name, p.describe());
    let d = |x: DateTime<Utc>| x.format("%Y-%m-%d %H:%M UT").to_string();
    out.push_str(&format!(
        "  registration opens:          {}\n",
        d(t.registration_start)
    ));
    out.push_str(&format!(
        "  compilation service opens:   {}\n",
        d(t.compile_start)
    ));
    out.push_str(&format!(
        "  registration deadline:       {}\n",
        d(t.registration_deadline)
    ));
    out.push_str(&format!(
        "  compilation service closes:  {}\n",
        d(t.compile_end())
    ));
    out.push_str(&format!(
        "  the contest starts:          {}\n\n",
        d(t.contest_start)
    ));
    if let Family::Bots(_) = config.contest.discipline.family() {
        match crate::contest::bots::status_text(store, config) {
            Ok(Some(t)) => {
                out.push_str(&t);
                out.push('\n');
            }
            Ok(None) => {}
            Err(e) => return Err(StoreError::Corrupt(e.to_string())),
        }
    }
    let regs = all_registrations(store.conn())?;
    let listed = match teams {
        TeamList::All => regs.len(),
        TeamList::UpTo if regs.len() <= TEAMS_LISTED => regs.len(),
        TeamList::UpTo => 0,
    };
    if listed < regs.len() {
        let with: i64 = store.conn().query_row(
            "SELECT COUNT(DISTINCT team_id) FROM strategy_versions WHERE accepted = 1",
            [],
            |r| r.get(0),
        )?;
        out.push_str(&format!(
            "{} registered team(s): {with} with an accepted version, {} without \
             (each one: knobeln status --teams)\n",
            regs.len(),
            regs.len() as i64 - with
        ));
    } else {
        out.push_str(&format!("{} registered team(s):\n", regs.len()));
    }
    for r in &regs[..listed] {
        let v: Option<(i64, Option<i64>, String)> = store
            .conn()
            .query_row(
                "SELECT id, lexical_elements, compiled_at FROM strategy_versions
                 WHERE team_id = ?1 AND accepted = 1 ORDER BY id DESC LIMIT 1",
                [r.team.0],
                |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
            )
            .optional()?;
        match v {
            Some((id, Some(lex), at)) => out.push_str(&format!(
                "  {:<30} {:<32} version {id} ({lex} lexical elements, compiled {at})\n",
                r.team_name, r.mail_address,
            )),
            // A bot: no lexical elements are counted.
            Some((id, None, at)) => out.push_str(&format!(
                "  {:<30} {:<32} version {id} (built {at})\n",
                r.team_name, r.mail_address,
            )),
            None => out.push_str(&format!(
                "  {:<30} {:<32} no compiled strategy yet\n",
                r.team_name, r.mail_address
            )),
        }
    }
    let conn = store.conn();
    let (queued, failed) = (
        count_outbox(conn, OutState::Queued)?,
        count_outbox(conn, OutState::Failed)?,
    );
    let (waiting, set_aside) = (count_inbox(conn, "new")?, count_inbox(conn, "failed")?);
    out.push_str(&format!(
        "\noutbox: {queued} mail(s) queued, {failed} failed{}\n",
        if failed > 0 {
            " (knobeln admin failed-mail)"
        } else {
            ""
        }
    ));
    out.push_str(&failed_mails(conn)?);
    let compiles = crate::mail::process::pending_compiles(
        store,
        config,
        crate::mail::process::Classified::Counted,
    )?
    .len();
    out.push_str(&format!(
        "inbox:  {waiting} mail(s) waiting ({compiles} of them compile requests, for `serve`'s \
         {} compile worker(s)), {set_aside} set aside{}\n",
        config.limits.compiles_at_once,
        if set_aside > 0 {
            " (knobeln admin set-aside)"
        } else {
            ""
        }
    ));
    out.push_str(&dropped_and_digest(conn, config, now)?);
    for o in crate::store::mail::outages(conn)? {
        out.push_str(&format!(
            "{} FAILS since {}: {} (`serve`'s log has more)\n",
            o.side, o.since, o.cause
        ));
    }
    for s in crate::store::mail::contest_stops(conn, crate::store::mail::StopsWanted::All)? {
        out.push_str(&format!(
            "the contest STOPPED {} time(s) since {} (latest {}): {} (`serve` resumes it \
             every cycle)\n",
            s.times, s.since, s.last, s.cause
        ));
    }
    if let Some(c) = contest(conn)? {
        out.push_str(&format!(
            "\nthe contest (tournament {}){}:\n",
            c.tournament_id,
            if c.finished { ", finished" } else { "" }
        ));
        out.push_str(&progress_section(store, c.tournament_id, now)?);
    }
    let next = match p {
        Phase::BeforeRegistration => format!("registration opens on {}", d(t.registration_start)),
        Phase::RegistrationOnly => {
            format!("the compilation service opens on {}", d(t.compile_start))
        }
        Phase::RegistrationAndCompile => format!(
            "the registration deadline is {}",
            d(t.registration_deadline)
        ),
        Phase::CompileOnly => format!("the compilation service closes on {}", d(t.compile_end())),
        Phase::Closed => format!(
            "the contest starts on {} (or now: knobeln contest start)",
            d(t.contest_start)
        ),
        Phase::Running => {
            "the tournament runs; `knobeln serve` sends the mails as events happen".into()
        }
        Phase::Finished => "publish the results: knobeln results".into(),
    };
    out.push_str(&format!("next: {next}\n"));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::admin::GroupProgress;

    fn group(number: u32, n_members: u32, finished: bool, n_played: u32) -> GroupProgress {
        GroupProgress {
            number,
            n_members,
            finished,
            n_played,
        }
    }

    #[test]
    fn progress_counts_groups_and_games_and_estimates_the_rest() {
        // 100 teams: groups of 34, 33, 33; the first finished with one
        // rescheduled game, the second half way.
        let round = RoundProgress {
            number: 1,
            n_field: 100,
            is_final: false,
            finished: false,
            groups: vec![
                group(1, 34, true, 596),
                group(2, 33, false, 280),
                group(3, 33, false, 0),
            ],
        };
        let p = progress(&[round], 120, 60.0).unwrap();
        assert_eq!((p.n_groups_finished, p.n_groups), (1, 3));
        assert_eq!(p.n_games_played, 876);
        assert_eq!(p.n_games_round, 596 + 561 + 561);
        // Then 17 + 17 + 17 = 51 teams: groups of 26 and 25 (351 + 325
        // games), then 13 + 13 = 26 teams in the final (351 games).
        assert_eq!(p.n_games_later, 351 + 325 + 351);
        assert_eq!(p.games_per_sec, Some(2.0));
        let (round_left, all_left) = p.eta_secs().unwrap();
        assert_eq!(round_left, (1718.0 - 876.0) / 2.0);
        assert_eq!(all_left, (1718.0 - 876.0 + 1027.0) / 2.0);
    }

    #[test]
    fn without_recent_games_there_is_no_rate_and_no_eta() {
        let round = RoundProgress {
            number: 3,
            n_field: 20,
            is_final: true,
            finished: false,
            groups: vec![group(1, 20, false, 10)],
        };
        let p = progress(&[round], 0, 300.0).unwrap();
        assert_eq!(p.games_per_sec, None);
        assert_eq!(p.eta_secs(), None);
        assert_eq!(p.n_games_later, 0);
        assert!(progress(&[], 5, 10.0).is_none());
    }

    #[test]
    fn durations_read_like_words() {
        assert_eq!(duration_words(59.4), "59 s");
        assert_eq!(duration_words(725.0), "12 min 05 s");
        assert_eq!(duration_words(10_920.0), "3 h 02 min");
    }
}
