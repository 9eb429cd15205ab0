//! `registration for KNOBELN`: the body in the announced format. Every
//! problem is reported at once; case (a) rejections say why (window, limits);
//! a clashing team name is modified and the reply says so; an address that
//! is already registered changes nothing. The acknowledgement goes to the
//! registration's mail-address and carries the authentification string,
//! the warnings of "should" rules (a team of more than ten), the
//! description of the five library routines with the contest's rules, and
//! knobellib.c and knobellib.h as attachments, as the announcement promised.
//!
//! A registration whose mail-address is not its sender's (the caps count
//! senders, and a sender is easily forged) is not registered at once: the
//! address gets a confirmation request in our words only (no team name,
//! organization, members or attachments), the sender an acknowledgement of
//! that, and the registration waits in `pending_registrations` until an
//! answer to the request comes from that address ([`confirm`]); then it is
//! registered as if that address had sent it. At most one request per
//! address a day, and `confirmations_per_domain_per_day` per domain; a
//! request is forgotten after [`CONFIRM_DAYS`] days.
//!
//! A registration from the address it names is a claim too (a From line
//! is forged at will): it waits for its team's first mail with its
//! authentification string (marked where that mail's reply is queued,
//! `mail::process`). In a full contest (`max_participants`, or the
//! organization's `max_teams_per_organization`), one that waited longer
//! than [`PROOF_DAYS`] gives its place to a newcomer whose address answered
//! a confirmation request; it is withdrawn. Forged registrations thus
//! cannot keep a contest full, and the limits stay hard.

use crate::discipline::family::Family;
use rusqlite::Connection;
use serde_json::json;

use super::context::Budget;
use super::context::{date, Ctx, Effect};
use crate::auth;
use crate::mail::registration::{parse_registration, render_record, Registration};
use crate::mail::texts::render;
use crate::outbox::outgoing::OutAttachment;
use crate::store::mail as db;
use crate::store::StoreError;

/// Faults while registering (never the participant's).
#[derive(Debug, thiserror::Error)]
pub enum RegisterError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Sql(#[from] rusqlite::Error),
    #[error(transparent)]
    Render(#[from] handlebars::RenderError),
    #[error("no random numbers: {0}")]
    Random(String),
}

/// Pure: the registration in `body`, or every problem with it.
pub fn parse(body: &str) -> Result<Registration, Vec<String>> {
    parse_registration(body).map_err(|problems| {
        problems
            .into_iter()
            .map(|p| match p.line {
                Some(l) => format!("line {l}: {}", p.message),
                None => p.message,
            })
            .collect()
    })
}

/// A free team name: the requested one, or it with `_2`, `_3`, … (kept
/// within 30 characters).
pub fn free_team_name(conn: &Connection, wanted: &str) -> Result<String, StoreError> {
    if !db::team_name_taken(conn, wanted)? {
        return Ok(wanted.to_string());
    }
    // Every name that could clash with a candidate shares the first 23
    // characters (the longest base next to a suffix of up to 7): read them
    // once, then look for the first free suffix in memory.
    let prefix: String = wanted.chars().take(23).collect();
    let taken = db::team_names_starting_with(conn, &prefix)?;
    for n in 2.. {
        let suffix = format!("_{n}");
        let base: String = wanted.chars().take(30 - suffix.len()).collect();
        let candidate = format!("{base}{suffix}");
        let free = if suffix.len() <= 7 {
            !taken.contains(&candidate.to_ascii_lowercase())
        } else {
            !db::team_name_taken(conn, &candidate)?
        };
        if free {
            return Ok(candidate);
        }
    }
    unreachable!("some suffix is free")
}

/// Problems a rejection lists at most (the rest counted): a long bad form
/// draws a short answer.
pub const MAX_PROBLEMS_SHOWN: usize = 12;

/// Characters of one problem shown at most.
const MAX_PROBLEM_CHARS: usize = 600;

fn rejected(
    ctx: &Ctx<'_>,
    reason: Option<String>,
    mut problems: Vec<String>,
    outcome: String,
) -> Result<Effect, RegisterError> {
    let more = problems.len().saturating_sub(MAX_PROBLEMS_SHOWN);
    problems.truncate(MAX_PROBLEMS_SHOWN);
    for p in &mut problems {
        if p.chars().count() > MAX_PROBLEM_CHARS {
            *p = p.chars().take(MAX_PROBLEM_CHARS).collect::<String>() + " [...]";
        }
    }
    if more > 0 {
        problems.push(format!(
            "and {more} more problem(s) of the same kinds; fix these and send the form again"
        ));
    }
    let body = render(
        "registration_rejected",
        &json!({
            "contest_name": ctx.config.contest.name,
            "bots": ctx.config.contest.discipline.family().bots().is_some(),
            "reason": reason,
            "problems": problems,
        }),
    )?;
    Ok(Effect {
        budget: Budget::Strangers,
        state: "done",
        outcome,
        replies: vec![ctx.reply(
            "registration_rejected",
            "KNOBELN registration: not accepted".into(),
            body,
        )],
    })
}

/// The subject of a confirmation request, before its code in parentheses.
pub const CONFIRM_SUBJECT_TEXT: &str = "KNOBELN: please confirm your address";
/// What [`super::classify`] looks for in a subject as
/// [`super::normalize_subject`] makes it, before the code: the contest's
/// name before it differs (see [`super::contest_subject`]).
pub const CONFIRM_MARK: &str = "please confirm your address (";
/// Days a confirmation request may be answered.
pub const CONFIRM_DAYS: i64 = 7;

/// How long a registration whose address is only claimed (its From line)
/// keeps its place in a full contest without a mail with its
/// authentification string: the 1994 announcement's "allow some time (ca.
/// 3 days) for the answer to arrive".
pub const PROOF_DAYS: i64 = 3;

/// Whether a registration may go on without a confirmation of its address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Confirmation {
    /// Sent by the sender itself: only when it is the named address.
    NeededUnlessSender,
    /// The named address answered its confirmation request.
    Given,
}

/// Registers the team inside the caller's transaction.
pub fn apply(conn: &Connection, ctx: &Ctx<'_>) -> Result<Effect, RegisterError> {
    let body = ctx.mail.body.text().unwrap_or("").to_string();
    register(conn, ctx, &body, Confirmation::NeededUnlessSender)
}

/// The answer to a confirmation request: the registration waiting for this
/// address goes through, as if the address had sent it.
pub fn confirm(conn: &Connection, ctx: &Ctx<'_>) -> Result<Effect, RegisterError> {
    let pending = answered_request(conn, ctx.config, &ctx.mail.subject, &ctx.reply_to, ctx.now)?;
    if let Some(p) = &pending {
        db::delete_pending(conn, p.id)?;
    }
    let Some(body) = pending.map(|p| p.body) else {
        // Which reason it is: a request this code names that went to
        // another address is named (only its code's holder reads this),
        // so that its owner answers from there. Before, the refusal named
        // the answer's own address as if the request had gone there (red
        // team G19).
        let since = ctx.now - chrono::Duration::days(CONFIRM_DAYS);
        let went_to = db::pending_by_code(
            conn,
            &answer_code_hash(ctx.config, &ctx.mail.subject),
            since,
        )?
        .map(|p| p.mail_address);
        let text = render(
            "confirm_unknown",
            &json!({
                "contest_name": ctx.config.contest.name,
                "days": CONFIRM_DAYS,
                "from": ctx.reply_to,
                "went_to": went_to,
            }),
        )?;
        return Ok(Effect {
            budget: Budget::Strangers,
            state: "done",
            outcome: "an unknown confirmation".into(),
            replies: vec![ctx.reply(
                "confirm_unknown",
                "KNOBELN: confirmation not known".into(),
                text,
            )],
        });
    };
    register(conn, ctx, &body, Confirmation::Given)
}

/// The registration waiting for `reply_to` whose confirmation request
/// `subject` answers (within [`CONFIRM_DAYS`] of `now`), or `None`: the
/// code of the request's subject, behind reply prefixes, and only from the
/// address the request went to. One indexed read; the intake reads it too
/// (an answer to a request is a participant's mail, never a stranger's).
pub fn answered_request(
    conn: &Connection,
    config: &crate::config::Config,
    subject: &str,
    reply_to: &str,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<Option<db::Pending>, StoreError> {
    let since = now - chrono::Duration::days(CONFIRM_DAYS);
    let hash = answer_code_hash(config, subject);
    let sender = crate::mail::sender::sender_key(reply_to);
    Ok(db::pending_by_code(conn, &hash, since)?
        .filter(|p| crate::mail::sender::sender_key(&p.mail_address) == sender))
}

/// The SHA-256 of the confirmation code `subject` answers with (as the
/// request keeps it; the code of an empty string when it names none): the
/// key [`answered_request`] looks the request up by, and the intake's mark
/// of the one mail a code proves.
pub fn answer_code_hash(config: &crate::config::Config, subject: &str) -> String {
    let subject = super::subject::normalize_subject(subject);
    // Only the subject the request had (behind reply prefixes): the
    // contest's name or KNOBELN, then the mark. An auto-responder that
    // puts its own words in front ("[Ticket#1] Autoreply: …") from the
    // address confirms nothing.
    let ours = [
        "knobeln".to_string(),
        super::subject::normalize_subject(&config.contest.name),
    ];
    let code = subject
        .split_once(CONFIRM_MARK)
        .filter(|(before, _)| {
            before
                .strip_suffix(": ")
                .is_some_and(|name| ours.iter().any(|o| o == name))
        })
        .and_then(|(_, rest)| rest.split(')').next())
        .unwrap_or("")
        .trim()
        .to_string();
    crate::engine::prepare::sha256_hex(code.as_bytes())
}

/// The outbox kind of a confirmation request.
const CONFIRM_KIND: &str = "confirm_address";

/// The way around a confirmation cap that always works: a registration
/// sent from the address it names needs no confirmation.
const FROM_THE_ADDRESS: &str = "Send the registration from that address itself: then no \
     confirmation is needed and it is registered at once.";

/// Why a registration asks its address to confirm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ConfirmBecause {
    /// It names another address than its sender's.
    AnotherAddress,
    /// It comes from the address it names (a claim), and the contest (or
    /// its organization) is full: it may take the place of a registration
    /// that waited too long for its team's first authenticated mail, once
    /// its own address is proven.
    Full,
}

/// A registration naming another address than its sender's, or one of
/// many waiting: a confirmation request to its address (capped), and, if
/// that is not the sender, an acknowledgement of it to the sender.
fn ask_for_confirmation(
    conn: &Connection,
    ctx: &Ctx<'_>,
    body: &str,
    reg: &Registration,
    because: ConfirmBecause,
) -> Result<Effect, RegisterError> {
    // The way around a cap: from the address itself, unless that is what
    // asks for the confirmation.
    let hint = match because {
        ConfirmBecause::AnotherAddress => FROM_THE_ADDRESS,
        ConfirmBecause::Full => "Please try again tomorrow.",
    };
    let address = reg.mail_address.clone();
    let domain = address
        .rsplit_once('@')
        .map(|(_, d)| d.to_ascii_lowercase())
        .unwrap_or_default();
    let day_ago = ctx.now - chrono::Duration::days(1);
    db::forget_pending_registrations(conn, ctx.now - chrono::Duration::days(CONFIRM_DAYS))?;
    let limit = ctx.config.limits.confirmations_per_domain_per_day;
    let mailbox = crate::mail::sender::sender_key(&address);
    let why = if db::pending_to_address_since(conn, &address, &mailbox, day_ago)? > 0 {
        Some(match because {
            ConfirmBecause::AnotherAddress => "a confirmation request went to that address \
                 in the last 24 hours already, and it must be answered first."
                .to_string(),
            // Perhaps a stranger's request, for a stranger's form: not
            // one to answer on our word.
            ConfirmBecause::Full => "a confirmation request went to this address in the \
                 last 24 hours already (perhaps for another registration), and a second one \
                 is not sent within a day. Please try again tomorrow."
                .to_string(),
        })
    } else if limit > 0 && db::pending_to_domain_since(conn, &domain, day_ago)? >= u64::from(limit)
    {
        Some(format!(
            "{limit} confirmation requests went to addresses at {domain} in the last 24 \
             hours, the most one domain gets. {hint}"
        ))
    } else if ctx.config.limits.confirmations_per_day > 0
        && db::replies(db::ReplyTarget::Everyone)
            .of_kind(CONFIRM_KIND)
            .since(conn, day_ago)?
            >= ctx.config.limits.confirmations_per_day
    {
        Some(format!(
            "{} confirmation requests went out in the last 24 hours, the most this \
             server sends in a day. {hint}",
            ctx.config.limits.confirmations_per_day
        ))
    } else {
        None
    };
    if let Some(why) = why {
        let text = render(
            "registration_confirm_refused",
            &json!({
                "mail_address": address,
                "why": why,
                "full": because == ConfirmBecause::Full,
            }),
        )?;
        return Ok(Effect {
            budget: Budget::Strangers,
            state: "done",
            outcome: format!("registration for {address}: no confirmation request (capped)"),
            replies: vec![ctx.reply(
                "registration_confirm_refused",
                "KNOBELN registration: no confirmation request sent".into(),
                text,
            )],
        });
    }
    let mut raw = [0u8; 16];
    getrandom::fill(&mut raw).map_err(|e| RegisterError::Random(e.to_string()))?;
    let code: String = raw.iter().map(|b| format!("{b:02x}")).collect();
    db::insert_pending_registration(
        conn,
        &db::NewPending {
            mail_address: &address,
            mailbox: &mailbox,
            domain: &domain,
            requested_by: &ctx.reply_to,
            // The form only (at most `MAX_FORM_BYTES`, it parsed), never
            // what follows the signature line.
            body: crate::mail::registration::form_text(body),
            code_hash: &crate::engine::prepare::sha256_hex(code.as_bytes()),
        },
        ctx.now,
    )?;
    let days = CONFIRM_DAYS;
    let to_sender = render(
        "registration_confirm_sent",
        &json!({ "mail_address": address, "days": days }),
    )?;
    let to_address = render(
        "confirm_address",
        &json!({
            "contest_name": ctx.config.contest.name,
            "days": days,
            "full": because == ConfirmBecause::Full,
        }),
    )?;
    let request = ctx.reply_to_addresses(
        CONFIRM_KIND,
        vec![address.clone()],
        format!("{CONFIRM_SUBJECT_TEXT} ({code})"),
        to_address,
    );
    let replies = match because {
        ConfirmBecause::AnotherAddress => vec![
            ctx.reply(
                "registration_confirm_sent",
                "KNOBELN registration: waiting for the address to confirm".into(),
                to_sender,
            ),
            request,
        ],
        // The sender is the address: the request says it all.
        ConfirmBecause::Full => vec![request],
    };
    Ok(Effect {
        budget: Budget::Registration,
        state: "done",
        outcome: match because {
            ConfirmBecause::AnotherAddress => {
                format!("registration for {address}: confirmation requested")
            }
            ConfirmBecause::Full => format!(
                "registration for {address}: confirmation requested (many registrations waiting)"
            ),
        },
        replies,
    })
}

/// Registers the team of `body` (the registration as mailed).
fn register(
    conn: &Connection,
    ctx: &Ctx<'_>,
    body: &str,
    confirmation: Confirmation,
) -> Result<Effect, RegisterError> {
    let t = &ctx.config.timeline;
    let limits = &ctx.config.limits;
    if ctx.now < t.registration_start {
        return rejected(
            ctx,
            Some(format!(
                "The registration is not open yet: it opens on {}.",
                date(t.registration_start)
            )),
            vec![],
            "registration before the start".into(),
        );
    }
    if ctx.now >= t.registration_deadline {
        return rejected(
            ctx,
            Some(format!(
                "The registration deadline ({}) has passed.",
                date(t.registration_deadline)
            )),
            vec![],
            "registration after the deadline".into(),
        );
    }
    if db::contest_started(conn, ctx.config.contest.discipline)? {
        return rejected(
            ctx,
            Some("The registration is closed: the contest has started.".into()),
            vec![],
            "registration after the contest start".into(),
        );
    }
    let reg = match parse(body) {
        Ok(r) => r,
        Err(problems) => {
            let n = problems.len();
            return rejected(
                ctx,
                None,
                problems,
                format!("registration with {n} problem(s)"),
            );
        }
    };
    let from_the_address = crate::mail::sender::sender_key(&ctx.reply_to)
        == crate::mail::sender::sender_key(&reg.mail_address);
    if let Some(existing) = db::registration_by_address(conn, &reg.mail_address)? {
        if !from_the_address && confirmation != Confirmation::Given {
            // Not a mail to that address on a stranger's word: the sender
            // learns that it is taken, the address gets nothing.
            return rejected(
                ctx,
                Some(format!(
                    "The address {} is already registered; a second registration \
                     for it changes nothing.",
                    existing.mail_address
                )),
                vec![],
                format!("address {} already registered", existing.mail_address),
            );
        }
        let body = render(
            "registration_exists",
            &json!({
                "contest_name": ctx.config.contest.name,
                "mail_address": existing.mail_address,
                "team_name": existing.team_name,
                "organizer": ctx.config.contest.organizer,
            }),
        )?;
        return Ok(Effect {
            budget: Budget::Strangers,
            state: "done",
            outcome: format!("address {} already registered", existing.mail_address),
            replies: vec![ctx.reply_to_addresses(
                "registration_exists",
                vec![existing.mail_address.clone()],
                "KNOBELN registration: already registered".into(),
                body,
            )],
        });
    }
    // A mailbox (case and `+tag` folded) holds at most `teams_per_mailbox`
    // teams: checked before any confirmation request goes out. The sender
    // may be a stranger: the answer names no team.
    let mailbox = crate::mail::sender::sender_key(&reg.mail_address);
    if limits.teams_per_mailbox > 0
        && db::count_registrations_of_mailbox(conn, &mailbox)? >= limits.teams_per_mailbox
    {
        return rejected(
            ctx,
            Some(format!(
                "The mailbox {mailbox} already has {} registered team(s), the most one \
                 mailbox may have (addresses that differ only in letter case or in a \
                 +tag are one mailbox). Register with another mailbox.",
                limits.teams_per_mailbox
            )),
            vec![],
            format!("mailbox {mailbox} full"),
        );
    }
    if !from_the_address && confirmation != Confirmation::Given {
        return ask_for_confirmation(conn, ctx, body, &reg, ConfirmBecause::AnotherAddress);
    }
    // Places are held by registrations; a registration whose From line
    // only claims its address (anyone can forge that) waits for its
    // team's first mail with the authentification string. When every
    // place is taken, a registration that waited longer than
    // [`PROOF_DAYS`] gives its place to a newcomer who confirmed its
    // address: forged registrations cannot keep a contest full.
    let proof = match confirmation {
        Confirmation::Given => db::AddressProof::Confirmed,
        Confirmation::NeededUnlessSender => db::AddressProof::Claimed,
    };
    let lapsed_before = ctx.now - chrono::Duration::days(PROOF_DAYS);
    let mut gives_way = None;
    // The organization first: a registration of it that gives way frees a
    // place in both counts.
    for (cap, organization) in [
        (
            limits.max_teams_per_organization,
            Some(reg.organization.as_str()),
        ),
        (limits.max_participants, None),
    ] {
        if cap == 0 {
            continue;
        }
        let count = db::count_registrations(conn, organization)?;
        if count.proven + count.waiting < cap {
            continue;
        }
        // Full. One that waited too long (of the organization, if it is
        // the organization that is full) may give way, once per
        // registration: it frees a place in both counts.
        let lapsed = match gives_way.take() {
            Some(team) => Some(team),
            None => db::oldest_waiting_registration(conn, organization, lapsed_before)?,
        };
        let Some(team) = lapsed.filter(|_| count.proven < cap) else {
            let why = match organization {
                None => format!(
                    "There are already too many participants registered (the limit is {cap})."
                ),
                Some(o) => format!(
                    "The organization \"{o}\" already has {cap} registered team(s), the most \
                     one organization may have."
                ),
            };
            let why = if count.waiting > 0 {
                format!(
                    "{why} {} of them have not yet sent a mail with their authentification \
                     string; a place is given to a newcomer when one of them waited longer \
                     than {PROOF_DAYS} days, so you may try again later.",
                    count.waiting
                )
            } else {
                why
            };
            let outcome = match organization {
                None => "participant limit reached",
                Some(_) => "per-organization limit reached",
            };
            return rejected(ctx, Some(why), vec![], outcome.into());
        };
        gives_way = Some(team);
    }
    // The registration that gives way is told, in the same transaction:
    // one mail, once per registration (it lapses once), to the address
    // its acknowledgement went to.
    let mut lapsed_notice = None;
    if let Some(lapsed) = gives_way {
        // A place of a registration that never showed its address goes
        // only to one whose address is proven: else a stranger's forged
        // registration could push out a real team's.
        if proof == db::AddressProof::Claimed {
            return ask_for_confirmation(conn, ctx, body, &reg, ConfirmBecause::Full);
        }
        crate::store::admin::withdraw_team(
            conn,
            lapsed.team,
            &format!(
                "its place went to a newcomer: the contest was full and the team had sent \
                 no mail with its authentification string within {PROOF_DAYS} days"
            ),
            ctx.now,
        )?;
        let text = render(
            "registration_lapsed",
            &json!({
                "team": lapsed.team_name,
                "contest_name": ctx.config.contest.name,
                "proof_days": PROOF_DAYS,
                "organizer": ctx.config.contest.organizer,
            }),
        )?;
        // Not a reply: threaded to nothing, so the newcomer's mail (its
        // message id) is not shown to the team that gave way.
        lapsed_notice = Some(crate::outbox::outgoing::Outgoing {
            in_reply_to: None,
            references: Vec::new(),
            ..ctx.reply_to_addresses(
                "registration_lapsed",
                vec![lapsed.mail_address.clone()],
                format!(
                    "{}: team {} withdrawn, its place went to a newcomer",
                    ctx.config.contest.name, lapsed.team_name
                ),
                text,
            )
        });
    }
    let gave_way = match &lapsed_notice {
        Some(n) => format!(
            " in the place of a team that never showed its address ({})",
            n.to[0]
        ),
        None => String::new(),
    };
    let team_name = free_team_name(conn, &reg.team_name)?;
    let renamed = team_name != reg.team_name;
    let auth = auth::new_auth_string();
    let secret = auth::StoredSecret::of(&auth);
    let mut stored = reg.clone();
    stored.team_name = team_name.clone();
    let record = render_record(&stored);
    let prefs: Vec<&str> = reg.preferences.iter().map(|p| p.as_str()).collect();
    let members = serde_json::to_string(&reg.members).expect("members serialize");
    db::insert_registration(
        conn,
        &db::NewRegistration {
            team_name: &team_name,
            requested_name: &reg.team_name,
            mail_address: &reg.mail_address,
            preferences: &prefs.join(","),
            organization: &reg.organization,
            members_json: &members,
            record: &record,
            auth_salt: &secret.salt,
            auth_hash: &secret.hash,
            auth_index: &secret.index,
            mailbox: &crate::mail::sender::sender_key(&reg.mail_address),
            inbox_id: Some(ctx.inbox_id),
            proof,
        },
        ctx.now,
    )?;
    // Whether its place can go to a newcomer (a full contest, no mail
    // with the string within PROOF_DAYS): the acknowledgement says so.
    let waits_for_proof = proof == db::AddressProof::Claimed
        && (limits.max_participants > 0 || limits.max_teams_per_organization > 0);
    let d = ctx.config.contest.discipline;
    if let Family::Bots(_) = d.family() {
        let languages = ctx
            .config
            .languages()
            .map(|t| {
                t.languages
                    .iter()
                    .map(|l| l.title.clone())
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .unwrap_or_default();
        let body = render(
            "registration_accepted_bot",
            &json!({
                "contest_name": ctx.config.contest.name,
                "contest_address": ctx.config.contest.address,
                "team_name": team_name,
                "requested_name": reg.team_name,
                "renamed": renamed,
                "auth": auth,
                "warnings": reg.warnings(),
                "waits_for_proof": waits_for_proof,
                "proof_days": PROOF_DAYS,
                "discipline": d.title(),
                "languages": languages,
                "registration_deadline": date(t.registration_deadline),
                "compile_end": date(t.compile_end()),
                "contest_start": date(t.contest_start),
            }),
        )?;
        let reply = ctx.reply_to_addresses(
            "registration_accepted",
            vec![reg.mail_address.clone()],
            format!(
                "{} registration accepted: team {team_name}",
                ctx.config.contest.name
            ),
            body,
        );
        return Ok(Effect {
            budget: Budget::Registration,
            state: "done",
            outcome: format!(
                "team {team_name} registered{}{gave_way}",
                if renamed { " (name modified)" } else { "" }
            ),
            replies: lapsed_notice
                .into_iter()
                .chain(std::iter::once(reply))
                .collect(),
        });
    }
    let body = render(
        "registration_accepted",
        &json!({
            "contest_name": ctx.config.contest.name,
            "contest_address": ctx.config.contest.address,
            "team_name": team_name,
            "requested_name": reg.team_name,
            "renamed": renamed,
            "auth": auth,
            "record": record,
            "compile_start": date(t.compile_start),
            "registration_deadline": date(t.registration_deadline),
            "compile_end": date(t.compile_end()),
            "contest_start": date(t.contest_start),
            "warnings": reg.warnings(),
            "waits_for_proof": waits_for_proof,
            "proof_days": PROOF_DAYS,
            "a": ctx.config.rules.a,
            "b": ctx.config.rules.b,
            "log2_b": crate::game::knobeln::log2_floor(ctx.config.rules.b),
            "k": ctx.config.rules.k,
            "throws": ctx.config.rules.throws,
            "memory_kb": ctx.config.rules.memory_kb,
            "fuel": ctx.config.rules.fuel,
        }),
    )?;
    let mut reply = ctx.reply_to_addresses(
        "registration_accepted",
        vec![reg.mail_address.clone()],
        format!("KNOBELN registration accepted: team {team_name}"),
        body,
    );
    reply.attachments = acceptance_attachments();
    Ok(Effect {
        budget: Budget::Registration,
        state: "done",
        outcome: format!(
            "team {team_name} registered{}{gave_way}",
            if renamed { " (name modified)" } else { "" }
        ),
        replies: lapsed_notice
            .into_iter()
            .chain(std::iter::once(reply))
            .collect(),
    })
}

/// What the announcement promised with the notification of acceptance:
/// "knobellib.c … will be sent to you via email", and "a detailed
/// description of these functions" (knobellib.h; the mail's text has a
/// short one). Both are the kit's files, so they are the runtime the
/// server links with.
pub fn acceptance_attachments() -> Vec<OutAttachment> {
    ["knobellib.c", "knobellib.h"]
        .iter()
        .filter_map(|name| crate::kit::file(name))
        .map(|f| OutAttachment {
            filename: f.name.to_string(),
            content_type: f.content_type.to_string(),
            bytes: f.bytes.to_vec(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn add(store: &crate::store::Store, name: &str) {
        store
            .conn()
            .execute(
                "INSERT INTO teams (name, created_at) VALUES (?1, '1994-05-14T12:00:00Z')",
                [name],
            )
            .unwrap();
    }

    #[test]
    fn a_clashing_name_gets_the_first_free_suffix_case_insensitively() {
        let store = crate::store::Store::open_in_memory().unwrap();
        let conn = store.conn();
        assert_eq!(free_team_name(conn, "lords").unwrap(), "lords");
        add(&store, "Lords");
        assert_eq!(free_team_name(conn, "lords").unwrap(), "lords_2");
        add(&store, "LORDS_2");
        add(&store, "lords_4");
        assert_eq!(free_team_name(conn, "lords").unwrap(), "lords_3");
        // Long names are cut so that the suffix fits into 30 characters.
        let long = "a_very_long_team_name_of_thirty";
        add(&store, long);
        for n in 2..=10 {
            let got = free_team_name(conn, long).unwrap();
            assert!(got.len() <= 30, "{got}");
            assert!(got.ends_with(&format!("_{n}")), "{got}");
            add(&store, &got);
        }
    }
}
