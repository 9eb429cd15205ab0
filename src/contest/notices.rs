//! Notices around the contest start: the "you have no strategy yet" mail to
//! registered teams without an accepted strategy (once per team, at
//! `timeline.no_strategy_reminder_minutes` before the compile service
//! closes), and the organizer's list at the start (who plays, who has no
//! strategy and does not).
//!
//! Both are queued with event keys under the outbox's unique index, so a
//! restart or a second server never sends one twice. Deciding *when* is the
//! pure [`reminder_due`]; this module sends nothing itself.

use chrono::{DateTime, Utc};
use serde_json::json;

use crate::config::{Config, Timeline};
use crate::mail::commands::date;
use crate::mail::texts::render;
use crate::outbox::outgoing::Outgoing;
use crate::outbox::{enqueue, Cause, EventKey, OutboxError};
use crate::store::admin::{teams_without_strategy, teams_without_strategy_not_told};
use crate::store::mail::teams_with_current_version;
use crate::store::Store;

/// The event key prefix of the reminder (the team id follows).
pub const REMINDER_KEY: &str = "no-strategy:team:";

/// Whether reminders go out at `now`: from the reminder time (which is
/// never before the compile service opens) until the service closes.
pub fn reminder_due(t: &Timeline, now: DateTime<Utc>) -> bool {
    if t.no_strategy_reminder_minutes <= 0 {
        return false;
    }
    let at = t.compile_end() - chrono::Duration::minutes(t.no_strategy_reminder_minutes);
    now >= at.max(t.compile_start) && now < t.compile_end()
}

/// Queues the "no strategy yet" mail to every registered team without an
/// accepted strategy that has not had it, if it is time (and the contest
/// has not started). Returns how many were queued.
pub fn queue_no_strategy_reminders(
    conn: &rusqlite::Connection,
    config: &Config,
    now: DateTime<Utc>,
) -> Result<usize, OutboxError> {
    let t = &config.timeline;
    if !reminder_due(t, now)
        || crate::store::mail::contest_started(conn, config.contest.discipline)?
    {
        return Ok(0);
    }
    let mut n = 0;
    for (team, name, address) in teams_without_strategy_not_told(conn, REMINDER_KEY)? {
        let body = render(
            "no_strategy",
            &json!({
                "team": name,
                "bots": config.contest.discipline.family().bots().is_some(),
                "contest_name": config.contest.name,
                "contest_address": config.contest.address,
                "organizer": config.contest.organizer,
                "compile_end": date(t.compile_end()),
                "contest_start": date(t.contest_start),
            }),
        )?;
        let mail = Outgoing {
            kind: "no_strategy",
            to: vec![address.clone()],
            subject: crate::mail::commands::contest_subject(
                config,
                format!(
                    "KNOBELN: your team {name} has no {} yet",
                    config.contest.discipline.family().player_word()
                ),
            ),
            body,
            in_reply_to: None,
            references: vec![],
            attachments: vec![],
        };
        let key = format!("{REMINDER_KEY}{}", team.0);
        let cause = Cause {
            event: EventKey::Unchecked(&key),
            ..Cause::default()
        };
        if enqueue(conn, &config.contest, &mail, cause, now)? {
            tracing::info!(team = %name, to = %address, "queued the no-strategy reminder");
            n += 1;
        }
    }
    Ok(n)
}

/// The organizer's list at the start: how many teams play, and which
/// registered teams have no accepted strategy and do not.
pub fn start_list(
    store: &Store,
    config: &Config,
    tournament: i64,
    now: DateTime<Utc>,
) -> Result<(), String> {
    let conn = store.conn();
    let n_entrants = teams_with_current_version(conn)
        .map_err(|e| e.to_string())?
        .len();
    let without: Vec<_> = teams_without_strategy(conn)
        .map_err(|e| e.to_string())?
        .into_iter()
        .map(|(name, address)| json!({ "name": name, "address": address }))
        .collect();
    let body = render(
        "organizer_start",
        &json!({
            "contest_name": config.contest.name,
            "tournament": tournament,
            "n_entrants": n_entrants,
            "n_without": without.len(),
            "without": without,
        }),
    )
    .map_err(|e| e.to_string())?;
    let mail = Outgoing {
        kind: "organizer_start",
        to: vec![config.contest.organizer.clone()],
        subject: format!(
            "KNOBELN server: the contest has started, {n_entrants} team(s) play, {} without a strategy",
            without.len()
        ),
        body,
        in_reply_to: None,
        references: vec![],
        attachments: vec![],
    };
    let key = format!("organizer-start:{tournament}");
    let cause = Cause {
        event: EventKey::Unchecked(&key),
        ..Cause::default()
    };
    enqueue(conn, &config.contest, &mail, cause, now).map_err(|e| e.to_string())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    fn timeline(reminder_minutes: i64) -> Timeline {
        Timeline {
            registration_start: at("1994-03-01T00:00:00Z"),
            compile_start: at("1994-03-23T00:00:00Z"),
            registration_deadline: at("1994-05-10T00:00:00Z"),
            contest_start: at("1994-05-14T12:00:00Z"),
            compile_closes_before_minutes: 120,
            no_strategy_reminder_minutes: reminder_minutes,
        }
    }

    #[test]
    fn the_reminder_is_due_from_its_time_until_the_compile_service_closes() {
        let t = timeline(24 * 60);
        assert!(!reminder_due(&t, at("1994-05-13T09:59:59Z")));
        assert!(reminder_due(&t, at("1994-05-13T10:00:00Z")));
        assert!(reminder_due(&t, at("1994-05-14T09:59:59Z")));
        assert!(!reminder_due(&t, at("1994-05-14T10:00:00Z")));
        assert!(!reminder_due(&timeline(0), at("1994-05-14T09:00:00Z")));
    }

    #[test]
    fn a_reminder_time_before_the_service_opens_waits_for_it() {
        let t = timeline(100 * 24 * 60);
        assert!(!reminder_due(&t, at("1994-03-22T23:59:59Z")));
        assert!(reminder_due(&t, at("1994-03-23T00:00:00Z")));
    }
}
