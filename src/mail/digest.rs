//! The organizer's digest: nothing is lost in silence. Outgoing mails the
//! server gave up on (a 554 from the relay, too many attempts), incoming
//! mails set aside after failed processing and the causes that stopped the
//! contest before its end (a game the engine could not referee after its
//! tries) reach the organizer in *one* mail, not one per failure: at most one digest per
//! `limits.digest_interval_minutes` (the first at once), listing each
//! failed mail (recipient, subject, reason) and each set-aside mail (why,
//! and the `knobeln admin` command that processes it again), and counting
//! the mails dropped because their sender cannot be answered.
//!
//! Each reported item is marked in the same transaction that queues the
//! digest, so it is reported once. A digest that fails itself is never
//! reported in a later digest (no loop): it shows in `knobeln status` and
//! `knobeln admin failed-mail` like any failed mail.
//!
//! [`compose`] and [`due`] are pure; [`queue_if_due`] reads and writes the
//! store. Deliberately not here: sending (the digest goes out through the
//! outbox like every mail).

use chrono::{DateTime, Duration, Utc};
use serde_json::json;

use super::message::sender_and_subject;
use super::process::{ProcessError, DROPPED_UNANSWERABLE};
use super::texts::render;
use crate::config::Config;
use crate::outbox::outgoing::Outgoing;
use crate::outbox::{enqueue, Cause};
use crate::store::mail::{
    contest_stops, count_unreported_dropped, last_queued_at, mark_contest_stops_reported,
    mark_reported, unreported_failures, unreported_set_aside, ContestStop, StopsWanted,
    UnreportedFailure,
};

/// The outbox kind of the digest.
pub const DIGEST_KIND: &str = "organizer_digest";

/// At most this many items of each list are spelled out in one digest
/// (all are counted and marked reported; `knobeln admin` lists them all).
pub const MAX_LISTED: usize = 50;

/// A set-aside incoming mail as the digest shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetAsideItem {
    pub id: i64,
    pub origin: String,
    pub from: String,
    pub subject: String,
    pub why: String,
}

/// What a digest reports.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Items {
    pub failed: Vec<UnreportedFailure>,
    pub set_aside: Vec<SetAsideItem>,
    /// Mails dropped since the last digest because their sender cannot be
    /// answered (counted, never a reason for a digest of their own).
    pub n_dropped: u64,
    /// Causes that stopped the contest before its end.
    pub contest_stops: Vec<ContestStop>,
}

impl Items {
    /// Whether there is something the organizer must look after.
    pub fn needs_digest(&self) -> bool {
        !self.failed.is_empty() || !self.set_aside.is_empty() || !self.contest_stops.is_empty()
    }
}

/// Pure: a digest is due when something is to be reported and the last
/// digest is at least `interval` old (or there was none).
pub fn due(
    items: &Items,
    last_digest: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
    interval: Duration,
) -> bool {
    items.needs_digest() && last_digest.is_none_or(|t| now - t >= interval)
}

fn one_line(s: &str, max: usize) -> String {
    let s: String = s
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .filter(|c| !c.is_control())
        .collect();
    if s.chars().count() > max {
        format!("{}...", s.chars().take(max).collect::<String>())
    } else {
        s
    }
}

fn interval_words(minutes: u32) -> String {
    match minutes {
        0 => "cycle".to_string(),
        1 => "minute".to_string(),
        m if m % 60 == 0 && m >= 120 => format!("{} hours", m / 60),
        60 => "hour".to_string(),
        m => format!("{m} minutes"),
    }
}

/// Pure: the digest mail.
pub fn compose(items: &Items, config: &Config) -> Result<Outgoing, handlebars::RenderError> {
    let failed: Vec<_> = items
        .failed
        .iter()
        .take(MAX_LISTED)
        .map(|f| {
            json!({
                "id": f.id,
                "kind": f.kind,
                "to": one_line(&f.recipients.join(", "), 200),
                "subject": one_line(&f.subject, 200),
                "reason": one_line(f.last_error.as_deref().unwrap_or("(no reason recorded)"), 500),
            })
        })
        .collect();
    let set_aside: Vec<_> = items
        .set_aside
        .iter()
        .take(MAX_LISTED)
        .map(|m| {
            json!({
                "id": m.id,
                "origin": one_line(&m.origin, 200),
                "from": one_line(&m.from, 200),
                "subject": one_line(&m.subject, 200),
                "why": one_line(&m.why, 500),
            })
        })
        .collect();
    let stops: Vec<_> = items
        .contest_stops
        .iter()
        .take(MAX_LISTED)
        .map(|s| {
            json!({
                "cause": one_line(&s.cause, 1000),
                "since": s.since,
                "last": s.last,
                "times": s.times,
            })
        })
        .collect();
    let body = render(
        "organizer_digest",
        &json!({
            "contest_name": config.contest.name,
            "n_stops": items.contest_stops.len(),
            "stops": stops,
            "n_failed": items.failed.len(),
            "failed": failed,
            "more_failed": items.failed.len().saturating_sub(MAX_LISTED),
            "n_set_aside": items.set_aside.len(),
            "set_aside": set_aside,
            "more_set_aside": items.set_aside.len().saturating_sub(MAX_LISTED),
            "n_dropped": items.n_dropped,
            "interval": interval_words(config.limits.digest_interval_minutes),
        }),
    )?;
    Ok(Outgoing {
        kind: DIGEST_KIND,
        to: vec![config.contest.organizer.clone()],
        subject: format!(
            "KNOBELN server: {}{} undelivered, {} set aside",
            if items.contest_stops.is_empty() {
                ""
            } else {
                "the contest stopped; "
            },
            items.failed.len(),
            items.set_aside.len()
        ),
        body,
        in_reply_to: None,
        references: vec![],
        attachments: vec![],
    })
}

/// Reads what is to be reported from the store (the dropped mails are
/// counted only when there is something else to report).
pub fn items(conn: &rusqlite::Connection, config: &Config) -> Result<Items, ProcessError> {
    let failed = unreported_failures(conn, DIGEST_KIND)?;
    let set_aside = unreported_set_aside(conn)?
        .into_iter()
        .map(|m| {
            let (from, subject) = sender_and_subject(&m.head, &config.contest.loop_id);
            SetAsideItem {
                id: m.id,
                origin: m.origin,
                from,
                subject,
                why: m.why,
            }
        })
        .collect();
    let mut items = Items {
        failed,
        set_aside,
        n_dropped: 0,
        contest_stops: contest_stops(conn, StopsWanted::Unreported)?,
    };
    // Counted only for a digest (a scan of the ignored mails).
    if items.needs_digest() {
        items.n_dropped = count_unreported_dropped(conn, DROPPED_UNANSWERABLE)?;
    }
    Ok(items)
}

/// Queues the digest when one is due, marking what it reports, in one
/// transaction. Returns how many failed and set-aside mails it reports
/// (`None`: no digest now).
pub fn queue_if_due(
    conn: &rusqlite::Connection,
    config: &Config,
    now: DateTime<Utc>,
) -> Result<Option<usize>, ProcessError> {
    let tx = conn.unchecked_transaction()?;
    let items = items(&tx, config)?;
    let interval = Duration::minutes(config.limits.digest_interval_minutes as i64);
    if !due(&items, last_queued_at(&tx, DIGEST_KIND)?, now, interval) {
        return Ok(None);
    }
    let mail = compose(&items, config)?;
    enqueue(&tx, &config.contest, &mail, Cause::default(), now)?;
    let outbox: Vec<i64> = items.failed.iter().map(|f| f.id).collect();
    let inbox: Vec<i64> = items.set_aside.iter().map(|m| m.id).collect();
    mark_reported(&tx, &outbox, &inbox, DROPPED_UNANSWERABLE, now)?;
    mark_contest_stops_reported(&tx)?;
    tx.commit()?;
    Ok(Some(outbox.len() + inbox.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failure(id: i64) -> UnreportedFailure {
        UnreportedFailure {
            id,
            kind: "registration_accepted".into(),
            recipients: vec!["joe@nowhere.example".into()],
            subject: "KNOBELN: registration accepted".into(),
            last_error: Some("554 5.7.1 Relay access denied".into()),
        }
    }

    #[test]
    fn a_digest_is_due_once_per_interval_and_only_with_something_to_report() {
        let t0 = DateTime::parse_from_rfc3339("1994-05-14T10:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let hour = Duration::hours(1);
        let none = Items::default();
        let some = Items {
            failed: vec![failure(1)],
            ..Items::default()
        };
        let dropped_only = Items {
            n_dropped: 5,
            ..Items::default()
        };
        assert!(!due(&none, None, t0, hour));
        assert!(!due(&dropped_only, None, t0, hour));
        assert!(due(&some, None, t0, hour));
        assert!(!due(&some, Some(t0), t0 + Duration::minutes(59), hour));
        assert!(due(&some, Some(t0), t0 + hour, hour));
    }

    #[test]
    fn the_digest_lists_every_failure_with_its_reason_and_the_commands() {
        let config = Config::default();
        let items = Items {
            failed: vec![failure(7)],
            set_aside: vec![SetAsideItem {
                id: 3,
                origin: "imap:INBOX".into(),
                from: "ann@x.example".into(),
                subject: "please compile".into(),
                why: "set aside: processing panicked".into(),
            }],
            n_dropped: 2,
            contest_stops: vec![ContestStop {
                cause: "game round 1, group 1, slot 3 could not be refereed (3 tries): the \
                        watchdog stopped a strategy"
                    .into(),
                since: "1994-05-14T10:00:00Z".into(),
                last: "1994-05-14T10:02:00Z".into(),
                times: 4,
            }],
        };
        let m = compose(&items, &config).unwrap();
        assert!(m.subject.contains("the contest stopped"), "{}", m.subject);
        let body = m.body.split_whitespace().collect::<Vec<_>>().join(" ");
        assert_eq!(m.to, vec![config.contest.organizer.clone()]);
        assert_eq!(m.kind, DIGEST_KIND);
        for s in [
            "joe@nowhere.example",
            "KNOBELN: registration accepted",
            "554 5.7.1 Relay access denied",
            "knobeln admin resend",
            "ann@x.example",
            "processing panicked",
            "knobeln admin reprocess 3",
            "2 mail(s) were dropped",
            "round 1, group 1, slot 3 could not be refereed (3 tries)",
            "4 time(s) since 1994-05-14T10:00:00Z",
        ] {
            assert!(body.contains(s), "{s} missing:\n{}", m.body);
        }
    }
}
