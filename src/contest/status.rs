//! Where the contest stands: the phase of the timeline, the teams with
//! their current versions, and what comes next (`knobeln status`).

use chrono::{DateTime, Utc};
use rusqlite::OptionalExtension;

use crate::config::Config;
use crate::store::mail::{all_registrations, contest};
use crate::store::{Store, StoreError};

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
    if let Some(c) = contest(store.conn())? {
        return Ok(if c.finished {
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

/// The status report.
pub fn report(store: &Store, config: &Config, now: DateTime<Utc>) -> Result<String, StoreError> {
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
    let regs = all_registrations(store.conn())?;
    out.push_str(&format!("{} registered team(s):\n", regs.len()));
    for r in &regs {
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
            Some((id, lex, at)) => out.push_str(&format!(
                "  {:<30} {:<32} version {id} ({} lexical elements, compiled {at})\n",
                r.team_name,
                r.mail_address,
                lex.unwrap_or(0)
            )),
            None => out.push_str(&format!(
                "  {:<30} {:<32} no compiled strategy yet\n",
                r.team_name, r.mail_address
            )),
        }
    }
    let queued: i64 = store.conn().query_row(
        "SELECT COUNT(*) FROM outbox WHERE state = 'queued'",
        [],
        |r| r.get(0),
    )?;
    let failed: i64 = store.conn().query_row(
        "SELECT COUNT(*) FROM inbox WHERE state = 'failed'",
        [],
        |r| r.get(0),
    )?;
    out.push_str(&format!(
        "\noutbox: {queued} mail(s) queued; inbox: {failed} mail(s) set aside\n"
    ));
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
