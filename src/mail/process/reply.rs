//! A handled mail's replies: charged to the budget they draw from (a
//! stranger's per sender, per domain and in all; a registered mailbox's; a
//! proven team's; a kept registration's and the contest's never capped),
//! the kits' own caps (no pool shared by participants: a stranger's kits
//! share the strangers' day, a participant's are its own) and the short
//! answer to a participant whose kit a cap held back, a team's program's
//! mail answered once a day, queued in the outbox, and the mail's final
//! state set and the mail sealed, on one transaction.
//!
//! Not here: what a reply says (the commands) and sending it (`delivery`).

use chrono::{DateTime, Duration, Utc};

use super::error::ProcessError;
use super::seal::seal_inbox;
use crate::config::Config;
use crate::mail::commands::help::FORWARD_KIND;
use crate::mail::commands::software::{KIT_KIND, KIT_REFUSED_KIND, KIT_SENT, NO_KIT};
use crate::mail::commands::{Budget, Ctx, Effect};
use crate::mail::message::Automatic;
use crate::mail::sender::sender_key;
use crate::mail::texts::render;
use crate::outbox::outgoing::Outgoing;
use crate::outbox::{enqueue, Cause, EventKey};
use crate::store::mail::{self as db, InboxRow, ReplyTarget};
use crate::store::Store;
use crate::tournament::TeamId;

pub(super) fn commit(
    store: &mut Store,
    config: &Config,
    row: &InboxRow,
    ctx: &Ctx<'_>,
    effect: Effect,
    now: DateTime<Utc>,
) -> Result<&'static str, ProcessError> {
    let tx = store.conn_mut().transaction()?;
    let state = finish_in(&tx, config, row, ctx, effect, now)?;
    tx.commit()?;
    Ok(state)
}

/// Why no reply of `budget` may go to `sender_key` now, or `None`:
/// strangers' replies are capped per sender (`+tag` and case folded), per
/// domain and in all; a registered mailbox's per sender only; a proven
/// team's by its own daily budget; a kept registration's and contest mails
/// never.
fn reply_gate(
    conn: &rusqlite::Connection,
    config: &Config,
    budget: Budget,
    sender_key: &str,
    now: DateTime<Utc>,
) -> Result<Option<String>, ProcessError> {
    let domain = sender_key.rsplit_once('@').map_or("", |(_, d)| d);
    let limits = &config.limits;
    let since = now - Duration::days(1);
    let capped = |cap: u32, n: u32| cap > 0 && n >= cap;
    let per_sender = || -> Result<Option<String>, ProcessError> {
        Ok(capped(
            limits.replies_per_sender_per_day,
            // Every reply counted for this address, whoever paid for it:
            // a stranger's, a claimed mailbox's, or a team's copy to an
            // address outside the team's mailbox (`team_recipients`).
            db::replies(ReplyTarget::Sender(sender_key)).since(conn, since)?,
        )
        .then(|| {
            format!(
                "{} replies to this sender today already",
                limits.replies_per_sender_per_day
            )
        }))
    };
    Ok(match budget {
        Budget::Contest | Budget::Registration => None,
        Budget::Team(team) => capped(
            limits.replies_per_team_per_day,
            db::replies(ReplyTarget::Team(team)).since(conn, since)?,
        )
        .then(|| {
            format!(
                "{} replies to this team today already",
                limits.replies_per_team_per_day
            )
        }),
        Budget::Confirmed => per_sender()?,
        Budget::Strangers => {
            if let Some(why) = per_sender()? {
                Some(why)
            } else if capped(
                limits.replies_per_domain_per_day,
                db::replies(ReplyTarget::Domain(domain))
                    .on(&[Budget::Strangers])
                    .since(conn, since)?,
            ) {
                Some(format!(
                    "{} replies to senders at {domain} today already",
                    limits.replies_per_domain_per_day
                ))
            } else if capped(
                limits.stranger_replies_per_day,
                db::replies(ReplyTarget::Everyone)
                    .on(&[Budget::Strangers])
                    .since(conn, since)?,
            ) {
                Some(format!(
                    "{} replies to strangers today already, the most in a day",
                    limits.stranger_replies_per_day
                ))
            } else {
                None
            }
        }
    })
}

/// Whose mailbox an unproven mail's address names (its From line, or its
/// Reply-To): a claim either way, but it decides the claim's budget and
/// its kits' lane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Named {
    /// No registered team's mailbox: a stranger's address.
    Stranger,
    /// The mailbox of registrations none of which proved its address (a
    /// From line alone registered them, which a stranger does at will).
    UnprovenMailbox,
    /// The mailbox of a registration that proved its address (it answered
    /// a confirmation request, or its team sent a mail with its string).
    ProvenMailbox,
}

impl Named {
    /// What `sender_key` names, in one look-up of the registrations.
    fn of(conn: &rusqlite::Connection, sender_key: &str) -> Result<Named, ProcessError> {
        let count = db::registrations_of_mailbox(conn, sender_key)?;
        Ok(if count.proven > 0 {
            Named::ProvenMailbox
        } else if count.waiting > 0 {
            Named::UnprovenMailbox
        } else {
            Named::Stranger
        })
    }
}

/// Why a mail a machine sent (`program`: its reason, `None` for a
/// person's mail) gets no answer now, or `None`. Only a team's program's
/// mail proven by its string reaches here (`one.rs`), and it is answered
/// at most once in 24 hours, to the team's mailbox: RFC 3834 asks that
/// automatic mail get no automatic answer, so that two programs never
/// answer each other for ever; one answer a day bounds such a loop and
/// tells the team what became of its mail. A machine's mail whose answer
/// the team's budget does not pay for gets none.
fn program_gate(
    conn: &rusqlite::Connection,
    program: Option<&Automatic>,
    budget: Budget,
    now: DateTime<Utc>,
) -> Result<Option<String>, ProcessError> {
    if program.is_none() {
        return Ok(None);
    }
    let Budget::Team(team) = budget else {
        return Ok(Some(
            "a machine's mail whose answer its team's string does not pay for".into(),
        ));
    };
    Ok(
        db::automatic_answered_since(conn, team, now - Duration::days(1))?
            .map(|at| format!("a team's program is answered once in 24 hours, last at {at}")),
    )
}

/// The paragraph before each answer to a team's program's mail: why it
/// is answered, and that the next ones of the day will not be.
fn program_note(program: &Automatic, now: DateTime<Utc>) -> Result<String, ProcessError> {
    let value = match program {
        Automatic::AutoSubmitted(v) => v.as_str(),
        _ => "",
    };
    let until = (now + Duration::days(1)).format("%Y-%m-%d %H:%M UTC");
    Ok(render(
        "automatic_note",
        &serde_json::json!({ "value": value, "until": until.to_string() }),
    )?)
}

/// The kit caps a reply is held to, besides its budget's: the rule of
/// which kits count against which. No lane is a pool shared by
/// participants: a From line is anyone's word, so a kit asked for in a
/// participant's name is counted for that participant alone, and only a
/// stranger's kits share a day's cap in all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum KitLane {
    /// Not a kit: its budget's caps only.
    NotAKit,
    /// A kit to a team proven by its string: counted among the team's own
    /// kits, which no stranger can spend.
    Team(TeamId),
    /// A kit to a stranger, or to a mailbox only a From line registered:
    /// counted per sender, per domain and among all strangers' kits, and
    /// charged to the strangers' budget.
    Stranger,
    /// A kit to a proven mailbox (its registration proved its address)
    /// asked for by a From line or `Reply-To` naming it: counted per
    /// sender only, never by its domain nor among other mailboxes' kits.
    /// It goes only to that mailbox, which proved it is a participant's,
    /// so it is charged to the mailbox it goes to: a forger naming other
    /// proven mailboxes spends theirs (sent to them), never this one's.
    /// In all, at most `kits_per_sender_per_day` times the proven
    /// mailboxes, whose number only proof raises (one confirmation or
    /// one mail with a team's string each, within `max_participants`):
    /// the bound the teams' own string kits have. Before, these kits
    /// shared `kits_per_day` among all proven mailboxes, and a forger
    /// naming 50 proven mailboxes (the LAP list publishes them) spent
    /// the 100 of the day: every other proven mailbox's request got none.
    Sender,
}

impl KitLane {
    /// The lane of a reply of `kind` drawn from `budget` for a mail naming
    /// `named`. A registration from a forged From line proves nothing, so
    /// a kit asked for in its mailbox's name is a stranger's (as its mails
    /// at intake and its forwards are): before, such kits shared the
    /// proven mailboxes' lane, and a forger's registrations spent it.
    fn of(kind: &str, budget: Budget, named: Named) -> KitLane {
        if kind != KIT_KIND {
            return KitLane::NotAKit;
        }
        match (budget, named) {
            (Budget::Team(team), _) => KitLane::Team(team),
            (Budget::Strangers, _) | (Budget::Confirmed, Named::UnprovenMailbox) => {
                KitLane::Stranger
            }
            (Budget::Confirmed | Budget::Contest | Budget::Registration, _) => KitLane::Sender,
        }
    }

    /// The budget a kit of this lane is charged to (the outbox row's),
    /// where the mail's replies draw on `budget`.
    fn charged_to(self, budget: Budget) -> Budget {
        match self {
            KitLane::Stranger => Budget::Strangers,
            KitLane::NotAKit | KitLane::Team(_) | KitLane::Sender => budget,
        }
    }
}

/// Queues the replies (within the budget they draw from, and the kits'
/// caps) and sets the mail's final state, on the caller's transaction.
pub(super) fn finish_in(
    conn: &rusqlite::Connection,
    config: &Config,
    row: &InboxRow,
    ctx: &Ctx<'_>,
    effect: Effect,
    now: DateTime<Utc>,
) -> Result<&'static str, ProcessError> {
    let sender_key = sender_key(&ctx.reply_to);
    let domain = sender_key
        .rsplit_once('@')
        .map_or("", |(_, d)| d)
        .to_string();
    // A From line naming a registered team's mailbox is still a claim,
    // but its replies go to that team: strangers' caps on its domain and
    // in all do not apply to it (decided (F13) for a mailbox not proven
    // yet too); its kits only if the mailbox proved itself (`KitLane`).
    let named = match effect.budget {
        Budget::Strangers => Named::of(conn, &sender_key)?,
        _ => Named::Stranger,
    };
    let budget = match (effect.budget, named) {
        (Budget::Strangers, Named::ProvenMailbox | Named::UnprovenMailbox) => Budget::Confirmed,
        (b, _) => b,
    };
    // A mail that drew on a team's budget carried its authentification
    // string: the team's address is proven, its place safe from now on (in
    // the same transaction as the replies).
    if let Budget::Team(team) = budget {
        db::mark_proven(conn, team, now)?;
    }
    // The one address a team's string proves: its registration's mailbox.
    let team_mailbox = match budget {
        Budget::Team(team) => db::mailbox_of_team(conn, team)?,
        _ => None,
    };
    // A team's program's mail (`one.rs` lets no other machine's through).
    let program = ctx.mail.automatic.as_ref().filter(|a| a.provable());
    let mut outcome = effect.outcome;
    let mut answered = false;
    // Whether the mail was passed on to the organizer, whose copy is cut
    // and names the mail's inbox id for the whole of it.
    let mut forwarded = false;
    let since = now - Duration::days(1);
    let gate = match reply_gate(conn, config, budget, &sender_key, now)? {
        Some(why) => Some(why),
        None => program_gate(conn, program, budget, now)?,
    };
    if let Some(why) = gate {
        if effect.replies.iter().any(|r| r.kind == KIT_KIND) {
            kit_refused(&mut outcome, &format!("no reply: {why}"));
        } else {
            outcome.push_str(&format!(" (no reply: {why})"));
        }
    } else {
        for reply in &effect.replies {
            // Why no kit may go out now, if the reply is one.
            let lane = KitLane::of(reply.kind, budget, named);
            let no_kit = kit_gate(conn, config, lane, &sender_key, &domain, since)?;
            let note;
            let reply = match (no_kit, lane) {
                (None, _) => reply,
                (Some(why), KitLane::Stranger | KitLane::NotAKit) => {
                    // A stranger at a kit cap is told nothing: that is the
                    // cap's point (its mail would cost what the kit saves).
                    kit_refused(&mut outcome, &why);
                    continue;
                }
                (Some(why), KitLane::Team(_) | KitLane::Sender) => {
                    // A participant asked (its string, or its proven
                    // mailbox named): a short answer says why and how to
                    // get the kit, within the budget's replies (its gate
                    // above), in the kit's place.
                    kit_refused(&mut outcome, &why);
                    note = kit_refused_note(reply, lane, &why, config)?;
                    &note
                }
            };
            let mut counted_for =
                matches!(budget, Budget::Strangers | Budget::Confirmed).then(|| sender_key.clone());
            let mut addressed = None;
            if let Budget::Team(_) = budget {
                let (mut to, mut other, left_out) =
                    team_recipients(conn, config, reply, team_mailbox.as_deref(), since)?;
                outcome.push_str(&left_out);
                if program.is_some() && other.is_some() {
                    // A program's answer goes to its team's mailbox only.
                    to.retain(|a| {
                        team_mailbox.as_deref() == Some(crate::mail::sender::sender_key(a).as_str())
                    });
                    outcome.push_str(
                        " (no copy outside the team's mailbox: a program's mail is answered there only)",
                    );
                    other = None;
                }
                if to.is_empty() {
                    continue;
                }
                counted_for = other;
                if let Some(program) = program {
                    addressed = Some(Outgoing {
                        to,
                        body: format!("{}{}", program_note(program, now)?, reply.body),
                        ..reply.clone()
                    });
                } else if to != reply.to {
                    addressed = Some(Outgoing {
                        to,
                        ..reply.clone()
                    });
                }
            }
            let reply = addressed.as_ref().unwrap_or(reply);
            if reply.kind == FORWARD_KIND {
                forwarded = true;
                outcome.push_str("; forwarded to the organizer");
            }
            enqueue(
                conn,
                &config.contest,
                reply,
                Cause {
                    inbox_id: Some(row.id),
                    budget: lane.charged_to(budget),
                    sender_key: counted_for.as_deref(),
                    event: EventKey::None,
                },
                now,
            )?;
            answered = true;
        }
    }
    if let (Some(_), Budget::Team(team), true) = (program, budget, answered) {
        db::set_automatic_answered(conn, team, now)?;
    }
    seal_inbox(conn, config, row)?;
    db::finish_inbox(conn, row.id, effect.state, &outcome, now)?;
    // Kept as its head: a flood costs the database 4 KiB a mail, not
    // `max_mail_bytes`. A mail passed on to the organizer stays whole (the
    // forward says where): within the forwards' own caps a day.
    if !forwarded {
        db::keep_head_of_processed(conn, row.id)?;
        // A mail that proved nobody keeps even its head only a week.
        if matches!(budget, Budget::Strangers | Budget::Confirmed) {
            db::forget_head_at(conn, row.id, now + strangers_heads_kept())?;
        }
    }
    Ok(effect.state)
}

/// Why a reply of `lane` may not go out now, or `None`: a team's kits
/// are capped per team, a proven mailbox's per sender (`KitLane::Sender`:
/// no pool shared with other mailboxes), a stranger's per sender, per
/// domain and among all strangers' kits.
fn kit_gate(
    conn: &rusqlite::Connection,
    config: &Config,
    lane: KitLane,
    sender_key: &str,
    domain: &str,
    since: DateTime<Utc>,
) -> Result<Option<String>, ProcessError> {
    let limits = &config.limits;
    let capped = |cap: u32, n: u32| cap > 0 && n >= cap;
    let per_sender = || -> Result<u32, ProcessError> {
        Ok(db::replies(ReplyTarget::Sender(sender_key))
            .of_kind(KIT_KIND)
            .since(conn, since)?)
    };
    Ok(match lane {
        KitLane::NotAKit => None,
        // A team proven by its string has a kit lane of its own: its kits
        // (per sender's cap a day, counted by team), within its own
        // replies; no stranger can spend either.
        KitLane::Team(team) => capped(
            limits.kits_per_sender_per_day,
            db::replies(ReplyTarget::Team(team))
                .of_kind(KIT_KIND)
                .since(conn, since)?,
        )
        .then(|| {
            format!(
                "at most {} kits a day to one team",
                limits.kits_per_sender_per_day
            )
        }),
        // A proven mailbox's kits are its own: counted for its address
        // (whoever asked in its name, whoever paid), never by its domain
        // nor with other mailboxes'; strangers and forgers naming other
        // mailboxes never use them up.
        KitLane::Sender => capped(limits.kits_per_sender_per_day, per_sender()?).then(|| {
            format!(
                "at most {} kits a day to one mailbox",
                limits.kits_per_sender_per_day
            )
        }),
        // A stranger's kit (or one asked for in the name of a mailbox
        // only a From line registered): per sender, per domain and among
        // all strangers' kits.
        KitLane::Stranger => {
            let per_day = db::replies(ReplyTarget::Everyone)
                .on(&[Budget::Strangers])
                .of_kind(KIT_KIND)
                .since(conn, since)?;
            let per_domain = db::replies(ReplyTarget::Domain(domain))
                .of_kind(KIT_KIND)
                .since(conn, since)?;
            if capped(limits.kits_per_day, per_day) {
                Some(format!(
                    "{} kits went to strangers today, the most in a day",
                    limits.kits_per_day
                ))
            } else if capped(limits.kits_per_sender_per_day, per_sender()?)
                || capped(limits.kits_per_domain_per_day, per_domain)
            {
                Some(format!(
                    "at most {} kits a day to one sender and {} to one domain",
                    limits.kits_per_sender_per_day, limits.kits_per_domain_per_day
                ))
            } else {
                None
            }
        }
    })
}

/// The outcome of a kit request a cap held back: `no participant kit:
/// WHY` in place of `participant kit sent`, the rest (the team's name)
/// kept. Before, it read "participant kit sent (no kit: …)".
fn kit_refused(outcome: &mut String, why: &str) {
    *outcome = match outcome.strip_prefix(KIT_SENT) {
        Some(rest) => format!("{NO_KIT}: {why}{rest}"),
        None => format!("{outcome} ({NO_KIT}: {why})"),
    };
}

/// The short answer, in the kit's place, to a participant whose kit a cap
/// held back: why, when the next one may go, and (a request without the
/// team's string) that the string's own kits are there whatever others
/// asked in the mailbox's name.
fn kit_refused_note(
    kit: &Outgoing,
    lane: KitLane,
    why: &str,
    config: &Config,
) -> Result<Outgoing, ProcessError> {
    let body = render(
        "kit_refused",
        &serde_json::json!({
            "why": why,
            "per_day": config.limits.kits_per_sender_per_day,
            "with_string": matches!(lane, KitLane::Team(_)),
        }),
    )?;
    Ok(Outgoing {
        kind: KIT_REFUSED_KIND,
        subject: "your kit request: not sent this time".into(),
        body,
        attachments: Vec::new(),
        ..kit.clone()
    })
}

/// Where a reply drawn from a team's budget may go (red team G19). The
/// team's string proves the team and the mailbox its registration named
/// (`team_mailbox`, folded), not the other address a mail names: its
/// `Reply-To` (or its From line) is the sender's word, as a stranger's is.
/// So the reply goes to the team's mailbox whatever it costs that address,
/// and to one address outside it (the sender's) only while that address's
/// replies of the last day, whoever paid for them, are under
/// `replies_per_sender_per_day` and, for a kit, its kits under
/// `kits_per_sender_per_day`: the row is then counted for that address
/// (its `sender_key`), beside the team's own count. Before, a team's
/// replies went to any `Reply-To`, counted for the team alone: 200 a day
/// from each team to one victim, four times what a stranger's word gets
/// an address, and its kits beside.
///
/// Returns the recipients left, the address counted for (if one outside
/// the mailbox is left), and the outcome's note of each copy left out.
fn team_recipients(
    conn: &rusqlite::Connection,
    config: &Config,
    reply: &Outgoing,
    team_mailbox: Option<&str>,
    since: DateTime<Utc>,
) -> Result<(Vec<String>, Option<String>, String), ProcessError> {
    let limits = &config.limits;
    let capped = |cap: u32, n: u32| cap > 0 && n >= cap;
    let mut to = Vec::new();
    let mut other: Option<String> = None;
    let mut left_out = String::new();
    for address in &reply.to {
        let key = sender_key(address);
        if team_mailbox == Some(key.as_str()) {
            to.push(address.clone());
            continue;
        }
        if other.is_some() {
            // A row counts for one address: a second one outside the
            // team's mailbox is not sent (the commands name at most one,
            // the sender's).
            left_out.push_str(&format!(
                " (no copy to {address}: a team's reply goes to one address outside its mailbox)"
            ));
            continue;
        }
        // The address's replies of the day and, for a kit, its kits: one
        // look-up either way.
        let (replies, kits) = if reply.kind == KIT_KIND {
            db::replies(ReplyTarget::Sender(&key)).since_with_kind(conn, since, KIT_KIND)?
        } else {
            (
                db::replies(ReplyTarget::Sender(&key)).since(conn, since)?,
                0,
            )
        };
        if capped(limits.replies_per_sender_per_day, replies) {
            left_out.push_str(&format!(
                " (no copy to {address}: {} replies to this address today already)",
                limits.replies_per_sender_per_day
            ));
            continue;
        }
        if reply.kind == KIT_KIND && capped(limits.kits_per_sender_per_day, kits) {
            left_out.push_str(&format!(
                " (no kit to {address}: at most {} kits a day to one address)",
                limits.kits_per_sender_per_day
            ));
            continue;
        }
        to.push(address.clone());
        other = Some(key);
    }
    Ok((to, other, left_out))
}

/// How long a mail that proved nobody keeps its head once processed.
pub(super) fn strangers_heads_kept() -> Duration {
    Duration::days(db::STRANGERS_HEADS_KEPT_DAYS)
}
