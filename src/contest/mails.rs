//! The contest's mails, by preference, exactly as announced: LAP at the
//! start, LGP when a group starts, DGP/GRP/GRG/GRR when a group is finished,
//! RSM when a round is finished, a notice to a disqualified team, and the
//! final results to everyone. Each names its kind by the preference code at
//! the start of its subject; one mail per recipient per event; protocol
//! mails are split into numbered parts below a size cap.
//!
//! After each round the contest may pause (`rules.rsm_pause_minutes`) for
//! the organizer's own round summary: the organizer gets the round's
//! results and a one-time token by mail, and the RSM goes out when the
//! summary arrives (`knobeln rsm`, or `RSM round N` by mail with the token)
//! or the pause ends (then with the rankings alone). The pause is kept in
//! the store (`rsm_rounds`), so it survives a `kill -9`.
//!
//! Every mail is queued with an event key (`DGP:r1:g2:t17:p1`, …) in the
//! outbox's unique index, so an event announced again after a resume queues
//! nothing twice.

use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Utc};
use serde_json::json;

use crate::config::Config;
use crate::engine::results::{GameStatus, GroupOutcome, GroupResult, KeptGames, ResultsCache};
use crate::engine::run::{Event, Observer};
use crate::mail::registration::Preference;
use crate::mail::texts::{render, render_value};
use crate::outbox::outgoing::{prepare_body, Outgoing, PreparedBody};
use crate::outbox::{enqueue_with, Cause, EventKey};
use crate::protocol::{encode, encode_runs, GameProtocol};
use crate::referee::GameRecord;
use crate::store::mail::{all_registrations, events_queued_under, mailing_of, RegistrationRow};
use crate::store::rsm::{mark_sent, rsm_round, start_pause};
use crate::store::{packed_runs, PackedGame, Store};
use crate::tables::knobeln as tables;
use crate::tournament::{GameKey, TeamId};

/// How often a paused contest looks for the organizer's round summary.
const RSM_POLL: std::time::Duration = std::time::Duration::from_millis(500);

/// A registered participant as the mails need it.
#[derive(Debug, Clone)]
pub struct Participant {
    pub team: String,
    pub address: String,
    pub preferences: Vec<Preference>,
    /// The registration record (read for the LAP only; empty in a
    /// group's events).
    pub record: String,
}

impl Participant {
    pub fn wants(&self, p: Preference) -> bool {
        self.preferences.contains(&p)
    }
}

fn participants(rows: Vec<RegistrationRow>) -> Vec<Participant> {
    rows.into_iter()
        .map(|r| Participant {
            team: r.team_name,
            address: r.mail_address,
            preferences: parse_preferences(&r.preferences),
            record: r.record,
        })
        .collect()
}

fn parse_preferences(s: &str) -> Vec<Preference> {
    s.split(',')
        .filter_map(|p| Preference::parse(p.trim()))
        .collect()
}

/// The most of one record a LAP mail shows.
pub const LAP_RECORD_BYTES: usize = 1024;

/// The most of records one LAP mail holds (the rest are counted).
pub const LAP_MAIL_BYTES: usize = 512 * 1024;

/// The records a LAP mail shows (each cut at a line end within
/// [`LAP_RECORD_BYTES`], all within [`LAP_MAIL_BYTES`]) and how many are
/// left out. Linear in what it keeps.
pub fn lap_records<'a>(records: impl Iterator<Item = &'a str>) -> (Vec<String>, usize) {
    let mut kept = Vec::new();
    let mut bytes = 0;
    let mut left_out = 0;
    for r in records {
        let shown = if r.len() <= LAP_RECORD_BYTES {
            r.to_string()
        } else {
            let mut cut = LAP_RECORD_BYTES;
            while !r.is_char_boundary(cut) {
                cut -= 1;
            }
            let head = &r[..cut];
            let head = head.rfind('\n').map_or(head, |i| &head[..i]);
            format!("{head}\n [... the rest of this record is left out]")
        };
        if bytes + shown.len() > LAP_MAIL_BYTES {
            left_out += 1;
            continue;
        }
        bytes += shown.len();
        kept.push(shown);
    }
    (kept, left_out)
}

/// One game's compact protocol.
struct Protocol {
    slot: u32,
    players: [String; 2],
    text: String,
}

/// Queues the contest's mails; an [`Observer`] of the tournament.
pub struct Mailer<'c> {
    pub config: &'c Config,
    pub tournament: i64,
    pub now: &'c dyn Fn() -> DateTime<Utc>,
    /// The results, refreshed group by group as events come (never rebuilt
    /// whole while the contest runs).
    pub cache: std::cell::RefCell<Option<ResultsCache>>,
    /// Replays the games of a group for its protocols (DGP), made once.
    pub replayer: std::cell::RefCell<Option<crate::engine::replay::Replayer>>,
}

type MailResult = Result<(), String>;

/// What an event's mails know of the keys queued before them.
enum Queued {
    /// Nothing: each mail looks its key up (`outbox::enqueue_with`).
    Unknown,
    /// Every key queued under the event's prefixes (each of its mails'
    /// keys has one of them), looked up once for the event.
    Under(HashSet<String>),
}

impl Mailer<'_> {
    fn cached(&self, store: &Store) -> Result<std::cell::RefMut<'_, ResultsCache>, String> {
        let mut c = self.cache.borrow_mut();
        if c.is_none() {
            *c = Some(
                ResultsCache::keeping(store, self.tournament, KeptGames::UntilSettled)
                    .map_err(|e| e.to_string())?,
            );
        }
        Ok(std::cell::RefMut::map(c, |c| {
            c.as_mut().expect("the cache was just filled")
        }))
    }

    /// The registered teams in this contest's tournament: they sent a
    /// strategy with their authentification string, which only their
    /// address received, so their address is proven. Contest mails go to
    /// them only, never to a registration that took no part.
    fn taking_part(&self, store: &Store) -> Result<Vec<Participant>, String> {
        let entrants: std::collections::HashSet<String> = store
            .entries(self.tournament)
            .map_err(|e| e.to_string())?
            .into_iter()
            .map(|e| e.name)
            .collect();
        Ok(
            participants(all_registrations(store.conn()).map_err(|e| e.to_string())?)
                .into_iter()
                .filter(|p| entrants.contains(&p.team))
                .collect(),
        )
    }

    /// The registrations of `teams` (those registered), by team name:
    /// one query for the group, never the whole table (an event of one
    /// group costs the group, not the field), and read at each event (a
    /// registration may change while the contest runs).
    fn by_team(
        &self,
        store: &Store,
        teams: &[String],
    ) -> Result<HashMap<String, Participant>, String> {
        Ok(mailing_of(store.conn(), teams)
            .map_err(|e| e.to_string())?
            .into_iter()
            .map(|r| {
                let p = Participant {
                    team: r.team_name,
                    address: r.mail_address,
                    preferences: parse_preferences(&r.preferences),
                    record: String::new(),
                };
                (p.team.clone(), p)
            })
            .collect())
    }

    /// Builds and queues one event mail (once per key), inside the
    /// caller's transaction (an event's mails are committed together).
    fn queue_in(&self, conn: &rusqlite::Connection, key: &str, m: Outgoing) -> MailResult {
        self.queue_prepared(conn, key, &m, None, &Queued::Unknown)
    }

    /// [`Self::queue_in`] with the body prepared from the mail's text
    /// already (a text that many mails of the event carry, prepared once),
    /// and with the event's keys looked up already when `queued` has them
    /// (a mail of a key queued before, a resumed contest, is not built).
    fn queue_prepared(
        &self,
        conn: &rusqlite::Connection,
        key: &str,
        m: &Outgoing,
        prepared: Option<&PreparedBody>,
        queued: &Queued,
    ) -> MailResult {
        let event = match queued {
            Queued::Unknown => EventKey::Unchecked(key),
            Queued::Under(keys) if keys.contains(key) => return Ok(()),
            Queued::Under(_) => EventKey::KnownAbsent(key),
        };
        let cause = Cause {
            event,
            ..Cause::default()
        };
        enqueue_with(conn, &self.config.contest, m, prepared, cause, (self.now)())
            .map_err(|e| e.to_string())?;
        Ok(())
    }

    /// The keys queued before under each of `prefixes` (one look-up each
    /// per event, not one per mail): what [`Self::queue_prepared`] skips.
    fn queued_under(
        &self,
        conn: &rusqlite::Connection,
        prefixes: &[String],
    ) -> Result<Queued, String> {
        let mut keys = HashSet::new();
        for p in prefixes {
            keys.extend(events_queued_under(conn, p).map_err(|e| e.to_string())?);
        }
        Ok(Queued::Under(keys))
    }

    fn mail(&self, kind: &'static str, to: &str, subject: String, body: String) -> Outgoing {
        Outgoing {
            kind,
            to: vec![to.to_string()],
            subject,
            body,
            in_reply_to: None,
            references: vec![],
            attachments: vec![],
        }
    }

    /// The data become the template's context as they are (not copied).
    fn render(&self, name: &str, data: serde_json::Value) -> Result<String, String> {
        render_value(name, data).map_err(|e| e.to_string())
    }

    /// LAP: at contest start, the registration record of every team that
    /// takes part, to those of them who want it. Only teams in the
    /// tournament (they sent a strategy with their authentification
    /// string, so their address is proven) get it and are in it; each
    /// record is cut to [`LAP_RECORD_BYTES`] and the list to
    /// [`LAP_MAIL_BYTES`], so the contest's LAP mails are at most
    /// takers × `LAP_MAIL_BYTES` whatever was registered.
    pub fn lap(&self, store: &Store) -> MailResult {
        let all = self.taking_part(store)?;
        let (records, left_out) = lap_records(all.iter().map(|p| p.record.as_str()));
        let body = self.render(
            "lap",
            json!({ "contest_name": self.config.contest.name, "n": all.len(),
                    "records": records, "left_out": left_out }),
        )?;
        // Committed together.
        let tx = store
            .conn()
            .unchecked_transaction()
            .map_err(|e| e.to_string())?;
        // The same text for everyone: its body prepared once, and one mail
        // readdressed to each (the text neither copied nor built per team).
        let prepared = prepare_body(&body);
        let mut m = self.mail(
            "lap",
            "",
            "KNOBELN LAP: list of all participants".into(),
            body,
        );
        let queued = self.queued_under(&tx, &["LAP:".to_string()])?;
        for p in all.iter().filter(|p| p.wants(Preference::LAP)) {
            m.to = vec![p.address.clone()];
            let key = format!("LAP:{}", p.team);
            self.queue_prepared(&tx, &key, &m, Some(&prepared), &queued)?;
        }
        tx.commit().map_err(|e| e.to_string())
    }

    fn lgp(&self, store: &Store, round: u32, group: u32, members: &[String]) -> MailResult {
        let who = self.by_team(store, members)?;
        let body = self.render(
            "lgp",
            json!({ "contest_name": self.config.contest.name, "round": round, "group": group,
                    "n": members.len(), "members": members }),
        )?;
        // Committed together.
        let tx = store
            .conn()
            .unchecked_transaction()
            .map_err(|e| e.to_string())?;
        let queued = self.queued_under(&tx, &[format!("LGP:r{round}:g{group}:")])?;
        for m in members {
            let Some(p) = who.get(m).filter(|p| p.wants(Preference::LGP)) else {
                continue;
            };
            self.queue_prepared(
                &tx,
                &format!("LGP:r{round}:g{group}:{m}"),
                &self.mail(
                    "lgp",
                    &p.address,
                    format!("KNOBELN LGP: participants of round {round}, group {group}"),
                    body.clone(),
                ),
                None,
                &queued,
            )?;
        }
        tx.commit().map_err(|e| e.to_string())
    }

    /// The compact protocol of every played game of a group that is not
    /// cancelled (`gr`, the group's results, says which: a game cancelled
    /// by a disqualification has no protocol, even if a parallel run
    /// played it before its turn), the players' names and the rules as the
    /// results cache and the replayer hold them (no look-up per group or
    /// player). The games as this process stored them a moment ago, kept
    /// by the store's connection (`Store::with_kept_games_packed`: the group's
    /// rows not read back); if one of them is not kept (stored before a
    /// restart), the group's stored games, their throws read once or
    /// replayed and checked: the same games, so the same protocols.
    fn protocols(
        &self,
        store: &Store,
        cache: &ResultsCache,
        round: u32,
        group: u32,
        gr: &GroupResult,
    ) -> Result<Vec<Protocol>, String> {
        // Games stored for replay are played again (and checked) here.
        let mut replayer = self.replayer.borrow_mut();
        if replayer.is_none() {
            *replayer = Some(
                crate::engine::replay::Replayer::new(store, self.tournament)
                    .map_err(|e| e.to_string())?,
            );
        }
        let replayer = replayer.as_mut().expect("made above");
        let params = replayer.params();
        let name = |t: TeamId| -> Result<String, String> {
            match cache.team_name(t) {
                Some(n) => Ok(n.to_string()),
                None => store.team_name(t).map_err(|e| e.to_string()),
            }
        };
        // The games with a protocol, in slot order (as the store reads
        // them): every attempt of the group's results but the cancelled.
        let wanted: Vec<(u32, u32)> = gr
            .games
            .iter()
            .filter(|r| r.status != GameStatus::Cancelled)
            .map(|r| (r.slot, r.attempt))
            .collect();
        // The throws stay in the store's bytes where they are at hand: a
        // protocol is written from their runs, not from a vector of them.
        let mut out = Vec::with_capacity(wanted.len());
        let mut write = |key: GameKey,
                         attempt: u32,
                         players: [TeamId; 2],
                         record: GameRecord,
                         packed: Option<&[u8]>|
         -> Result<(), String> {
            let names = [name(players[0])?, name(players[1])?];
            // The game's throws move into its protocol (not copied).
            let protocol = GameProtocol::from_record(
                record,
                params,
                names.clone(),
                round,
                group,
                key.slot,
                attempt,
            );
            let text = match packed {
                None => encode(&protocol),
                Some(bytes) => {
                    let (count, runs) = packed_runs(bytes).map_err(|e| e.to_string())?;
                    encode_runs(&protocol, count, runs).map_err(|e| e.to_string())?
                }
            };
            out.push(Protocol {
                slot: key.slot,
                players: names,
                text,
            });
            Ok(())
        };
        // The games this process stored a moment ago, borrowed from the
        // store's keep: their throws' bytes not copied.
        let kept = store.with_kept_games_packed(self.tournament, round, group, &wanted, |games| {
            games.iter().try_for_each(|g| {
                write(
                    g.key,
                    g.attempt,
                    g.players,
                    g.record.clone(),
                    Some(g.packed),
                )
            })
        });
        match kept {
            Some(written) => written?,
            None => {
                let played: HashSet<u32> = wanted.iter().map(|&(slot, _)| slot).collect();
                let games = replayer
                    .group_games_packed(store, round, group)
                    .map_err(|e| e.to_string())?;
                for PackedGame { game: g, packed } in games {
                    if played.contains(&g.key.slot) {
                        write(g.key, g.attempt, g.players, g.record, packed.as_deref())?;
                    }
                }
            }
        }
        Ok(out)
    }

    /// A group's mails, from its outcome as the engine computed it (from
    /// the store if the event came without it).
    fn group_finished(
        &self,
        store: &Store,
        round: u32,
        group: u32,
        outcome: Option<&GroupOutcome>,
    ) -> MailResult {
        let mut cache = self.cached(store)?;
        match outcome {
            Some(outcome) => cache.refresh_finished_group(store, round, group, outcome),
            None => cache.refresh_group(store, round, group),
        }
        .map_err(|e| e.to_string())?;
        let cache = &*cache;
        let res = cache.results();
        let Some(rr) = res.rounds.iter().find(|r| r.number == round) else {
            return Ok(());
        };
        let Some(gr) = rr.groups.iter().find(|g| g.number == group) else {
            return Ok(());
        };
        // Every key of the group's mails but a disqualification's (rare,
        // looked up per mail) is under one of these.
        let queued = self.queued_under(
            store.conn(),
            &["DGP", "GRP", "GRG", "GRR"].map(|code| format!("{code}:r{round}:g{group}:")),
        )?;
        if matches!(&queued, Queued::Under(keys) if !keys.is_empty()) {
            // The group's mails are committed together: one of them
            // queued, all are (a resumed contest tells every finished
            // group's end again). Nothing is built, and above all no game
            // is played again for protocols no mail will carry.
            return Ok(());
        }
        let who = self.by_team(store, &gr.members)?;
        let cap = self.config.rules.max_protocol_mail_bytes.max(4096);
        // The games are replayed for their protocols only when a member
        // asked for them (DGP); a cancelled game has none (results never
        // depend on timing).
        let wants_protocols = gr
            .members
            .iter()
            .any(|m| who.get(m).is_some_and(|p| p.wants(Preference::DGP)));
        let protocols = if wants_protocols {
            self.protocols(store, cache, round, group, gr)?
        } else {
            Vec::new()
        };
        let (grg_table, grg_note) = tables::group_games(gr, rr);
        let grg_table = trim(&grg_table);
        let grr_table = tables::group_ranking(gr, rr);
        let grr_table = trim(&grr_table);
        let advancing = tables::advancing_sentence(gr, rr);
        // The group's disqualifications, found once for all its mails.
        let dqs = tables::disqualifications(gr, rr);
        // Each member's games and protocols, found in one pass over the
        // group's (not one per member's mail).
        let games_of = tables::games_by_member(gr);
        let protocols_of = protocols_by_member(&protocols);
        // The group's games and its ranking are the same mail for every
        // member: rendered once, when a member first wants it, and that
        // one mail readdressed to each (its text not copied per member:
        // GRG's is 33 kB at 400 teams).
        let mut same_for_all: HashMap<&'static str, (Outgoing, PreparedBody)> = HashMap::new();
        // The group's mails are committed together.
        let tx = store
            .conn()
            .unchecked_transaction()
            .map_err(|e| e.to_string())?;
        for m in &gr.members {
            let Some(p) = who.get(m) else { continue };
            if p.wants(Preference::DGP) {
                // The group's protocols, each encoded once for both its
                // players' mails, are borrowed here, not copied.
                let protos = protocols_of.get(m.as_str()).map_or(&[][..], Vec::as_slice);
                let parts = split_parts(protos, cap);
                let n = parts.len();
                for (i, part) in parts.into_iter().enumerate() {
                    let body = dgp_body(m, round, group, i + 1, n, &part)?;
                    let subject = if n > 1 {
                        format!("KNOBELN DGP: game protocols, round {round}, group {group} (part {} of {n})", i + 1)
                    } else {
                        format!("KNOBELN DGP: game protocols, round {round}, group {group}")
                    };
                    self.queue_prepared(
                        &tx,
                        &format!("DGP:r{round}:g{group}:{m}:p{}", i + 1),
                        &self.mail("dgp", &p.address, subject, body),
                        None,
                        &queued,
                    )?;
                }
            }
            let results_mails = [
                (Preference::GRP, "grp", "your game results"),
                (Preference::GRG, "grg", "all games"),
                (Preference::GRR, "grr", "ranking"),
            ];
            for (pref, kind, what) in results_mails {
                if !p.wants(pref) {
                    continue;
                }
                let code = pref.as_str();
                let key = format!("{code}:r{round}:g{group}:{m}");
                let subject = || format!("KNOBELN {code}: {what}, round {round}, group {group}");
                match pref {
                    Preference::GRP => {
                        let mine = games_of.get(m.as_str()).map_or(&[][..], Vec::as_slice);
                        let (grp_table, grp_note) = tables::team_games_of(gr, mine, &dqs, m);
                        let body = self.render(
                            kind,
                            json!({ "team": m, "round": round, "group": group,
                                    "table": trim(&grp_table), "note": grp_note }),
                        )?;
                        let mail = self.mail(kind, &p.address, subject(), body);
                        self.queue_prepared(&tx, &key, &mail, None, &queued)?;
                    }
                    _ => {
                        let (mail, prepared) = match same_for_all.entry(kind) {
                            Entry::Occupied(e) => {
                                let (mail, prepared) = e.into_mut();
                                mail.to[0].clone_from(&p.address);
                                (&*mail, &*prepared)
                            }
                            Entry::Vacant(e) => {
                                let data = if pref == Preference::GRG {
                                    json!({ "round": round, "group": group, "table": grg_table,
                                            "note": grg_note })
                                } else {
                                    json!({ "round": round, "group": group, "n": gr.members.len(),
                                            "table": grr_table, "advancing": advancing })
                                };
                                let body = self.render(kind, data)?;
                                let prepared = prepare_body(&body);
                                let mail = self.mail(kind, &p.address, subject(), body);
                                let (mail, prepared) = e.insert((mail, prepared));
                                (&*mail, &*prepared)
                            }
                        };
                        self.queue_prepared(&tx, &key, mail, Some(prepared), &queued)?;
                    }
                }
            }
        }
        // Disqualified teams are told why, whatever their preferences.
        for d in rr
            .disqualified
            .iter()
            .filter(|d| gr.members.contains(&d.team))
        {
            let Some(p) = who.get(&d.team) else { continue };
            let (first, second) = tables::failure_items(gr, rr, &d.team);
            let dq_game = dqs.iter().find(|x| x.team == d.team).map(|x| x.game);
            let protocol = dq_game
                .and_then(|slot| protocols.iter().find(|p| p.slot == slot))
                .map(|p| p.text.clone())
                .unwrap_or_default();
            let body = self.render(
                "disqualified",
                json!({ "team": d.team, "contest_name": self.config.contest.name, "round": round,
                        "first": first, "second": second, "protocol": protocol }),
            )?;
            self.queue_in(
                &tx,
                &format!("DQ:{}", d.team),
                self.mail(
                    "disqualified",
                    &p.address,
                    format!("KNOBELN: team {} disqualified in round {round}", d.team),
                    body,
                ),
            )?;
        }
        tx.commit().map_err(|e| e.to_string())
    }

    /// A round is finished: with `rsm_pause_minutes`, the contest pauses
    /// (once; the pause is in the store, so a killed contest resumes
    /// waiting until the same moment) and the organizer gets the round's
    /// results with a one-time token; the RSM goes out when the organizer's
    /// summary arrives or the pause ends, with the automatic summary
    /// alone. Without a pause it goes out at once (with a summary given
    /// ahead by `knobeln rsm`, if any).
    fn round_finished(&self, store: &Store, round: u32) -> MailResult {
        let err = |e: crate::store::StoreError| e.to_string();
        let state = rsm_round(store.conn(), self.tournament, round).map_err(err)?;
        if state.as_ref().is_some_and(|s| s.sent_at.is_some()) {
            return Ok(());
        }
        let minutes = self.config.rules.rsm_pause_minutes;
        if minutes > 0 {
            if state.as_ref().is_none_or(|s| s.pause_started_at.is_none()) {
                self.start_pause(store, round, minutes)?;
            }
            // (No row: no such round in the results, nothing to wait for.)
            while let Some(s) = rsm_round(store.conn(), self.tournament, round).map_err(err)? {
                let over = s.pause_ends_at.is_none_or(|end| (self.now)() >= end);
                if s.summary.is_some() || over {
                    break;
                }
                if crate::engine::run::stop_requested() {
                    return Err(format!(
                        "stopped while waiting for the organizer's summary of round {round} \
                         (the pause goes on when the contest resumes)"
                    ));
                }
                std::thread::sleep(RSM_POLL);
            }
        }
        self.rsm(store, round)
    }

    /// Starts the pause after `round` and mails the organizer the round's
    /// results and the token, in one transaction.
    fn start_pause(&self, store: &Store, round: u32, minutes: u64) -> MailResult {
        let mut cache = self.cached(store)?;
        let res = cache
            .refresh_round(store, round)
            .map_err(|e| e.to_string())?;
        let Some(rr) = res.rounds.iter().find(|r| r.number == round) else {
            return Ok(());
        };
        let now = (self.now)();
        let ends =
            now + chrono::Duration::minutes(i64::try_from(minutes).unwrap_or(i64::MAX / 60_000));
        let token = crate::auth::new_auth_string();
        let stored = crate::auth::StoredSecret::of(&token);
        let body = self.render(
            "rsm_pause",
            json!({ "contest_name": self.config.contest.name, "round": round,
                    "is_final": rr.is_final, "ends": crate::mail::commands::date(ends),
                    "organizer": self.config.contest.organizer,
                    "contest_address": self.config.contest.address, "token": token,
                    "summary": trim(&tables::round_summary(rr)) }),
        )?;
        let tx = store
            .conn()
            .unchecked_transaction()
            .map_err(|e| e.to_string())?;
        if start_pause(&tx, self.tournament, round, now, ends, &stored)
            .map_err(|e| e.to_string())?
        {
            let m = self.mail(
                "rsm_pause",
                &self.config.contest.organizer,
                // The subject an answer needs, so that a reply ("Re: RSM
                // round 2") is the command.
                format!("RSM round {round}"),
                body,
            );
            self.queue_in(&tx, &format!("RSMPAUSE:r{round}"), m)?;
        }
        tx.commit().map_err(|e| e.to_string())
    }

    /// RSM: the organizer's summary (if any), the note file's paragraph
    /// and every group's ranking, to every RSM subscriber; marked sent in
    /// the same transaction.
    fn rsm(&self, store: &Store, round: u32) -> MailResult {
        let mut cache = self.cached(store)?;
        let res = cache
            .refresh_round(store, round)
            .map_err(|e| e.to_string())?;
        let Some(rr) = res.rounds.iter().find(|r| r.number == round) else {
            return Ok(());
        };
        let note = match &self.config.rules.rsm_note_file {
            Some(f) => std::fs::read_to_string(f)
                .ok()
                .map(|s| s.trim_end().to_string()),
            None => None,
        };
        let organizer_text = rsm_round(store.conn(), self.tournament, round)
            .map_err(|e| e.to_string())?
            .and_then(|s| s.summary);
        let body = self.render(
            "rsm",
            json!({ "contest_name": self.config.contest.name, "round": round, "is_final": rr.is_final,
                    "organizer_text": organizer_text, "note": note,
                    "summary": trim(&tables::round_summary(rr)) }),
        )?;
        let all = self.taking_part(store)?;
        let tx = store
            .conn()
            .unchecked_transaction()
            .map_err(|e| e.to_string())?;
        let queued = self.queued_under(&tx, &[format!("RSM:r{round}:")])?;
        for p in all.iter().filter(|p| p.wants(Preference::RSM)) {
            self.queue_prepared(
                &tx,
                &format!("RSM:r{round}:{}", p.team),
                &self.mail(
                    "rsm",
                    &p.address,
                    format!("KNOBELN RSM: summary of round {round}"),
                    body.clone(),
                ),
                None,
                &queued,
            )?;
        }
        let kind = if organizer_text.is_some() {
            "organizer"
        } else {
            "automatic"
        };
        mark_sent(&tx, self.tournament, round, kind, (self.now)()).map_err(|e| e.to_string())?;
        tx.commit().map_err(|e| e.to_string())
    }

    /// The final ranking and the Evolution ranking, to every team that took
    /// part.
    pub fn final_results(&self, store: &Store) -> MailResult {
        let mut cache = self.cached(store)?;
        let res = cache.refresh_all(store).map_err(|e| e.to_string())?;
        let plot = crate::site::evolution_svg(res);
        let (evolution_intro, evolution) = tables::evolution_text(res);
        let body = self.render(
            "final",
            json!({ "contest_name": self.config.contest.name, "plot": plot.is_some(),
                    "ranking": trim(&tables::final_ranking(res)), "evolution_intro": evolution_intro,
                    "evolution": trim(&evolution) }),
        )?;
        let all = self.taking_part(store)?;
        // The same text for everyone: its body prepared once.
        let prepared = prepare_body(&body);
        // Committed together.
        let tx = store
            .conn()
            .unchecked_transaction()
            .map_err(|e| e.to_string())?;
        // One mail readdressed to each (LAP's way).
        let mut m = self.mail("final", "", "KNOBELN: the final results".into(), body);
        if let Some(svg) = plot {
            m.attachments.push(crate::outbox::outgoing::OutAttachment {
                filename: "evolution.svg".into(),
                content_type: "image/svg+xml".into(),
                bytes: svg.into_bytes(),
            });
        }
        let queued = self.queued_under(&tx, &["FINAL:".to_string()])?;
        for p in &all {
            m.to = vec![p.address.clone()];
            let key = format!("FINAL:{}", p.team);
            self.queue_prepared(&tx, &key, &m, Some(&prepared), &queued)?;
        }
        tx.commit().map_err(|e| e.to_string())
    }
}

impl Observer for Mailer<'_> {
    fn event(&mut self, store: &Store, event: &Event) -> Result<(), String> {
        match event {
            Event::GroupStarted {
                round,
                group,
                members,
            } => {
                // The members' names, one lookup each (not the field's).
                let members = members
                    .iter()
                    .map(|&t| store.team_name(t))
                    .collect::<Result<Vec<String>, _>>()
                    .map_err(|e| e.to_string())?;
                self.lgp(store, *round, *group, &members)
            }
            Event::GroupFinished {
                round,
                group,
                outcome,
            } => self.group_finished(store, *round, *group, outcome.as_deref()),
            Event::RoundFinished { round, .. } => self.round_finished(store, *round),
            _ => Ok(()),
        }
    }
}

/// Each player's protocols (in the group's order, a self-game's once):
/// one pass over the group's protocols for all its members' DGP mails.
fn protocols_by_member(protocols: &[Protocol]) -> HashMap<&str, Vec<&str>> {
    let mut by: HashMap<&str, Vec<&str>> = HashMap::new();
    for p in protocols {
        by.entry(&p.players[0]).or_default().push(&p.text);
        if p.players[1] != p.players[0] {
            by.entry(&p.players[1]).or_default().push(&p.text);
        }
    }
    by
}

/// A table without its last line end (the templates end its line).
fn trim(table: &str) -> &str {
    table.trim_end_matches('\n')
}

/// A DGP mail's text: the `dgp` template, the protocols of `part` in it.
/// Only the few lines above them are rendered: the protocols are written
/// into the text as they are, not passed through the template and the
/// mail text's preparation ([`crate::mail::texts::mail_text`]), which
/// leave a protocol unchanged (7-bit ASCII, lines of at most 72
/// characters, no tabs, no trailing blanks: `crate::protocol`'s format).
/// The same text as the template with the protocols in it
/// (`a_dgp_body_is_the_templates_text`).
fn dgp_body(
    team: &str,
    round: u32,
    group: u32,
    part: usize,
    parts: usize,
    protocols: &str,
) -> Result<String, String> {
    // The template ends with `{{protocols}}` and a line end: rendered
    // without them, it ends with that line end, where they go in.
    let mut body = render(
        "dgp",
        &json!({ "team": team, "round": round, "group": group, "several": parts > 1,
                 "part": part, "parts": parts, "protocols": "" }),
    )
    .map_err(|e| e.to_string())?;
    let Some(head) = body.strip_suffix('\n') else {
        return Err("the dgp template does not end with its protocols' line".into());
    };
    body.truncate(head.len());
    body.reserve(protocols.len() + 1);
    body.push_str(protocols);
    body.push('\n');
    Ok(body)
}

/// Splits protocols into parts of at most `cap` bytes (a protocol is never split).
pub fn split_parts<S: AsRef<str>>(protocols: &[S], cap: usize) -> Vec<String> {
    let mut parts = vec![String::new()];
    for p in protocols {
        let p = p.as_ref();
        let last = parts.last_mut().expect("one part");
        if !last.is_empty() && last.len() + p.len() + 1 > cap {
            parts.push(String::new());
        }
        let last = parts.last_mut().expect("one part");
        if !last.is_empty() {
            last.push('\n');
        }
        last.push_str(p);
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 35: a LAP mail is bounded whatever was registered: each
    /// record cut at a line end within 1 kB, the list within 512 kB, the
    /// rest counted.
    #[test]
    fn a_lap_mail_is_bounded_whatever_was_registered() {
        let long: String = (0..400).map(|i| format!(" member line {i}\n")).collect();
        let (kept, left) = lap_records([long.as_str(), "short record"].into_iter());
        assert_eq!(left, 0);
        assert!(kept[0].len() <= LAP_RECORD_BYTES + 60, "{}", kept[0].len());
        assert!(kept[0].ends_with("[... the rest of this record is left out]"));
        assert_eq!(kept[1], "short record");
        let many: Vec<String> = (0..2000)
            .map(|i| format!("record {i} {}", "x".repeat(900)))
            .collect();
        let (kept, left) = lap_records(many.iter().map(String::as_str));
        let bytes: usize = kept.iter().map(String::len).sum();
        assert!(bytes <= LAP_MAIL_BYTES);
        assert_eq!(kept.len() + left, 2000);
        assert!(left > 1000);
    }

    /// A DGP mail's text written around its protocols is the template's
    /// text with the protocols in it, byte for byte: one part or several,
    /// any team name, protocols of odd texts and long failures.
    #[test]
    fn a_dgp_body_is_the_templates_text() {
        let mut g = crate::seed::SplitMix64::new(38);
        let protos: Vec<String> = (0..12)
            .map(|_| encode(&crate::protocol::tests::random_protocol(&mut g)))
            .collect();
        let teams = [
            "t00001",
            "the_heavy_lords_of_knobeln",
            &"long_team_name_".repeat(8),
        ];
        for team in teams {
            for cap in [4096, 1 << 20] {
                let parts = split_parts(&protos, cap);
                let n = parts.len();
                for (i, part) in parts.iter().enumerate() {
                    let want = render(
                        "dgp",
                        &json!({ "team": team, "round": 2, "group": 7, "several": n > 1,
                                 "part": i + 1, "parts": n, "protocols": part }),
                    )
                    .unwrap();
                    assert_eq!(dgp_body(team, 2, 7, i + 1, n, part).unwrap(), want);
                }
            }
        }
    }

    #[test]
    fn protocol_parts_stay_below_the_cap_and_keep_protocols_whole() {
        let protos: Vec<String> = (0..10)
            .map(|i| format!("P{i}-{}", "x".repeat(95)))
            .collect();
        let parts = split_parts(&protos, 350);
        assert_eq!(parts.len(), 4);
        assert!(parts.iter().all(|p| p.len() <= 350));
        assert_eq!(parts.join("\n"), protos.join("\n"));
        assert_eq!(split_parts(&protos, 1 << 20).len(), 1);
    }

    /// A group's protocols the way the mailer made them before (issue 38):
    /// the rules from the tournament's row, every stored attempt read and
    /// replayed by a replayer of its own, each player's name looked up in
    /// the store, then the protocols of cancelled games dropped.
    fn protocols_as_before(
        store: &Store,
        tournament: i64,
        round: u32,
        group: u32,
        gr: &GroupResult,
    ) -> Vec<(u32, [String; 2], String)> {
        let row = store.tournament(tournament).unwrap();
        let cfg: crate::engine::run::TournamentConfig = serde_json::from_str(&row.config).unwrap();
        let params = cfg.referee.params;
        let games = crate::engine::replay::Replayer::new(store, tournament)
            .unwrap()
            .group_games(store, round, group)
            .unwrap();
        let mut out: Vec<(u32, [String; 2], String)> = games
            .into_iter()
            .map(|g| {
                let players = g.players.map(|p| store.team_name(p).unwrap());
                let text = encode(&GameProtocol::from_record(
                    g.record,
                    params,
                    players.clone(),
                    round,
                    group,
                    g.key.slot,
                    g.attempt,
                ));
                (g.key.slot, players, text)
            })
            .collect();
        out.retain(|(slot, _, _)| {
            gr.games
                .iter()
                .any(|g| g.slot == *slot && g.status != "cancelled")
        });
        out
    }

    /// [`Synthetic`](crate::engine::synthetic::Synthetic)'s games (team
    /// 1 crashes in each game it plays first: a failure, a rescheduled
    /// game, then its disqualification) with throws drawn from each
    /// game's seed, so that the protocols have throws to show.
    struct WithThrows(crate::engine::synthetic::Synthetic);

    impl crate::engine::pool::Runner for WithThrows {
        fn capacity(&self) -> usize {
            self.0.capacity()
        }
        fn submit(&self, job: crate::engine::pool::Job) {
            self.0.submit(job)
        }
        fn next_done(&self) -> Option<crate::engine::pool::Done> {
            let mut d = self.0.next_done()?;
            if let Some(r) = d.record_mut() {
                let mut g = crate::seed::SplitMix64::new(r.seed);
                let n = 1 + g.below(300);
                r.throws = (0..n)
                    .map(|_| {
                        let p = 1 + g.below(12288) as i64;
                        let q = if g.below(3) == 0 {
                            p
                        } else {
                            1 + g.below(12288) as i64
                        };
                        [p, q]
                    })
                    .collect();
            }
            Some(d)
        }
    }

    /// At each group's end, the mailer's protocols and the ones made the
    /// old way.
    struct BothWays<'c> {
        mailer: Mailer<'c>,
        tournament: i64,
        /// Groups compared, and of them the ones with a failure, a
        /// rescheduled game and a disqualification.
        groups: usize,
        with_all_three: usize,
    }

    impl Observer for BothWays<'_> {
        fn event(&mut self, store: &Store, event: &Event) -> Result<(), String> {
            let Event::GroupFinished { round, group, .. } = *event else {
                return Ok(());
            };
            let mut cache = self.mailer.cached(store)?;
            cache.refresh_group(store, round, group).unwrap();
            let cache = &*cache;
            let rr = cache
                .results()
                .rounds
                .iter()
                .find(|r| r.number == round)
                .unwrap();
            let gr = rr.groups.iter().find(|g| g.number == group).unwrap();
            let protocols = self.mailer.protocols(store, cache, round, group, gr)?;
            // Each member's protocols and GRP table as its mails had them,
            // found by going over the whole group for each member.
            let protocols_of = protocols_by_member(&protocols);
            let games_of = tables::games_by_member(gr);
            let dqs = tables::disqualifications(gr, rr);
            for m in &gr.members {
                let filtered: Vec<&str> = protocols
                    .iter()
                    .filter(|p| p.players.contains(m))
                    .map(|p| p.text.as_str())
                    .collect();
                assert_eq!(
                    protocols_of.get(m.as_str()).cloned().unwrap_or_default(),
                    filtered,
                    "{m}"
                );
                let mine = games_of.get(m.as_str()).map_or(&[][..], Vec::as_slice);
                assert_eq!(
                    tables::team_games_of(gr, mine, &dqs, m),
                    tables::team_games_with(gr, &dqs, m),
                    "{m}"
                );
            }
            let new: Vec<(u32, [String; 2], String)> = protocols
                .into_iter()
                .map(|p| (p.slot, p.players, p.text))
                .collect();
            let old = protocols_as_before(store, self.tournament, round, group, gr);
            assert_eq!(new, old, "round {round}, group {group}");
            assert!(!new.is_empty());
            self.groups += 1;
            let failure = new.iter().any(|(_, _, t)| t.contains("\nfail P "));
            let rescheduled = gr.games.iter().any(|g| g.status == "discarded");
            let disqualified = rr.disqualified.iter().any(|d| gr.members.contains(&d.team));
            if failure && rescheduled && disqualified {
                self.with_all_three += 1;
            }
            Ok(())
        }
    }

    /// Issue 38: the DGP protocols made from the group's results (names,
    /// which games are cancelled) and the replayer's rules are, byte for
    /// byte, the ones made by reading the tournament's row and each
    /// player's name per group; each member's protocols and GRP table
    /// found from the group's games indexed once are the ones found by
    /// going over the group's games for each member: every group of a
    /// contest, one of them with a failure, a rescheduled game and a
    /// disqualification.
    #[test]
    fn a_groups_protocols_and_tables_are_the_ones_made_the_old_way() {
        use crate::engine::pool::Runner;
        use crate::engine::run::run_tournament_with;
        use crate::engine::synthetic::Synthetic;
        use crate::engine::EngineError;
        use crate::referee::RefereeConfig;

        let mut store = Store::open_in_memory().unwrap();
        let tid = crate::engine::results::stand_in_tournament(&mut store, 7, 90);
        let mail_config = Config::default();
        let mail_now = Utc::now;
        let mut observer = BothWays {
            mailer: Mailer {
                config: &mail_config,
                tournament: tid,
                now: &mail_now,
                cache: Default::default(),
                replayer: Default::default(),
            },
            tournament: tid,
            groups: 0,
            with_all_three: 0,
        };
        let factory = |_: &RefereeConfig| -> Result<Box<dyn Runner>, EngineError> {
            Ok(Box::new(WithThrows(Synthetic::new(
                "crashed (signal 11 %, = \u{e4}: an odd reason)",
            ))))
        };
        run_tournament_with(
            &mut store,
            tid,
            &factory,
            &crate::engine::SystemClock,
            &mut observer,
        )
        .unwrap();
        assert!(observer.groups >= 4, "{}", observer.groups);
        assert!(observer.with_all_three >= 1);
    }

    /// The mailer, and between group 1's and group 2's finishing (of the
    /// first round) a change of two registrations of group 2: `moved`'s
    /// address, `dropped`'s preferences (GRP no more).
    struct ChangedMidContest<'c> {
        mailer: Mailer<'c>,
        tournament: i64,
        changed: Option<(String, String)>,
    }

    impl Observer for ChangedMidContest<'_> {
        fn event(&mut self, store: &Store, event: &Event) -> Result<(), String> {
            self.mailer.event(store, event)?;
            if matches!(
                event,
                Event::GroupFinished {
                    round: 1,
                    group: 1,
                    ..
                }
            ) {
                let second = &store.groups(self.tournament, 1).unwrap()[1];
                let (moved, dropped) = (second[0], second[1]);
                let conn = store.conn();
                crate::store::admin::set_address(conn, moved, "moved@new.example", "", "").unwrap();
                crate::store::admin::set_preferences(conn, dropped, "LGP,GRR", "").unwrap();
                self.changed = Some((
                    store.team_name(moved).unwrap(),
                    store.team_name(dropped).unwrap(),
                ));
            }
            Ok(())
        }
    }

    /// A registration changed while a contest runs (an organizer's
    /// `set_address` or `set_preferences`, or the team's own mail) changes
    /// the mails of the next group's event: the mailer reads the group's
    /// registrations at each event, keeps none from before.
    #[test]
    fn a_registration_changed_mid_contest_changes_the_next_groups_mails() {
        use crate::engine::pool::Runner;
        use crate::engine::run::run_tournament_with;
        use crate::engine::synthetic::Synthetic;
        use crate::engine::EngineError;
        use crate::referee::RefereeConfig;

        let mut store = Store::open_in_memory().unwrap();
        let now = Utc::now();
        let tid = crate::engine::results::stand_in_tournament(&mut store, 5, 50);
        let at = crate::store::timestamp(now);
        for e in store.entries(tid).unwrap() {
            store
                .conn()
                .execute(
                    "INSERT INTO registrations (team_id, mail_address, requested_name, \
                     preferences, organization, members, record, auth_salt, auth_hash, \
                     registered_at, mailbox) \
                     VALUES (?1, ?2, ?3, 'LGP,GRP,GRR', 'Org', '[]', '', x'00', x'00', ?4, ?2)",
                    rusqlite::params![e.team.0, format!("{}@old.example", e.name), e.name, at],
                )
                .unwrap();
        }
        let mail_config = Config::default();
        let mail_now = Utc::now;
        let mut observer = ChangedMidContest {
            mailer: Mailer {
                config: &mail_config,
                tournament: tid,
                now: &mail_now,
                cache: Default::default(),
                replayer: Default::default(),
            },
            tournament: tid,
            changed: None,
        };
        let factory = |_: &RefereeConfig| -> Result<Box<dyn Runner>, EngineError> {
            Ok(Box::new(Synthetic::new("crashed")))
        };
        run_tournament_with(
            &mut store,
            tid,
            &factory,
            &crate::engine::SystemClock,
            &mut observer,
        )
        .unwrap();
        let (moved, dropped) = observer.changed.clone().expect("group 1 finished");
        // (event key, recipients) of the results mails of round 1's group.
        let mails_of = |group: u32, team: &str| -> Vec<(String, String)> {
            let mut st = store
                .conn()
                .prepare(
                    "SELECT event_key, recipients FROM outbox \
                     WHERE event_key LIKE ?1 ORDER BY event_key",
                )
                .unwrap();
            st.query_map([format!("G%:r1:g{group}:{team}")], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .unwrap()
            .map(|r| r.unwrap())
            .collect()
        };
        let first: Vec<String> = store.groups(tid, 1).unwrap()[0]
            .iter()
            .map(|&t| store.team_name(t).unwrap())
            .collect();
        // Group 1, before the change: GRP and GRR to the old addresses.
        for m in &first {
            let to = format!("[\"{m}@old.example\"]");
            assert_eq!(
                mails_of(1, m),
                [
                    (format!("GRP:r1:g1:{m}"), to.clone()),
                    (format!("GRR:r1:g1:{m}"), to)
                ],
                "{m}"
            );
        }
        // Group 2, after it: the moved team's mails go to its new address,
        // the other's GRP is gone, the rest are as they were.
        assert_eq!(
            mails_of(2, &moved),
            [
                (
                    format!("GRP:r1:g2:{moved}"),
                    "[\"moved@new.example\"]".to_string()
                ),
                (
                    format!("GRR:r1:g2:{moved}"),
                    "[\"moved@new.example\"]".to_string()
                )
            ]
        );
        assert_eq!(
            mails_of(2, &dropped),
            [(
                format!("GRR:r1:g2:{dropped}"),
                format!("[\"{dropped}@old.example\"]")
            )]
        );
        let second: Vec<String> = store.groups(tid, 1).unwrap()[1]
            .iter()
            .map(|&t| store.team_name(t).unwrap())
            .collect();
        assert!(second.len() > 2);
        for m in second.iter().filter(|m| **m != moved && **m != dropped) {
            assert_eq!(mails_of(2, m).len(), 2, "{m}");
        }
    }
}

#[cfg(test)]
mod killed_between_commits {
    //! A kill between a group's (or a round's) end commit and its mails'
    //! transaction (B14's gap).
    use super::*;
    use crate::engine::pool::Runner;
    use crate::engine::run::run_tournament_with;
    use crate::engine::synthetic::Synthetic;
    use crate::engine::EngineError;
    use crate::referee::RefereeConfig;
    use crate::store::Store;

    /// The mailer, and the process "killed" at the `at`-th end told
    /// (a group's or a round's, counted from 1): the end is committed,
    /// the observer fails before the mailer hears of it, as a `kill -9`
    /// there would leave the store; nothing more is written.
    struct KilledAt<'c> {
        mailer: Mailer<'c>,
        at: usize,
        ends: usize,
    }

    impl Observer for KilledAt<'_> {
        fn event(&mut self, store: &Store, event: &Event) -> Result<(), String> {
            if matches!(
                event,
                Event::GroupFinished { .. } | Event::RoundFinished { .. }
            ) {
                self.ends += 1;
                if self.ends == self.at {
                    return Err("killed".into());
                }
            }
            self.mailer.event(store, event)
        }
    }

    /// A fresh tournament of `n` teams, each registered for every mail.
    fn contest(n: usize) -> (Store, i64) {
        let mut store = Store::open_in_memory().unwrap();
        let tid = crate::engine::results::stand_in_tournament(&mut store, 11, n);
        let at = crate::store::timestamp(Utc::now());
        for e in store.entries(tid).unwrap() {
            store
                .conn()
                .execute(
                    "INSERT INTO registrations (team_id, mail_address, requested_name, \
                     preferences, organization, members, record, auth_salt, auth_hash, \
                     registered_at, mailbox) \
                     VALUES (?1, ?2, ?3, 'LAP,LGP,DGP,GRP,GRG,GRR,RSM', 'Org', '[]', '', \
                     x'00', x'00', ?4, ?2)",
                    rusqlite::params![e.team.0, format!("{}@x.example", e.name), e.name, at],
                )
                .unwrap();
        }
        (store, tid)
    }

    /// Every contest mail queued: (event key, recipients, subject, text
    /// without its Message-ID), sorted.
    fn queued(store: &Store) -> Vec<(String, String, String, String)> {
        let mut st = store
            .conn()
            .prepare(
                "SELECT event_key, recipients, subject, message_id, raw FROM outbox \
                 WHERE event_key IS NOT NULL",
            )
            .unwrap();
        let mut all: Vec<_> = st
            .query_map([], |r| {
                let id: String = r.get(3)?;
                let raw: Vec<u8> = r.get(4)?;
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    String::from_utf8_lossy(&raw).replace(&id, "<id>"),
                ))
            })
            .unwrap()
            .map(|r| r.unwrap())
            .collect();
        all.sort();
        all
    }

    /// Plays the contest with the observer `killed_at` (0: never killed),
    /// then resumes it with a fresh mailer (a new process's) to its end:
    /// the mails queued, and the ends told to the first observer.
    fn played(n: usize, killed_at: usize) -> (Vec<(String, String, String, String)>, usize) {
        let (mut store, tid) = contest(n);
        let config = Config::default();
        let now = chrono::DateTime::parse_from_rfc3339("2026-12-01T00:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let clock = move || now;
        let mailer = || Mailer {
            config: &config,
            tournament: tid,
            now: &clock,
            cache: Default::default(),
            replayer: Default::default(),
        };
        let factory = |_: &RefereeConfig| -> Result<Box<dyn Runner>, EngineError> {
            Ok(Box::new(Synthetic::new("crashed")))
        };
        let mut first = KilledAt {
            mailer: mailer(),
            at: killed_at,
            ends: 0,
        };
        let run = run_tournament_with(
            &mut store,
            tid,
            &factory,
            &crate::engine::SystemClock,
            &mut first,
        );
        if killed_at == 0 {
            run.unwrap();
        } else {
            assert!(
                matches!(run, Err(EngineError::Observer(ref e)) if e == "killed"),
                "end {killed_at}: {:?}",
                run.err()
            );
            let mut again = mailer();
            run_tournament_with(
                &mut store,
                tid,
                &factory,
                &crate::engine::SystemClock,
                &mut again,
            )
            .unwrap_or_else(|e| panic!("resumed after end {killed_at}: {e}"));
        }
        (queued(&store), first.ends)
    }

    /// B14's open case: killed between any group's or round's end commit
    /// and its mails' transaction, the resumed contest queues every mail
    /// exactly once and as the contest never killed queues it.
    #[test]
    fn a_contest_killed_between_an_ends_commit_and_its_mails_queues_each_mail_once() {
        let (want, ends) = played(90, 0);
        let kinds: std::collections::BTreeSet<String> = want
            .iter()
            .map(|m| m.0.split(':').take(3).collect::<Vec<_>>().join(":"))
            .collect();
        assert!(
            want.iter().any(|m| m.0.starts_with("GRR:r2:")),
            "two rounds: {kinds:?}"
        );
        assert!(want.iter().any(|m| m.0.starts_with("RSM:r1:")));
        let keys: HashSet<&String> = want.iter().map(|m| &m.0).collect();
        assert_eq!(keys.len(), want.len(), "a key twice");
        assert!(ends > 4, "{ends}");
        for at in 1..=ends {
            let (got, _) = played(90, at);
            assert_eq!(got.len(), want.len(), "killed at end {at} of {ends}");
            for (g, w) in got.iter().zip(&want) {
                assert_eq!(g, w, "killed at end {at} of {ends}");
            }
        }
    }
}
