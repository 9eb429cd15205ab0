//! The strangers' budget at intake, on an in-memory store: a flood from
//! many forged senders past it, participants' mails beside it, its shares
//! and its renewal after 24 hours.

use chrono::{DateTime, Duration, Utc};

use super::*;
use crate::mail::inbox::Capped;
use crate::mail::process::tests::{auth, team};
use crate::referee::RefereeConfig;
use crate::store::Store;

/// A config whose budget is 20 strangers' mails in 24 hours, 8 per domain
/// and 3 per sender.
fn config() -> Config {
    let mut c = Config::default();
    c.limits.stranger_mails_per_day = 20;
    c.limits.stranger_mails_per_domain_per_day = 8;
    c.limits.stranger_mails_per_sender_per_day = 3;
    c
}

/// Bob's registration, waiting for his address to confirm: the
/// announcement's example under his address and team name.
static BOBS_FORM: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    crate::mail::registration::tests::EXAMPLE
        .replace("our.team@machine.domain.alfdkj", "bob@newcomer.example")
        .replace("the_heavy_lords_of_knobeln", "bobs_team")
});

/// A registered team whose address proved itself (here as if its first
/// mail with its string had come): its mailbox has a share of its own.
fn proven_team(store: &Store, name: &str) -> crate::tournament::TeamId {
    let id = team(store, name);
    db::mark_proven(store.conn(), id, Utc::now()).unwrap();
    id
}

fn mail(n: u32, from: &str, subject: &str, body: &str) -> Capped {
    let raw = format!(
        "From: {from}\r\nTo: knobeln@contest.example\r\nSubject: {subject}\r\n\
         Message-ID: <b{n}@x.example>\r\n\r\n{body}\r\n"
    );
    Capped::from_bytes(raw.as_bytes(), 512 * 1024)
}

/// The organizer's summary of round 1 (mail `n`) carrying `token`, its
/// text after the token's line.
fn summary_mail(n: u32, organizer: &str, token: &str, text: &str) -> Capped {
    mail(
        n,
        organizer,
        "RSM round 1",
        &format!("<<RSM>> {token}\n\n{text}"),
    )
}

fn take(store: &Store, config: &Config, m: &Capped, now: DateTime<Utc>) -> Option<i64> {
    take_in_within_budget(store.conn(), config, "test", None, m, now)
        .unwrap()
        .stored()
}

/// The outcome written on the inbox row `id`.
fn outcome_of(store: &Store, id: i64) -> String {
    store
        .conn()
        .query_row("SELECT outcome FROM inbox WHERE id = ?1", [id], |r| {
            r.get(0)
        })
        .unwrap()
}

/// (state, bytes of raw, bytes of the whole row's columns, charged)
fn row(store: &Store, id: i64) -> (String, i64, i64, bool) {
    store
        .conn()
        .query_row(
            "SELECT state, length(CAST(raw AS BLOB)),
                    length(CAST(raw AS BLOB)) + length(origin) + coalesce(length(message_id), 0)
                    + length(dedupe_key) + length(received_at) + length(state)
                    + coalesce(length(outcome), 0) + coalesce(length(processed_at), 0) + 64,
                    stranger_sender IS NOT NULL
               FROM inbox WHERE id = ?1",
            [id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .unwrap()
}

/// A registration of `mailbox` (at newcomer.example) waiting for the
/// answer with `code`, requested by `requested_by`.
fn pending_confirmation(store: &Store, mailbox: &str, requested_by: &str, code: &str) {
    db::insert_pending_registration(
        store.conn(),
        &db::NewPending {
            mail_address: mailbox,
            mailbox,
            domain: "newcomer.example",
            requested_by,
            body: &BOBS_FORM,
            code_hash: &crate::engine::prepare::sha256_hex(code.as_bytes()),
        },
        Utc::now(),
    )
    .unwrap();
}

/// The strangers' budget of the day spent by 30 strangers' mails.
fn spend_the_strangers_budget(store: &Store, config: &Config, now: DateTime<Utc>) {
    for i in 0..30u32 {
        let from = format!("s{i}@d{i}.example");
        take(store, config, &mail(i, &from, "help", "hi"), now).unwrap();
    }
}

/// The attack: 300 mails of 20 kB from forged senders at 30 domains (and
/// one sender sending 10). The inbox keeps 20 of them whole, every other
/// as a key row under 1 KiB; then a proven team's status, a mail from a
/// registered team's mailbox and the answer to a confirmation request are
/// stored whole, uncharged, and answered at once. Before the budget,
/// every one of the 300 was stored whole (6 MB).
#[test]
fn a_flood_from_forged_senders_past_the_budget_keeps_keys_only_and_participants_pass() {
    let store = Store::open_in_memory().unwrap();
    let config = config();
    proven_team(&store, "millers");
    let code = "c0de4bob";
    pending_confirmation(&store, "bob@newcomer.example", "ann@newcomer.example", code);
    let now = Utc::now();
    let filler = "x".repeat(20_000);
    let mut ids = Vec::new();
    for i in 0..300u32 {
        let from = if i < 10 {
            "eve+flood@one.example".to_string()
        } else {
            format!("s{i}@d{}.example", i % 30)
        };
        ids.push(take(&store, &config, &mail(i, &from, "help", &filler), now).unwrap());
    }
    let rows: Vec<_> = ids.iter().map(|&id| row(&store, id)).collect();
    let whole: Vec<_> = rows.iter().filter(|r| r.1 > 0).collect();
    assert_eq!(whole.len(), 20, "the budget in all");
    assert!(whole.iter().all(|r| r.0 == "new" && r.3));
    // The one sender got its 3, never more.
    assert_eq!(rows[..10].iter().filter(|r| r.1 > 0).count(), 3);
    for r in rows.iter().filter(|r| r.1 == 0) {
        assert_eq!(r.0, "ignored");
        assert!(!r.3, "a key row is not charged");
        assert!(r.2 < 1024, "a key row under 1 KiB: {r:?}");
    }
    let bytes: i64 = rows.iter().map(|r| r.2).sum();
    assert!(
        bytes < 20 * 21_000 + 280 * 1024,
        "the inbox's bytes of the flood: {bytes}"
    );
    let outcome = outcome_of(&store, ids[299]);
    assert!(
        outcome.contains("20 mails from strangers in all in 24 hours already"),
        "{outcome}"
    );

    // The participants, after the flood.
    let take_now = |m: Capped| take(&store, &config, &m, now).unwrap();
    let status = take_now(mail(
        1000,
        "x@forged.example",
        "status",
        &format!("<<FROM>> millers {}", auth("millers")),
    ));
    let mailbox = take_now(mail(1001, "Millers+x@Lords.Example", "help", "hello"));
    let confirm = take_now(mail(
        1002,
        "bob@newcomer.example",
        &format!("Re: KNOBELN: please confirm your address ({code})"),
        "yes",
    ));
    // A stranger still gets a key row; a wrong code is a stranger's.
    let stranger = take_now(mail(1003, "new@fresh.example", "help", "hi"));
    let wrong = take_now(mail(
        1004,
        "bob@newcomer.example",
        "Re: KNOBELN: please confirm your address (WRONG)",
        "yes",
    ));
    for id in [status, mailbox, confirm] {
        let r = row(&store, id);
        assert!(
            r.0 == "new" && r.1 > 0 && !r.3,
            "a participant's mail {id}: {r:?} {:?}",
            db::inbox_state(store.conn(), id)
        );
    }
    for id in [stranger, wrong] {
        assert_eq!(row(&store, id).1, 0, "a stranger's past the budget");
    }
    // Answered at once: no stranger waits before them but the 20 whole.
    let mut store = store;
    crate::mail::process::process_pending(
        &mut store,
        &config,
        &RefereeConfig::default(),
        &Utc::now,
    )
    .unwrap();
    for id in [status, mailbox, confirm] {
        let (state, outcome, _) = db::inbox_state(store.conn(), id).unwrap();
        assert_eq!(state, "done", "{outcome:?}");
    }
    let accepted: u32 = store
        .conn()
        .query_row(
            "SELECT COUNT(*) FROM outbox WHERE inbox_id = ?1 AND subject LIKE '%registration accepted%'",
            [confirm],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(
        accepted,
        1,
        "the confirmation registers bob: {:?}",
        db::inbox_state(store.conn(), confirm)
    );
    for id in [status, mailbox] {
        let replies: u32 = store
            .conn()
            .query_row(
                "SELECT COUNT(*) FROM outbox WHERE inbox_id = ?1 AND recipients LIKE '%millers%'",
                [id],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(replies, 1, "mail {id} is answered");
    }
}

/// The budget counts the last 24 hours, as the reply caps do: 23 hours 59
/// minutes after a flood a stranger's mail is still a key row; just over
/// 24 hours after, it is taken whole again. The shares: a sender past its 3 and a
/// domain past its 8 leave room for others.
#[test]
fn the_budget_renews_after_24_hours_and_its_shares_leave_room_for_others() {
    let store = Store::open_in_memory().unwrap();
    let config = config();
    let t0 = Utc::now() - Duration::days(3);
    let whole = |id: i64| row(&store, id).1 > 0;
    let mut n = 0;
    let mut next = |from: &str, at: DateTime<Utc>| {
        n += 1;
        take(&store, &config, &mail(n, from, "help", "hello"), at).unwrap()
    };
    let a: Vec<i64> = (0..4).map(|_| next("eve@one.example", t0)).collect();
    assert_eq!(
        a.iter().map(|&id| whole(id)).collect::<Vec<_>>(),
        [true, true, true, false]
    );
    let b: Vec<i64> = (0..6)
        .map(|i| next(&format!("s{i}@one.example"), t0))
        .collect();
    assert_eq!(
        b.iter().filter(|&&id| whole(id)).count(),
        5,
        "the domain's 8"
    );
    let c: Vec<i64> = (0..20)
        .map(|i| next(&format!("s{i}@d{i}.example"), t0))
        .collect();
    assert_eq!(
        c.iter().filter(|&&id| whole(id)).count(),
        12,
        "the 20 in all"
    );
    let late = next(
        "new@fresh.example",
        t0 + Duration::hours(23) + Duration::minutes(59),
    );
    assert!(!whole(late));
    let renewed = next(
        "new@fresh.example",
        t0 + Duration::days(1) + Duration::seconds(1),
    );
    assert!(whole(renewed), "the next day's budget");
    let again = next(
        "eve@one.example",
        t0 + Duration::days(1) + Duration::seconds(1),
    );
    assert!(whole(again), "the sender's share renews too");
}

/// A key row keeps the mail's key: the same mail delivered again is one
/// mail, whole or not, whatever the budget says then.
#[test]
fn a_mail_kept_as_its_key_delivered_again_is_one_mail() {
    let store = Store::open_in_memory().unwrap();
    let mut config = config();
    config.limits.stranger_mails_per_day = 1;
    let now = Utc::now();
    let first = mail(1, "a@one.example", "help", "hello");
    let second = mail(2, "b@two.example", "help", "hello");
    assert!(take(&store, &config, &first, now).is_some());
    let key = take(&store, &config, &second, now).unwrap();
    assert_eq!(row(&store, key).1, 0);
    assert_eq!(
        take(&store, &config, &second, now + Duration::days(2)),
        None
    );
    assert_eq!(take(&store, &config, &first, now), None);
    let (n,): (u32,) = store
        .conn()
        .query_row("SELECT COUNT(*) FROM inbox", [], |r| Ok((r.get(0)?,)))
        .unwrap();
    assert_eq!(n, 2);
}

/// (whole, charged to a stranger, the claimed mailbox it is charged to)
fn charges(store: &Store, id: i64) -> (bool, bool, Option<String>) {
    store
        .conn()
        .query_row(
            "SELECT length(CAST(raw AS BLOB)) > 0, stranger_sender IS NOT NULL, claimed_mailbox
               FROM inbox WHERE id = ?1",
            [id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap()
}

/// The attack: a forger who knows a registered team's address (LAP lists
/// them to every team) floods the server with mails whose From line names
/// it. They are charged to that mailbox's share (here 5 a day), never to
/// the strangers' budget: past it they are key rows, and neither share
/// uses up the other's, nor another mailbox's. A mail with the team's
/// string from the same address is never counted. Before, every such mail
/// was stored whole, uncounted.
#[test]
fn a_flood_naming_a_registered_mailbox_keeps_keys_past_its_share_and_the_teams_string_passes() {
    let store = Store::open_in_memory().unwrap();
    let mut config = config();
    config.limits.claimed_mails_per_mailbox_per_day = 5;
    proven_team(&store, "millers");
    proven_team(&store, "rivals");
    let now = Utc::now();
    let filler = "x".repeat(20_000);
    let ids: Vec<i64> = (0..12u32)
        .map(|i| {
            let from = if i % 2 == 0 {
                "millers@lords.example".to_string()
            } else {
                format!("Millers+{i}@Lords.Example")
            };
            take(&store, &config, &mail(i, &from, "help", &filler), now).unwrap()
        })
        .collect();
    let got: Vec<_> = ids.iter().map(|&id| charges(&store, id)).collect();
    assert_eq!(got.iter().filter(|c| c.0).count(), 5, "the mailbox's 5");
    for c in got.iter().filter(|c| c.0) {
        assert_eq!(c, &(true, false, Some("millers@lords.example".to_string())));
    }
    for c in got.iter().filter(|c| !c.0) {
        assert_eq!(c, &(false, false, None), "a key row is charged to nobody");
    }
    let outcome = outcome_of(&store, ids[11]);
    assert!(
        outcome.contains("5 mails naming this team's mailbox without the team's string"),
        "{outcome}"
    );
    // The strangers' budget is whole: 20 strangers' mails are taken whole.
    let strangers: Vec<i64> = (0..20u32)
        .map(|i| {
            let from = format!("s{i}@d{i}.example");
            take(&store, &config, &mail(100 + i, &from, "help", "hi"), now).unwrap()
        })
        .collect();
    assert!(strangers.iter().all(|&id| charges(&store, id).0));
    // Another team's mailbox has its own share, strangers' budget spent.
    let rivals = take(
        &store,
        &config,
        &mail(200, "rivals@lords.example", "help", "hi"),
        now,
    )
    .unwrap();
    assert_eq!(
        charges(&store, rivals),
        (true, false, Some("rivals@lords.example".to_string()))
    );
    // The team itself, with its string, from the flooded address.
    let proven = take(
        &store,
        &config,
        &mail(
            201,
            "millers@lords.example",
            "status",
            &format!("<<FROM>> millers {}", auth("millers")),
        ),
        now,
    )
    .unwrap();
    assert_eq!(charges(&store, proven), (true, false, None));
    // The share renews after 24 hours.
    let later = take(
        &store,
        &config,
        &mail(202, "millers@lords.example", "help", "hi"),
        now + Duration::days(1) + Duration::seconds(1),
    )
    .unwrap();
    assert!(charges(&store, later).0);
}

/// A contest whose round 1 waits for the organizer's summary (its pause
/// token kept) and a strangers' flood of 30 mails that spent the budget.
struct PausedRound {
    store: Store,
    config: Config,
    now: DateTime<Utc>,
    tournament: i64,
    token: String,
}

impl PausedRound {
    /// The organizer's summary of round 1 (mail `n`) with `token` and `text`.
    fn summary(&self, n: u32, token: &str, text: &str) -> Capped {
        summary_mail(n, &self.config.contest.organizer, token, text)
    }

    /// The organizer's summary with the round's token, taken in now: its row.
    fn take_summary(&self, n: u32, text: &str) -> i64 {
        let m = self.summary(n, &self.token, text);
        take(&self.store, &self.config, &m, self.now).unwrap()
    }
}

fn a_paused_round_and_the_budget_spent() -> PausedRound {
    let mut store = Store::open_in_memory().unwrap();
    let config = config();
    let now = Utc::now();
    let tournament = store
        .create_tournament(
            1,
            &crate::seed::SeedKey::public_from_seed(1),
            "{}",
            "k",
            &[],
            now,
        )
        .unwrap();
    db::insert_contest(store.conn(), tournament, now).unwrap();
    let token = crate::auth::new_auth_string();
    crate::store::rsm::start_pause(
        store.conn(),
        tournament,
        1,
        now,
        now + Duration::hours(1),
        &crate::auth::StoredSecret::of(&token),
    )
    .unwrap();
    spend_the_strangers_budget(&store, &config, now);
    PausedRound {
        store,
        config,
        now,
        tournament,
        token,
    }
}

/// The organizer's round summary by mail, with the pause mail's token, is
/// proven: a strangers' flood that spent their budget never keeps it as a
/// key only. The same mail with a wrong token is a stranger's.
#[test]
fn the_organizers_summary_with_its_pause_token_passes_a_strangers_flood() {
    let round = a_paused_round_and_the_budget_spent();
    let summary = |n: u32, token: &str| round.summary(n, token, "Round 1 was wild.");
    let PausedRound {
        ref store,
        ref config,
        now,
        ref token,
        ..
    } = round;
    let right = take(store, config, &summary(100, token), now).unwrap();
    assert_eq!(charges(store, right), (true, false, None));
    let wrong = take(store, config, &summary(101, "WRONGTOKEN"), now).unwrap();
    assert_eq!(charges(store, wrong), (false, false, None));
    let forged = take(
        store,
        config,
        &mail(
            102,
            "eve@forged.example",
            "RSM round 1",
            &format!("<<RSM>> {token}\n\nforged"),
        ),
        now,
    )
    .unwrap();
    assert!(!charges(store, forged).0, "the token from another address");
}

/// Red team (F11): the pause token is one time only. Once the round's RSM
/// went out, a summary carrying that token (the organizer's own mail sent
/// again, or a copy of it that someone kept: the token stays in the mail's
/// quoted lines and in every mailbox it passed) proves nothing any more:
/// the command refuses it ("has already gone out"), and at intake it is a
/// stranger's mail, within the strangers' budget. Before, the spent token
/// still proved it there, so whoever held a copy had every mail of that
/// shape stored whole, past every budget, for the rest of the contest.
#[test]
fn a_spent_pause_token_proves_nothing_at_intake() {
    let round = a_paused_round_and_the_budget_spent();
    let summary = |n: u32| round.summary(n, &round.token, "Round 1 was wild.");
    let PausedRound {
        ref store,
        ref config,
        now,
        tournament,
        ..
    } = round;
    // While the contest waits for it: proven, whole.
    let first = take(store, config, &summary(100), now).unwrap();
    assert_eq!(charges(store, first), (true, false, None));
    crate::store::rsm::mark_sent(store.conn(), tournament, 1, "organizer", now).unwrap();
    // The same summary again, a mail of its own each time.
    for n in 101..111u32 {
        let again = take(store, config, &summary(n), now + Duration::hours(2)).unwrap();
        assert_eq!(
            charges(store, again),
            (false, false, None),
            "a summary with a spent token, strangers' budget spent"
        );
    }
}

/// Red team (F11), held as the book says: a newcomer who registers while a
/// flood from forged senders has spent the strangers' budget is a stranger
/// too. The registration is kept as its key only and never answered (no
/// mail goes to a forged or a real address for it); the same form sent
/// again once the budget renewed is taken whole and registers the team.
/// The budget, not the registrations' own caps, is what a flood of 20
/// mails a day (here) spends.
#[test]
fn a_newcomers_registration_during_a_flood_waits_for_the_next_days_budget() {
    let mut store = Store::open_in_memory().unwrap();
    let config = config();
    let t0 = Utc::now() - Duration::days(2);
    for i in 0..20u32 {
        let from = format!("s{i}@d{i}.example");
        take(&store, &config, &mail(i, &from, "help", "hi"), t0).unwrap();
    }
    let form = |n: u32| {
        mail(
            n,
            "bob@newcomer.example",
            "registration for KNOBELN",
            &BOBS_FORM,
        )
    };
    let during = take(&store, &config, &form(100), t0).unwrap();
    assert_eq!(charges(&store, during), (false, false, None), "a key row");
    let next_day = t0 + Duration::days(1) + Duration::seconds(1);
    let again = take(&store, &config, &form(101), next_day).unwrap();
    assert_eq!(
        charges(&store, again),
        (true, true, None),
        "whole, charged to the strangers' budget"
    );
    crate::mail::process::process_pending(
        &mut store,
        &config,
        &RefereeConfig::default(),
        &Utc::now,
    )
    .unwrap();
    let replies = |id: i64| -> u32 {
        store
            .conn()
            .query_row(
                "SELECT COUNT(*) FROM outbox WHERE inbox_id = ?1",
                [id],
                |r| r.get(0),
            )
            .unwrap()
    };
    assert_eq!(replies(during), 0, "a key row is never answered");
    assert_eq!(replies(again), 1, "the registration sent again is answered");
    assert_eq!(
        db::count_registrations_of_mailbox(store.conn(), "bob@newcomer.example").unwrap(),
        1
    );
}

/// Red team (F11): a hostile participant. Its own string proves its mails,
/// and before, a proven mail was never counted: one team could have the
/// server store every mail it sent whole (up to `max_mail_bytes` each
/// while it waits, 4 KiB once processed, a row for 90 days), past every
/// budget, bounded only by the mail server's rate. Now a team's proven
/// mails have a share of the team's own (`team_mails_per_day`, 1000 in 24
/// hours, five times the 200 replies a team can get): past it they are
/// key rows. Only the string spends it, so nobody else can: another
/// team's mail, a confirmation's answer and a stranger's are untouched.
#[test]
fn a_teams_flood_with_its_own_string_keeps_keys_past_the_teams_share() {
    let store = Store::open_in_memory().unwrap();
    let config = config();
    team(&store, "millers");
    team(&store, "rivals");
    let now = Utc::now();
    let status = |n: u32, who: &str| {
        mail(
            n,
            "x@anywhere.example",
            "status",
            &format!("<<FROM>> {who} {}", auth(who)),
        )
    };
    let ids: Vec<i64> = (0..1005u32)
        .map(|i| take(&store, &config, &status(i, "millers"), now).unwrap())
        .collect();
    let whole = ids.iter().filter(|&&id| charges(&store, id).0).count();
    assert_eq!(whole, 1000, "the team's share in 24 hours");
    let outcome = outcome_of(&store, ids[1004]);
    assert!(
        outcome.contains("1000 mails with this team's string in 24 hours already"),
        "{outcome}"
    );
    // Nobody else's share is spent.
    let rivals = take(&store, &config, &status(2000, "rivals"), now).unwrap();
    assert!(charges(&store, rivals).0, "another team's mail");
    let stranger = take(
        &store,
        &config,
        &mail(2001, "new@fresh.example", "help", "hi"),
        now,
    )
    .unwrap();
    assert!(charges(&store, stranger).0, "a stranger's mail");
    // The team's share renews after 24 hours.
    let later = take(
        &store,
        &config,
        &status(2002, "millers"),
        now + Duration::days(1) + Duration::seconds(1),
    )
    .unwrap();
    assert!(charges(&store, later).0);
}

/// The attack on the key rows: a flood past the budget is kept as keys
/// only up to `stranger_keys_per_day` in 24 hours; the rest is not stored
/// at all, only counted on its day, however many there are. Before the
/// bound every mail past the budget was a row, kept 90 days: the inbox
/// grew with the mail server's rate. A participant's mail still passes;
/// the key rows go 7 days after they came, the counts with them; a mail
/// never stored, delivered again a day later, is taken in once.
#[test]
fn a_flood_past_the_key_rows_bound_is_only_counted_and_keys_go_after_seven_days() {
    let store = Store::open_in_memory().unwrap();
    let mut config = config();
    config.limits.stranger_keys_per_day = 30;
    team(&store, "millers");
    let now = Utc::now();
    let filler = "x".repeat(2_000);
    let mut taken = Vec::new();
    for i in 0..200u32 {
        let m = mail(i, &format!("s{i}@d{i}.example"), "help", &filler);
        taken.push(take_in_within_budget(store.conn(), &config, "test", None, &m, now).unwrap());
    }
    let whole = taken
        .iter()
        .filter(|t| matches!(t, Taken::Whole(_)))
        .count();
    let keys = taken
        .iter()
        .filter(|t| matches!(t, Taken::KeyOnly(_)))
        .count();
    let unkept = taken.iter().filter(|t| **t == Taken::Unkept).count();
    assert_eq!((whole, keys, unkept), (20, 30, 150));
    let rows: i64 = store
        .conn()
        .query_row("SELECT COUNT(*) FROM inbox", [], |r| r.get(0))
        .unwrap();
    assert_eq!(rows, 50, "the budget's whole mails and the keys' bound");
    let (mails, bytes) = db::unkept_since(store.conn(), now).unwrap();
    assert_eq!(mails, 150);
    assert!(bytes > 150 * 2_000, "{bytes}");
    let days: i64 = store
        .conn()
        .query_row("SELECT COUNT(*) FROM inbox_unkept", [], |r| r.get(0))
        .unwrap();
    assert_eq!(days, 1, "one row a day, whatever the flood");

    // Delivered again the same day: still nothing stored, nothing answered.
    let again = mail(150, "s150@d150.example", "help", &filler);
    assert_eq!(
        take_in_within_budget(store.conn(), &config, "test", None, &again, now).unwrap(),
        Taken::Unkept
    );
    // A participant's mail passes the flood and both bounds.
    let status = mail(
        1000,
        "x@forged.example",
        "status",
        &format!("<<FROM>> millers {}", auth("millers")),
    );
    let id = take(&store, &config, &status, now).expect("stored");
    assert!(row(&store, id).1 > 0, "whole");

    // A day later the window has moved: the mail never stored is taken in
    // whole, once; the same bytes again are the same mail.
    let later = now + Duration::hours(25);
    let first = take_in_within_budget(store.conn(), &config, "test", None, &again, later).unwrap();
    assert!(matches!(first, Taken::Whole(_)), "{first:?}");
    assert_eq!(
        take_in_within_budget(store.conn(), &config, "test", None, &again, later).unwrap(),
        Taken::Again
    );

    // Seven days after they came the key rows go, and the day's count.
    let keys_left = |store: &Store| -> i64 {
        store
            .conn()
            .query_row(
                "SELECT COUNT(*) FROM inbox WHERE kept_as_key IS NOT NULL",
                [],
                |r| r.get(0),
            )
            .unwrap()
    };
    let just_before = now + Duration::days(db::KEY_ROW_DAYS) - Duration::minutes(1);
    crate::mail::process::forget_processed_mails(
        &store,
        config.limits.keep_inbox_days,
        just_before,
        crate::mail::process::Batches::All,
    )
    .unwrap();
    assert_eq!(keys_left(&store), 30);
    let after = now + Duration::days(db::KEY_ROW_DAYS + 1);
    let deleted = crate::mail::process::forget_processed_mails(
        &store,
        config.limits.keep_inbox_days,
        after,
        crate::mail::process::Batches::All,
    )
    .unwrap();
    assert_eq!(deleted, 30);
    assert_eq!(keys_left(&store), 0);
    assert_eq!(db::unkept_since(store.conn(), now).unwrap().0, 0);
    // The whole mails wait to be processed: untouched.
    let rows: i64 = store
        .conn()
        .query_row("SELECT COUNT(*) FROM inbox", [], |r| r.get(0))
        .unwrap();
    assert_eq!(rows, 22);
}

/// Red team F11 (its attack was `tests/attacks/claims_in_all.rs`): a
/// stranger registers 10 teams from forged addresses (10 of the strangers'
/// 20 whole mails), then sends 5 mails naming each of their mailboxes.
/// Before, each forged registration gave its mailbox a share of its own:
/// all 50 were taken whole beside the strangers' budget (at the defaults
/// 50 a day for each of up to 500 registrations). Now a mailbox has a
/// share only once its registration proved its address, so the 50 are
/// strangers' mails: 10 whole (the budget's rest), 40 key rows, none
/// charged to a mailbox. Once a team proves its address (its first mail
/// with its string), its mailbox has its share again, whatever strangers
/// spent.
#[test]
fn forged_registrations_buy_no_whole_mails_past_the_strangers_budget() {
    let mut store = Store::open_in_memory().unwrap();
    let mut config = config();
    config.limits.claimed_mails_per_mailbox_per_day = 5;
    let now = Utc::now();
    let form = |i: u32| {
        BOBS_FORM
            .replace("bob@newcomer.example", &format!("eve{i}@d{i}.example"))
            .replace("bobs_team", &format!("forged_{i}"))
    };
    for i in 0..10u32 {
        let from = format!("eve{i}@d{i}.example");
        take(
            &store,
            &config,
            &mail(i, &from, "registration for KNOBELN", &form(i)),
            now,
        )
        .unwrap();
    }
    crate::mail::process::process_pending(
        &mut store,
        &config,
        &RefereeConfig::default(),
        &Utc::now,
    )
    .unwrap();
    for i in 0..10u32 {
        assert_eq!(
            db::count_registrations_of_mailbox(store.conn(), &format!("eve{i}@d{i}.example"))
                .unwrap(),
            1,
            "the forged registration {i} is kept"
        );
    }
    let mut claims = Vec::new();
    for i in 0..10u32 {
        for k in 0..5u32 {
            let from = format!("eve{i}@d{i}.example");
            claims.push(take(
                &store,
                &config,
                &mail(1000 + 10 * i + k, &from, "help", "hi"),
                now,
            ));
        }
    }
    let count = |filter: &str| -> u32 {
        store
            .conn()
            .query_row(
                &format!("SELECT COUNT(*) FROM inbox WHERE {filter}"),
                [],
                |r| r.get(0),
            )
            .unwrap()
    };
    assert_eq!(
        count("length(CAST(raw AS BLOB)) > 0"),
        config.limits.stranger_mails_per_day,
        "registrations and claims together within the strangers' budget"
    );
    assert_eq!(
        count("claimed_mailbox IS NOT NULL"),
        0,
        "no forged mailbox has a share"
    );
    let last = claims.last().copied().flatten().unwrap();
    assert!(
        outcome_of(&store, last).contains("from strangers in all"),
        "{}",
        outcome_of(&store, last)
    );
    // The team of eve0's address proves it: its mailbox has its share,
    // the strangers' budget spent.
    let eve0: u32 = store
        .conn()
        .query_row(
            "SELECT team_id FROM registrations WHERE mailbox = 'eve0@d0.example'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    db::mark_proven(store.conn(), crate::tournament::TeamId(eve0), now).unwrap();
    let proven = take(
        &store,
        &config,
        &mail(2000, "Eve0+x@D0.example", "help", "hi"),
        now,
    )
    .unwrap();
    assert_eq!(
        charges(&store, proven),
        (true, false, Some("eve0@d0.example".to_string()))
    );
}

/// Red team E12: a one-time secret proves one mail at a time, not every
/// mail that carries it. A stranger who registered naming a second address
/// of theirs holds the code of its request for 7 days; the request is spent
/// only when its answer is processed, and the intake takes in every mail
/// waiting before that (a flood, or any mail while processing is busy).
/// Before, each copy of the answer (any Message-ID, any size up to
/// `max_mail_bytes`) was proven, stored whole and never counted: the
/// strangers' budget spent, 300 copies of 20 kB were 300 whole rows. Now the
/// first answer is proven; the copies taken in while it waits are the
/// strangers' mails they are (here past the budget: key rows). Another
/// request's answer is still proven.
#[test]
fn a_confirmation_code_proves_one_mail_not_a_flood_of_copies() {
    let store = Store::open_in_memory().unwrap();
    let config = config();
    pending_confirmation(
        &store,
        "bob@newcomer.example",
        "eve@newcomer.example",
        "c0de4bob",
    );
    pending_confirmation(
        &store,
        "ann@newcomer.example",
        "eve@newcomer.example",
        "c0de4ann",
    );
    let now = Utc::now();
    spend_the_strangers_budget(&store, &config, now);
    let filler = "x".repeat(20_000);
    let answer = |n: u32, from: &str, code: &str| {
        mail(
            n,
            from,
            &format!("Re: KNOBELN: please confirm your address ({code})"),
            &filler,
        )
    };
    let ids: Vec<i64> = (0..300u32)
        .map(|i| {
            let from = format!("bob+{i}@newcomer.example");
            take(&store, &config, &answer(100 + i, &from, "c0de4bob"), now).unwrap()
        })
        .collect();
    let whole: Vec<_> = ids.iter().filter(|&&id| row(&store, id).1 > 0).collect();
    assert_eq!(whole, vec![&ids[0]], "one answer proven, the copies not");
    let outcome = outcome_of(&store, ids[299]);
    assert!(
        outcome.contains("mails from strangers in all in 24 hours already"),
        "{outcome}"
    );
    // Another request's answer is untouched.
    let ann = take(
        &store,
        &config,
        &answer(1000, "ann@newcomer.example", "c0de4ann"),
        now,
    )
    .unwrap();
    assert!(row(&store, ann).1 > 0, "ann's answer is proven");
    assert!(!charges(&store, ann).1, "and charged to no stranger");
}

/// Red team E12, the same for the pause token: copies of the organizer's
/// summary taken in while one waits to be processed are the strangers'
/// mails they are (before, all 300 were whole). Once the waiting one is
/// processed and refused (here: no summary after the token line, so the
/// round still waits), the organizer's corrected summary is proven again.
#[test]
fn a_pause_token_proves_one_waiting_summary_not_a_flood_of_copies() {
    let mut round = a_paused_round_and_the_budget_spent();
    let filler = "x".repeat(20_000);
    let first = round.take_summary(100, "");
    assert!(row(&round.store, first).1 > 0, "the first is proven");
    let copies: Vec<i64> = (0..300u32)
        .map(|i| round.take_summary(200 + i, &filler))
        .collect();
    let whole = copies
        .iter()
        .filter(|&&id| row(&round.store, id).1 > 0)
        .count();
    assert_eq!(whole, 0, "no copy is proven while the first waits");
    // The first processed: refused (no summary), the token not spent.
    crate::mail::process::process_pending(
        &mut round.store,
        &round.config,
        &RefereeConfig::default(),
        &Utc::now,
    )
    .unwrap();
    let (state, outcome, _) = db::inbox_state(round.store.conn(), first).unwrap();
    assert_eq!(state, "done", "{outcome:?}");
    let corrected = round.take_summary(900, "Round 1 was wild.");
    assert!(
        row(&round.store, corrected).1 > 0,
        "the corrected summary is proven"
    );
}

/// Red team E13: a confirmation code proves one mail, not one after each
/// that was processed without spending it. The intake read the answer's
/// address as its Reply-To, or its From where the Reply-To cannot be
/// answered; processing answers only the Reply-To and drops a mail whose
/// Reply-To cannot be answered, the code not spent. So a stranger with
/// the code of his own request and a Reply-To of 65 letters before the
/// `@` had one answer proven after another, each stored whole (up to
/// `max_mail_bytes`) and never counted, one per intake and processing
/// round, for the code's 7 days (before: 50 of 50 whole). Now a code
/// proves the first mail taken in with it, whatever became of that mail.
#[test]
fn a_confirmation_code_processed_without_being_spent_proves_no_second_mail() {
    let mut store = Store::open_in_memory().unwrap();
    let config = config();
    pending_confirmation(
        &store,
        "bob@newcomer.example",
        "bob@newcomer.example",
        "c0de4bob",
    );
    let now = Utc::now();
    spend_the_strangers_budget(&store, &config, now);
    let filler = "x".repeat(20_000);
    let unanswerable = format!("{}@newcomer.example", "r".repeat(65));
    let mut whole = 0;
    for i in 0..50u32 {
        let raw = format!(
            "From: bob@newcomer.example\r\nReply-To: {unanswerable}\r\n\
             To: knobeln@contest.example\r\n\
             Subject: Re: KNOBELN: please confirm your address (c0de4bob)\r\n\
             Message-ID: <e13-{i}@x.example>\r\n\r\n{filler}\r\n"
        );
        let id = take(
            &store,
            &config,
            &Capped::from_bytes(raw.as_bytes(), 512 * 1024),
            now,
        )
        .unwrap();
        if row(&store, id).1 > 0 {
            whole += 1;
        }
        crate::mail::process::process_pending(
            &mut store,
            &config,
            &RefereeConfig::default(),
            &Utc::now,
        )
        .unwrap();
        if i == 0 {
            let (state, outcome, _) = db::inbox_state(store.conn(), id).unwrap();
            assert_eq!(state, "ignored", "dropped unanswered: {outcome:?}");
        }
    }
    assert_eq!(whole, 1, "the first answer proven, no later one");
    // Bob's own answer from his address is still read and confirms him
    // (a stranger's mail now: the budget has room again a day later).
    let later = now + Duration::days(1) + Duration::minutes(1);
    let answer = mail(
        500,
        "bob@newcomer.example",
        "Re: KNOBELN: please confirm your address (c0de4bob)",
        "yes",
    );
    let id = take(&store, &config, &answer, later).unwrap();
    assert!(row(&store, id).1 > 0, "bob's answer taken in whole");
}
