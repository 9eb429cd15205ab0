//! `status`: a team asks for what the server knows of it. The body holds
//! the line `<<FROM>> team_name auth_string` (as the first comment of a
//! strategy does); a wrong team or string gets the same refusal as
//! `please compile`. The reply goes to the team's registered address (and
//! to the sender, if different): the registration record, the version that
//! plays with the report of its compilation (without the trial game, which
//! is not stored), a later rejected submission if there is one, and the
//! dates that matter. It never repeats the authentification string.

use rusqlite::Connection;
use serde_json::{json, Value};

use super::context::Budget;
use super::context::{auth_refusal, authenticate, credentials, date, Credentials, Ctx, Effect};
use super::error::CommandError;
use crate::mail::texts::render;
use crate::report::ReportNotes;
use crate::store::admin::{latest_versions, parse_timestamp, registered_at, VersionInfo};
use crate::store::StoreError;
use crate::toolchain::compile::{verdict_words, Builder, Verdict};
use crate::toolchain::diagnostic::Check;
use crate::tournament::TeamId;

/// A refusal of a command that needs `<<FROM>>` (status, mail-preference):
/// the same words as `please compile` uses for a wrong team or string.
pub fn refused(
    ctx: &Ctx<'_>,
    kind: &'static str,
    subject: &str,
    reason: &str,
    problems: &[String],
    hint: Option<&str>,
    outcome: String,
) -> Result<Effect, CommandError> {
    let body = render(
        "refused",
        &json!({
            "subject": subject,
            "reason": reason,
            "problems": problems,
            "hint": hint,
        }),
    )?;
    Ok(Effect {
        budget: Budget::Strangers,
        state: "done",
        outcome,
        replies: vec![ctx.reply(kind, format!("KNOBELN {subject}: not carried out"), body)],
    })
}

/// The refusal for a mail without a `<<FROM>>` line.
pub fn no_credentials(
    ctx: &Ctx<'_>,
    kind: &'static str,
    subject: &str,
) -> Result<Effect, CommandError> {
    refused(
        ctx,
        kind,
        subject,
        "The mail has no line <<FROM>> team_name auth_string.",
        &[],
        Some("Put that line into the body of the mail, with your team name and authentification string exactly as in the acknowledgement of your registration."),
        "no <<FROM>> line".into(),
    )
}

/// The refusal for a team name and auth string that do not match
/// ([`auth_refusal`]: a withdrawn team's own string is told so).
pub fn not_authentic(
    conn: &Connection,
    ctx: &Ctx<'_>,
    kind: &'static str,
    subject: &str,
    cred: &Credentials,
) -> Result<Effect, CommandError> {
    let why = auth_refusal(conn, ctx.config, &cred.team, &cred.auth)?;
    refused(
        ctx,
        kind,
        subject,
        &why.what,
        &[],
        Some(&why.hint),
        "authentication failed".into(),
    )
}

/// The report of a stored version, as the compile service mailed it but
/// without the trial game.
pub fn stored_report(report_json: &str, accepted: bool) -> Result<String, CommandError> {
    let v: Value = serde_json::from_str(report_json)
        .map_err(|e| StoreError::Corrupt(format!("stored compile report: {e}")))?;
    // A bot's report (a bot discipline) is stored as the text it was mailed as.
    if v["bot"] == true {
        return Ok(v["text"].as_str().unwrap_or("").to_string());
    }
    let check_of = |name: &Value| {
        Check::ALL
            .into_iter()
            .enumerate()
            .find(|(_, c)| serde_json::to_value(c).ok().as_ref() == Some(name))
    };
    let label = |name: &Value| match check_of(name) {
        Some((i, c)) => format!("check {} ({})", i + 1, c.title()),
        None => format!("check {name}"),
    };
    let failed_builder = v["failed_builder"].as_str().and_then(Builder::from_name);
    let checks: Vec<Value> = v["checks"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            let (number, title, check) = match check_of(&c["check"]) {
                Some((i, ch)) => (i + 1, ch.title().to_string(), Some(ch)),
                None => (0, c["check"].to_string(), None),
            };
            let verdict = match c["verdict"].as_str().unwrap_or("") {
                "passed" => "passed".to_string(),
                "failed" => match (check, failed_builder) {
                    (Some(ch), b) => verdict_words(ch, &Verdict::Failed, b),
                    (None, _) => "FAILED".to_string(),
                },
                "skipped" => format!("not checked ({})", c["why"].as_str().unwrap_or("")),
                _ => "not required here".to_string(),
            };
            json!({ "number": number, "title": title, "verdict": verdict })
        })
        .collect();
    let diagnostics = |severity: &str| -> Vec<String> {
        v["diagnostics"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|d| d["severity"] == severity)
            .map(|d| {
                let message = d["message"].as_str().unwrap_or("");
                match d["line"].as_u64() {
                    Some(l) => format!("{}: line {l}: {message}", label(&d["check"])),
                    None => format!("{}: {message}", label(&d["check"])),
                }
            })
            .collect()
    };
    let notes = ReportNotes::default();
    Ok(render(
        "check_report",
        &json!({
            "accepted": accepted,
            "accepted_note": notes.accepted,
            "rejected_note": notes.rejected,
            "team": v["header"]["team"].as_str(),
            "lexical_elements": v["lexical_elements"].as_u64(),
            "max_lexical_elements": crate::toolchain::compile::CompileConfig::default().max_lexical_elements,
            "checks": checks,
            "errors": diagnostics("error"),
            "warnings": diagnostics("warning"),
            "compiler_heading": crate::toolchain::compile::compiler_heading(
                v["compiler_output"].as_str().unwrap_or("")
            ),
            "compiler_output": v["compiler_output"].as_str().unwrap_or("").trim_end(),
            "trial": null,
        }),
    )?)
}

fn when(stored: &str) -> String {
    parse_timestamp(stored)
        .map(date)
        .unwrap_or_else(|_| stored.to_string())
}

/// A version as the status mail shows it: its number is the team's own
/// (1, 2, … in the order the team sent them), not the database's id.
fn version_view(
    conn: &Connection,
    team: TeamId,
    v: &VersionInfo,
    with_report: bool,
) -> Result<Value, CommandError> {
    let sent: Vec<(u32, i64)> = {
        let mut st = conn.prepare("SELECT id FROM strategy_versions WHERE team_id = ?1")?;
        let ids = st.query_map([team.0], |r| r.get::<_, i64>(0))?;
        ids.map(|id| id.map(|id| (team.0, id)))
            .collect::<Result<_, _>>()?
    };
    let number = crate::words::version_numbers(&sent)
        .get(&v.id)
        .copied()
        .unwrap_or(0);
    Ok(json!({
        "number": number,
        "compiled_at": when(&v.compiled_at),
        "report": if with_report {
            Some(stored_report(&v.report, v.accepted)?.trim_end().to_string())
        } else {
            None
        },
    }))
}

/// The contest's phase as the status mail tells it: the contest of the
/// discipline the server runs (`store::mail::contest_state`: KNOBELN's
/// `contest` row, a bot discipline's `bot_contests` row of that
/// discipline; another discipline's contest in the database says nothing).
fn phase(
    conn: &Connection,
    discipline: crate::discipline::Discipline,
    now: chrono::DateTime<chrono::Utc>,
    t: &crate::config::Timeline,
) -> Result<&'static str, CommandError> {
    use crate::store::mail::ContestState;
    Ok(match crate::store::mail::contest_state(conn, discipline)? {
        Some(ContestState::Finished) => "it is over",
        Some(ContestState::Running) => "it is running",
        None if now < t.compile_start => "the compilation service is not open yet",
        None if now < t.compile_end() => "the compilation service is open",
        None => "the compilation service is closed; the contest starts soon",
    })
}

pub fn apply(conn: &Connection, ctx: &Ctx<'_>) -> Result<Effect, CommandError> {
    const SUBJECT: &str = "status";
    let body = ctx.mail.body.text().unwrap_or("");
    let Some(cred) = credentials(body) else {
        return no_credentials(ctx, "status_refused", SUBJECT);
    };
    let Some(reg) = authenticate(conn, &cred.team, &cred.auth)? else {
        return not_authentic(conn, ctx, "status_refused", SUBJECT, &cred);
    };
    let (current, latest) = latest_versions(conn, reg.team)?;
    let newer_rejected = match (&current, &latest) {
        (Some(c), Some(l)) if l.id > c.id => Some(version_view(conn, reg.team, l, false)?),
        (None, Some(l)) => Some(version_view(conn, reg.team, l, false)?),
        _ => None,
    };
    let t = &ctx.config.timeline;
    let family = ctx.config.contest.discipline.family();
    let bots = family.bots().is_some();
    let phase = phase(conn, ctx.config.contest.discipline, ctx.now, t)?;
    let text = render(
        "status",
        &json!({
            "bots": bots,
            // What the contest's mails are: a bot contest mails transcripts
            // (DGP) and the results per opponent (GRP), and the final
            // results to every team that took part.
            "choices": family.mail_choices(),
            "team": reg.team_name,
            "contest_name": ctx.config.contest.name,
            "now": date(ctx.now),
            "registered_at": registered_at(conn, reg.team)?.map(|s| when(&s)).unwrap_or_default(),
            "record": reg.record,
            "preferences": reg.preferences,
            "current": current
                .as_ref()
                .map(|c| version_view(conn, reg.team, c, true))
                .transpose()?,
            "newer_rejected": newer_rejected,
            "compile_end": date(t.compile_end()),
            "contest_start": date(t.contest_start),
            "phase": phase,
        }),
    )?;
    let mut to = vec![reg.mail_address.clone()];
    if !ctx.reply_to.eq_ignore_ascii_case(&reg.mail_address) {
        to.push(ctx.reply_to.clone());
    }
    Ok(Effect {
        budget: Budget::Team(reg.team),
        state: "done",
        outcome: format!("status asked for by team {}", reg.team_name),
        replies: vec![ctx.reply_to_addresses(
            "status",
            to,
            format!("KNOBELN status of team {}", reg.team_name),
            text,
        )],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discipline::Discipline;

    /// A bot contest lives in `bot_contests`, not in KNOBELN's `contest`
    /// table: once it has started, status says it runs; once finished,
    /// that it is over (before, it said neither, whatever the contest did).
    #[test]
    fn status_tells_a_bot_contests_phase_from_its_own_table() {
        let store = crate::store::Store::open_in_memory().unwrap();
        let conn = store.conn();
        let t = crate::config::Config::default().timeline;
        let later = t.compile_end() + chrono::Duration::days(1);
        assert_eq!(
            phase(conn, Discipline::FLOODING, later, &t).unwrap(),
            "the compilation service is closed; the contest starts soon"
        );
        crate::testing::a_bot_contest_runs(conn);
        assert_eq!(
            phase(conn, Discipline::FLOODING, later, &t).unwrap(),
            "it is running"
        );
        conn.execute("UPDATE bot_contests SET state = 'finished'", [])
            .unwrap();
        assert_eq!(
            phase(conn, Discipline::FLOODING, later, &t).unwrap(),
            "it is over"
        );
        // KNOBELN's phase still comes from its own table; another bot
        // discipline's from its own row (none here).
        assert_eq!(
            phase(conn, Discipline::KNOBELN, later, &t).unwrap(),
            "the compilation service is closed; the contest starts soon"
        );
        assert_eq!(
            phase(conn, Discipline::MORABARABA, later, &t).unwrap(),
            "the compilation service is closed; the contest starts soon"
        );
    }

    /// A stored report whose check 5 failed in clang after gcc passed says
    /// so in the status mail too, as the compile report did.
    #[test]
    fn a_stored_report_names_the_tool_that_failed_check_5() {
        let stored = |builder: Option<&str>| {
            let mut v = json!({
                "checks": [
                    {"check": "compiler", "verdict": "failed"},
                    {"check": "library", "verdict": "skipped", "why": "check 5 failed"},
                ],
                "diagnostics": [],
                "compiler_output": "",
            });
            if let Some(b) = builder {
                v["failed_builder"] = json!(b);
            }
            stored_report(&v.to_string(), false).unwrap()
        };
        let words = |t: String| t.split_whitespace().collect::<Vec<_>>().join(" ");
        let clang = words(stored(Some("clang")));
        assert!(
            clang.contains("5. compilation with gcc: passed by gcc; FAILED when clang built"),
            "{clang}"
        );
        let gcc = words(stored(None));
        assert!(gcc.contains("5. compilation with gcc: FAILED 6."), "{gcc}");
    }
}
