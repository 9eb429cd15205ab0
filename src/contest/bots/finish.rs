//! The end of a bot contest: the results table from the stored games
//! alone (each discipline's planner over its stored results), and
//! `finish`, which marks the contest finished and queues, in the same
//! transaction, the final table to everyone, the per-opponent summaries
//! and the transcripts in mail-sized parts, as each team asked.
//!
//! What it deliberately does not do: play games ([`super::jobs`]) or write
//! the tables' texts (`crate::discipline::results` and each discipline's
//! `tables.rs`).

use crate::store::bots::*;
use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};
use rusqlite::{params, Connection};
use serde_json::json;

use crate::config::Config;
use crate::discipline::results::summary_text;
pub use crate::discipline::results::{results_text, Results};
use crate::discipline::seam::ContestState;
use crate::discipline::transcript;
use crate::outbox::outgoing::{OutAttachment, Outgoing};
use crate::outbox::{enqueue, Cause, EventKey};
use crate::store::mail::all_registrations;
use crate::store::Store;
use crate::tournament::TeamId;

/// The results so far, from the stored games (for status and the site;
/// none where the discipline shows none yet: the ultimatum game before its
/// end, FootSteps before its tie replays are done).
pub fn results(store: &Store, c: &BotContest, config: &Config) -> Result<Option<Results>> {
    let state = if c.finished {
        ContestState::Finished
    } else {
        ContestState::Running
    };
    results_in(store, c, config, state)
}

fn results_in(
    store: &Store,
    c: &BotContest,
    config: &Config,
    state: ContestState,
) -> Result<Option<Results>> {
    let seam = seam_of(c)?;
    with_view(c, config, |view| {
        let mut planner = seam.planner(view).map_err(BotContestError::Plan)?;
        super::jobs::feed(store, c, &mut StoredResults::default(), planner.as_mut())?;
        planner.results(state).map_err(BotContestError::Plan)
    })
}

/// Games stored so far.
pub fn games_played(conn: &Connection, c: &BotContest) -> Result<u64> {
    let n: i64 = conn.query_row(
        "SELECT COUNT(*) FROM bot_games WHERE contest_id = ?1",
        [c.id],
        |r| r.get(0),
    )?;
    Ok(n as u64)
}

/// Marks the contest finished and queues the results mail to every
/// team that took part (an entry of the contest: a team without a bot
/// gets no contest mail, issue 35), in one transaction (a mail already
/// queued is not queued twice).
pub fn finish(
    store: &mut Store,
    c: &BotContest,
    config: &Config,
    results: &Results,
    now: DateTime<Utc>,
) -> Result<()> {
    let text = results_text(results);
    let names = entry_names(c);
    let regs: Vec<_> = all_registrations(store.conn())?
        .into_iter()
        .filter(|r| names.contains_key(&r.team))
        .collect();
    // One pass over the stored games: every bot's summary rows, and the
    // moves of the kept games for the teams that asked for transcripts.
    let want: BTreeMap<TeamId, BotMailWishes> = regs
        .iter()
        .map(|r| (r.team, wishes(&r.preferences)))
        .collect();
    let name_of = |t: &TeamId| name_in(&names, t);
    let mut tally = Tally::new(seam_of(c)?);
    // Per team: the parts (each at most one protocol mail's size), games
    // attached, games left out.
    let mut moves: BTreeMap<TeamId, (Vec<String>, u64, u64)> = BTreeMap::new();
    let part_cap = config.rules.max_protocol_mail_bytes.max(4096);
    // Per team: its games kept without their moves (the transcript
    // budget), and the first one's name and why.
    let mut not_kept: BTreeMap<TeamId, (u64, String)> = BTreeMap::new();
    for_each_game(store, c, config, |g| {
        tally.add(&g, &name_of);
        if let Some(note) = &g.moves_not_kept {
            let seat_names: Vec<String> = g.seats.iter().map(&name_of).collect();
            let mut seen = BTreeSet::new();
            for t in &g.seats {
                if !seen.insert(*t) || !want.get(t).is_some_and(|w| w.transcripts) {
                    continue;
                }
                let (n, first) = not_kept.entry(*t).or_default();
                if *n == 0 {
                    *first = format!("{}: {}", g.slug(), note.sentence(&seat_names));
                }
                *n += 1;
            }
        }
        if let Some(m) = &g.moves {
            let seat_names: Vec<String> = g.seats.iter().map(&name_of).collect();
            let text = transcript::moves_text(&g.setup, &g.subject, &seat_names, m);
            // The game's name (its anchor on the site) after the first line.
            let text = match text.split_once('\n') {
                Some((first, rest)) => format!("{first}\n# game: {}\n{rest}", g.slug()),
                None => text,
            };
            let mut seen = BTreeSet::new();
            for t in &g.seats {
                if !seen.insert(*t) || !want.get(t).is_some_and(|w| w.transcripts) {
                    continue;
                }
                let (parts, n_in, n_out) = moves.entry(*t).or_default();
                let fits_last = parts
                    .last()
                    .is_some_and(|p| p.len() + text.len() <= part_cap);
                if fits_last {
                    parts.last_mut().expect("a part").push_str(&text);
                    *n_in += 1;
                } else if parts.len() < TRANSCRIPT_MAIL_PARTS && text.len() <= part_cap {
                    parts.push(text.clone());
                    *n_in += 1;
                } else {
                    *n_out += 1;
                }
            }
        }
        Ok(())
    })?;
    let heading = contest_heading(&config.contest.name, c.discipline);
    let seam = seam_of(c)?;
    let tx = store.conn_mut().transaction()?;
    tx.execute(
        "UPDATE bot_contests SET state = 'finished', finished_at = ?2, results = ?3 \
         WHERE id = ?1 AND state = 'running'",
        params![
            c.id,
            now.to_rfc3339(),
            serde_json::to_string(results).expect("json")
        ],
    )?;
    // The kept folders last until the contest ends.
    tx.execute("DELETE FROM bot_folders WHERE contest_id = ?1", [c.id])?;
    let body = crate::mail::texts::render(
        "bot_results",
        &json!({
            "heading": heading,
            "table": text.trim_end(),
        }),
    )
    .map_err(|e| BotContestError::Mail(e.to_string()))?;
    let render = |name: &str, data: serde_json::Value| {
        crate::mail::texts::render(name, &data).map_err(|e| BotContestError::Mail(e.to_string()))
    };
    for r in regs {
        let w = &want[&r.team];
        let mut extra: Vec<(&str, String, String, Vec<OutAttachment>)> = Vec::new();
        if w.summary {
            let rows = tally.rows_of(r.team);
            extra.push((
                "bot_summary",
                format!(
                    "{}: your results per {}",
                    config.contest.name,
                    seam.per_what()
                ),
                render(
                    "bot_summary",
                    json!({
                        "heading": heading,
                        "per_what": seam.per_what(),
                        "transcripts": w.transcripts,
                        "team": r.team_name,
                        "table": summary_text(results, &rows).trim_end(),
                        "played": !rows.is_empty(),
                    }),
                )?,
                vec![],
            ));
        }
        let (parts, n_in, n_out) = moves.remove(&r.team).unwrap_or_default();
        let (n_not_kept, first_not_kept) = not_kept.remove(&r.team).unwrap_or_default();
        // DGP: only when a transcript of the team's games was kept, or
        // would have been but for the transcript budget (with
        // `transcripts_per_pairing = 0` none is; a mail would describe an
        // attachment that is not there).
        if w.transcripts && n_in + n_out + n_not_kept > 0 {
            let n_parts = parts.len().max(1);
            let mut parts = parts.into_iter();
            for i in 1..=n_parts {
                let part = parts.next();
                let subject = if n_parts > 1 {
                    format!(
                        "{}: the transcripts of your games (part {i} of {n_parts})",
                        config.contest.name
                    )
                } else {
                    format!("{}: the transcripts of your games", config.contest.name)
                };
                extra.push((
                    "bot_transcripts",
                    subject,
                    render(
                        "bot_transcripts",
                        json!({
                            "heading": heading,
                            "team": r.team_name,
                            "first": i == 1,
                            "n_attached": n_in,
                            "one_game": n_in == 1,
                            "n_parts": n_parts,
                            "one_part": n_parts == 1,
                            "n_left_out": n_out,
                            "n_not_kept": n_not_kept,
                            "one_not_kept": n_not_kept == 1,
                            "first_not_kept": first_not_kept,
                            "kept_per_pairing": config.site.transcripts_per_pairing,
                            "one_kept": config.site.transcripts_per_pairing == 1,
                            "one_bot": seam.seats() == 1,
                            "attachment": if n_parts > 1 {
                                format!("transcripts-{i}.txt")
                            } else {
                                "transcripts.txt".into()
                            },
                        }),
                    )?,
                    part.map(|p| OutAttachment {
                        filename: if n_parts > 1 {
                            format!("transcripts-{i}.txt")
                        } else {
                            "transcripts.txt".into()
                        },
                        content_type: "text/plain; charset=utf-8".into(),
                        bytes: p.into_bytes(),
                    })
                    .into_iter()
                    .collect(),
                ));
            }
        }
        for (kind, subject, body, attachments) in extra {
            let key = format!(
                "BOT{}:{}:{}:{subject}",
                kind.to_uppercase(),
                c.id,
                r.team_name
            );
            let m = Outgoing {
                kind,
                to: vec![r.mail_address.clone()],
                subject,
                body,
                in_reply_to: None,
                references: vec![],
                attachments,
            };
            let cause = Cause {
                event: EventKey::Unchecked(&key),
                ..Cause::default()
            };
            enqueue(&tx, &config.contest, &m, cause, now)
                .map_err(|e| BotContestError::Mail(e.to_string()))?;
        }
        let m = Outgoing {
            kind: "final",
            to: vec![r.mail_address.clone()],
            subject: format!("{}: the final results", config.contest.name),
            body: body.clone(),
            in_reply_to: None,
            references: vec![],
            attachments: vec![],
        };
        let key = format!("BOTFINAL:{}:{}", c.id, r.team_name);
        let cause = Cause {
            event: EventKey::Unchecked(&key),
            ..Cause::default()
        };
        enqueue(&tx, &config.contest, &m, cause, now)
            .map_err(|e| BotContestError::Mail(e.to_string()))?;
    }
    tx.commit()?;
    Ok(())
}

/// What each team asked for, by preference (the 1994 declarators, read
/// for bot contests as: `DGP` the transcripts of its games, `GRP` its
/// summary per opponent; everyone gets the final table). A team that named
/// none gets the seeds' default: the summary and the table.
pub(super) struct BotMailWishes {
    transcripts: bool,
    summary: bool,
}

pub(super) fn wishes(preferences: &str) -> BotMailWishes {
    let prefs = crate::mail::registration::parse_preferences(preferences).unwrap_or_default();
    use crate::mail::registration::Preference;
    if prefs.is_empty() {
        return BotMailWishes {
            transcripts: false,
            summary: true,
        };
    }
    BotMailWishes {
        transcripts: prefs.contains(&Preference::DGP),
        summary: prefs.contains(&Preference::GRP),
    }
}

/// Transcript mails per team at most, each at most `[rules]
/// max_protocol_mail_bytes` of moves forms; the other games' transcripts
/// are on the results site.
pub const TRANSCRIPT_MAIL_PARTS: usize = 5;
