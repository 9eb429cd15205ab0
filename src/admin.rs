//! The organizer's levers (`knobeln admin …`): withdraw a team, change its
//! address, reset its authentification string, resend failed mail,
//! reprocess set-aside mail. Each action changes the store, logs itself in
//! the audit table (`admin_log`: when, which OS user, what, on what, the
//! details; never a secret) and queues the mails it causes, in one
//! transaction: an action is either done, logged and announced, or none of
//! these.
//!
//! An organizer's mistake (an unknown team, a malformed address, a
//! withdrawal after the start) is an [`Outcome::Refused`] with the reason,
//! never an `Err`; `Err` means the store failed. The listings are plain
//! store queries (`store::admin`) and live in the commands.

use chrono::{DateTime, Utc};
use serde_json::json;

use crate::auth;
use crate::config::Config;
use crate::mail::process::ProcessError;
use crate::mail::registration::{parse_address, with_entry};
use crate::mail::texts::render;
use crate::outbox::outgoing::Outgoing;
use crate::outbox::{enqueue, Cause};
use crate::store::admin::{
    log_action, requeue_inbox, requeue_outgoing, set_address as store_set_address, set_auth,
    team_by_name, withdraw_team, TeamRow,
};
use crate::store::mail::{registration_by_address, registration_by_team};
use crate::store::{Store, StoreError};

/// Infrastructure faults of an admin action.
#[derive(Debug, thiserror::Error)]
pub enum AdminError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Sql(#[from] rusqlite::Error),
    #[error(transparent)]
    Render(#[from] handlebars::RenderError),
    #[error(transparent)]
    Mail(#[from] ProcessError),
    #[error(transparent)]
    Outbox(#[from] crate::outbox::OutboxError),
}

/// What an action did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Done, logged, mails queued: a line for the organizer.
    Done(String),
    /// Not done, nothing changed: why.
    Refused(String),
}

/// Whether the team hears of its withdrawal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Notice {
    MailTheTeam,
    Silent,
}

/// Who runs the command, for the audit log: `$SUDO_USER`, `$USER`,
/// `$LOGNAME`, else the numeric user id.
pub fn actor_from_env() -> String {
    ["SUDO_USER", "USER", "LOGNAME"]
        .iter()
        .find_map(|k| std::env::var(k).ok().filter(|v| !v.is_empty()))
        .unwrap_or_else(|| format!("uid {}", unsafe { libc::getuid() }))
}

/// A notice about a team mailed by an organizer's command: its template
/// and mail kind `kind` (the template gets the team's name, the
/// contest's name and organizer beside `fields`), queued in the command's
/// transaction.
struct TeamNotice<'a> {
    team: &'a TeamRow,
    kind: &'static str,
    to: Vec<String>,
    subject: String,
    fields: serde_json::Value,
}

impl TeamNotice<'_> {
    fn queue(
        self,
        tx: &rusqlite::Connection,
        config: &Config,
        now: DateTime<Utc>,
    ) -> Result<(), AdminError> {
        let mut data = json!({
            "team": self.team.name,
            "contest_name": config.contest.name,
            "organizer": config.contest.organizer,
        });
        if let (Some(data), serde_json::Value::Object(fields)) = (data.as_object_mut(), self.fields)
        {
            data.extend(fields);
        }
        let m = Outgoing {
            kind: self.kind,
            to: self.to,
            subject: crate::mail::commands::contest_subject(config, self.subject),
            body: render(self.kind, &data)?,
            in_reply_to: None,
            references: vec![],
            attachments: vec![],
        };
        enqueue(tx, &config.contest, &m, Cause::default(), now)?;
        Ok(())
    }
}

fn team(store: &Store, name: &str) -> Result<Result<TeamRow, Outcome>, AdminError> {
    Ok(team_by_name(store.conn(), name)?.ok_or_else(|| {
        Outcome::Refused(format!(
            "no registered team {name:?} (`knobeln admin teams` lists them)"
        ))
    }))
}

/// Withdraws a team before the contest starts: it does not enter the
/// contest, gets no contest mail, and cannot authenticate any more; its
/// registration is kept in `withdrawals`, its versions and name stay.
pub fn withdraw(
    store: &mut Store,
    config: &Config,
    team_name: &str,
    reason: &str,
    mail: Notice,
    actor: &str,
    now: DateTime<Utc>,
) -> Result<Outcome, AdminError> {
    let t = match team(store, team_name)? {
        Ok(t) => t,
        Err(refused) => return Ok(refused),
    };
    // A bot discipline's contest is not in the `contest` table: its
    // entries are fixed at its start too.
    if crate::store::mail::contest_started(store.conn(), config.contest.discipline)? {
        return Ok(Outcome::Refused(
            "the contest has started: its entries are fixed, and withdrawing a team now would \
             change games already played"
                .into(),
        ));
    }
    let tx = store.conn_mut().transaction()?;
    withdraw_team(&tx, t.team, reason, now)?;
    log_action(
        &tx,
        now,
        actor,
        "withdraw",
        &t.name,
        &json!({ "mail_address": t.mail_address, "reason": reason, "mailed": mail == Notice::MailTheTeam }),
    )?;
    if mail == Notice::MailTheTeam {
        TeamNotice {
            team: &t,
            kind: "withdrawn",
            to: vec![t.mail_address.clone()],
            subject: format!("KNOBELN: team {} withdrawn", t.name),
            fields: json!({ "reason": reason }),
        }
        .queue(&tx, config, now)?;
    }
    tx.commit()?;
    Ok(Outcome::Done(format!(
        "team {} withdrawn{}",
        t.name,
        if mail == Notice::MailTheTeam {
            format!("; a notice to {} is queued", t.mail_address)
        } else {
            String::new()
        }
    )))
}

/// Changes a team's mail address (checked like the registration form's);
/// a notice goes to the old and the new address. Mails already queued keep
/// their addresses.
pub fn set_address(
    store: &mut Store,
    config: &Config,
    team_name: &str,
    address: &str,
    actor: &str,
    now: DateTime<Utc>,
) -> Result<Outcome, AdminError> {
    let t = match team(store, team_name)? {
        Ok(t) => t,
        Err(refused) => return Ok(refused),
    };
    let address = match parse_address(address) {
        Ok(a) => a,
        Err(problems) => {
            let why: Vec<String> = problems.into_iter().map(|p| p.message).collect();
            return Ok(Outcome::Refused(why.join("; ")));
        }
    };
    if address == t.mail_address {
        return Ok(Outcome::Refused(format!(
            "team {} already has the address {address}",
            t.name
        )));
    }
    if let Some(other) = registration_by_address(store.conn(), &address)? {
        if other.team != t.team {
            return Ok(Outcome::Refused(format!(
                "{address} is the address of team {}",
                other.team_name
            )));
        }
    }
    let reg = registration_by_team(store.conn(), &t.name)?
        .ok_or_else(|| StoreError::Corrupt(format!("team {} has no registration", t.name)))?;
    let record = with_entry(&reg.record, "mail-address", &address);
    let tx = store.conn_mut().transaction()?;
    let mailbox = crate::mail::sender::sender_key(&address);
    store_set_address(&tx, t.team, &address, &mailbox, &record)?;
    log_action(
        &tx,
        now,
        actor,
        "set-address",
        &t.name,
        &json!({ "old": t.mail_address, "new": address }),
    )?;
    TeamNotice {
        team: &t,
        kind: "address_changed",
        to: vec![t.mail_address.clone(), address.clone()],
        subject: format!("KNOBELN: the address of team {} changed", t.name),
        fields: json!({ "old": t.mail_address, "new": address }),
    }
    .queue(&tx, config, now)?;
    tx.commit()?;
    Ok(Outcome::Done(format!(
        "team {}: address {} -> {address}; a notice to both is queued",
        t.name, t.mail_address
    )))
}

/// Gives a team a new authentification string (stored only salted and
/// hashed, like at registration) and mails it to the team's address. The
/// organizer never sees it.
pub fn reset_auth(
    store: &mut Store,
    config: &Config,
    team_name: &str,
    actor: &str,
    now: DateTime<Utc>,
) -> Result<Outcome, AdminError> {
    let t = match team(store, team_name)? {
        Ok(t) => t,
        Err(refused) => return Ok(refused),
    };
    let secret = auth::new_auth_string();
    let tx = store.conn_mut().transaction()?;
    set_auth(&tx, t.team, &auth::StoredSecret::of(&secret))?;
    log_action(
        &tx,
        now,
        actor,
        "reset-auth",
        &t.name,
        &json!({ "mailed_to": t.mail_address }),
    )?;
    TeamNotice {
        team: &t,
        kind: "auth_reset",
        to: vec![t.mail_address.clone()],
        subject: format!("KNOBELN: a new authentification string for team {}", t.name),
        fields: json!({ "auth": secret }),
    }
    .queue(&tx, config, now)?;
    tx.commit()?;
    Ok(Outcome::Done(format!(
        "team {}: new authentification string queued to {}",
        t.name, t.mail_address
    )))
}

/// Which mails an action takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    Ids(Vec<i64>),
    All,
}

/// Puts failed outgoing mails back into the queue (due now, attempts
/// counted afresh); the server sends them at its next cycle.
pub fn resend(
    store: &mut Store,
    which: &Selection,
    actor: &str,
    now: DateTime<Utc>,
) -> Result<Outcome, AdminError> {
    let ids = match which {
        Selection::Ids(ids) => ids.clone(),
        Selection::All => crate::store::admin::failed_outgoing(store.conn())?
            .into_iter()
            .map(|f| f.id)
            .collect(),
    };
    requeue(store, &ids, actor, now, "resend", "outgoing", |c, id| {
        requeue_outgoing(c, id, now)
    })
}

/// Puts set-aside incoming mails back into processing (attempts counted
/// afresh); the server processes them at its next cycle.
pub fn reprocess(
    store: &mut Store,
    which: &Selection,
    actor: &str,
    now: DateTime<Utc>,
) -> Result<Outcome, AdminError> {
    let ids = match which {
        Selection::Ids(ids) => ids.clone(),
        Selection::All => crate::store::admin::set_aside_inbox(store.conn())?
            .into_iter()
            .map(|f| f.id)
            .collect(),
    };
    requeue(
        store,
        &ids,
        actor,
        now,
        "reprocess",
        "set-aside",
        requeue_inbox,
    )
}

fn requeue(
    store: &mut Store,
    ids: &[i64],
    actor: &str,
    now: DateTime<Utc>,
    action: &str,
    what: &str,
    put_back: impl Fn(&rusqlite::Connection, i64) -> Result<bool, StoreError>,
) -> Result<Outcome, AdminError> {
    if ids.is_empty() {
        return Ok(Outcome::Refused(format!("there is no {what} mail")));
    }
    let tx = store.conn_mut().transaction()?;
    let mut done = Vec::new();
    let mut missing = Vec::new();
    for &id in ids {
        if put_back(&tx, id)? {
            log_action(&tx, now, actor, action, &id.to_string(), &json!({}))?;
            done.push(id.to_string());
        } else {
            missing.push(id.to_string());
        }
    }
    if !missing.is_empty() {
        // All or nothing: a typo must not leave half the list done.
        return Ok(Outcome::Refused(format!(
            "no {what} mail with id {}; nothing done",
            missing.join(", ")
        )));
    }
    tx.commit()?;
    Ok(Outcome::Done(format!(
        "{action}: mail {} queued again; `knobeln serve` takes it at its next cycle",
        done.join(", ")
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bot discipline's contest fixes its entries at its start as
    /// KNOBELN's does, but is not in the `contest` table: a withdrawal
    /// once it has started is refused all the same (it was carried out).
    #[test]
    fn a_team_is_not_withdrawn_once_a_bot_contest_has_started() {
        let mut store = Store::open_in_memory().unwrap();
        let secret = auth::new_auth_string();
        let salt = auth::new_salt();
        crate::store::mail::insert_registration(
            store.conn(),
            &crate::store::mail::NewRegistration {
                team_name: "millers",
                requested_name: "millers",
                mail_address: "joe@lords.example",
                preferences: "",
                organization: "Mill",
                members_json: "[]",
                record: "",
                auth_salt: &salt,
                auth_hash: &auth::hash(&salt, &secret),
                auth_index: &auth::index(&secret),
                mailbox: "joe@lords.example",
                inbox_id: None,
                proof: crate::store::mail::AddressProof::Claimed,
            },
            Utc::now(),
        )
        .unwrap();
        crate::testing::a_bot_contest_runs(store.conn());
        let mut config = Config::default();
        config.contest.discipline = crate::discipline::Discipline::FLOODING;
        let out = withdraw(
            &mut store,
            &config,
            "millers",
            "late",
            Notice::Silent,
            "test",
            Utc::now(),
        )
        .unwrap();
        assert!(
            matches!(&out, Outcome::Refused(why) if why.starts_with("the contest has started")),
            "{out:?}"
        );
        assert!(registration_by_team(store.conn(), "millers")
            .unwrap()
            .is_some());
    }
}
