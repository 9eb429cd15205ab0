//! The strangers' daily budget at intake (issue 38) over IMAP, on the real
//! mail stack (`deploy/mailstack.sh`; see `mailstack`), in a mailbox of the
//! test's own: a flood from forged senders past the budget is kept as keys
//! only while the mailbox position moves past it, a proven team's mail and
//! a confirmation's answer after it are stored whole and answered at once,
//! and the budget renews a day later.

use std::net::TcpStream;

use chrono::Utc;
use knobeln::config::Config;
use knobeln::mail::intake::{take_in_all, Removals};
use knobeln::mail::process::process_pending;
use knobeln::mail::transport::imap::ImapPoller;
use knobeln::referee::RefereeConfig;
use knobeln::store::mail as db;
use knobeln::store::Store;

use crate::mail_spool::registration;
use crate::mailstack::{mail_stack, unique_address, MailStack};

const AUTH: &str = "Zq4vX9pL2mK8budget";
const CODE: &str = "c0de4bob";

fn raw(n: usize, from: &str, subject: &str, body: &str) -> Vec<u8> {
    format!(
        "From: {from}\r\nTo: knobeln@contest.example\r\nSubject: {subject}\r\n\
         Date: Mon, 21 Mar 1994 12:00:00 +0000\r\nMessage-ID: <budget{n}.{}@x.example>\r\n\
         \r\n{body}\r\n",
        std::process::id()
    )
    .into_bytes()
}

fn append(stack: &MailStack, user: &str, mails: &[Vec<u8>]) {
    let tcp = TcpStream::connect((stack.host.as_str(), stack.imap_port)).unwrap();
    let mut client = imap::Client::new(tcp);
    client.read_greeting().unwrap();
    let mut session = client
        .login(user, &stack.password)
        .map_err(|(e, _)| e)
        .unwrap();
    for m in mails {
        session.append("INBOX", m).unwrap();
    }
    let _ = session.logout();
}

fn unseen(stack: &MailStack, user: &str) -> usize {
    let tcp = TcpStream::connect((stack.host.as_str(), stack.imap_port)).unwrap();
    let mut client = imap::Client::new(tcp);
    client.read_greeting().unwrap();
    let mut session = client
        .login(user, &stack.password)
        .map_err(|(e, _)| e)
        .unwrap();
    session.examine("INBOX").unwrap();
    let n = session.uid_search("UNSEEN").unwrap().len();
    let _ = session.logout();
    n
}

fn take_in(store: &mut Store, config: &Config, user: &str, stack: &MailStack) -> usize {
    let cfg = stack.imap_config(user);
    let mut poller = ImapPoller::connect(&cfg).unwrap();
    let stored = take_in_all(store, config, &cfg, &mut poller, &mut Removals::new()).unwrap();
    poller.logout();
    stored
}

fn count(store: &Store, sql: &str) -> i64 {
    store.conn().query_row(sql, [], |r| r.get(0)).unwrap()
}

/// 40 mails of 5 kB from forged senders at 8 domains, then a proven team's
/// status and the answer to a confirmation request, over IMAP: 10 of the
/// flood whole (the budget), 30 as key rows under 1 KiB, every mail of the
/// mailbox taken in (flagged `\Seen`, the position past them all); the
/// team's status and the confirmation are stored whole and answered by
/// the next pass. The flood's rows a day older, a stranger is taken whole
/// again. Before the budget, all 40 were stored whole.
#[test]
fn over_imap_a_strangers_flood_past_the_budget_keeps_keys_and_participants_pass() {
    let stack = mail_stack();
    let user = unique_address("budget", "contest.example");
    let mut config = Config::default();
    config.limits.stranger_mails_per_day = 10;
    config.limits.stranger_mails_per_domain_per_day = 4;
    config.limits.stranger_mails_per_sender_per_day = 2;
    let mut store = Store::open_in_memory().unwrap();
    let salt = knobeln::auth::new_salt();
    db::insert_registration(
        store.conn(),
        &db::NewRegistration {
            team_name: "millers",
            requested_name: "millers",
            mail_address: "millers@lords.example",
            preferences: "",
            organization: "millers",
            members_json: "[]",
            record: "",
            auth_salt: &salt,
            auth_hash: &knobeln::auth::hash(&salt, AUTH),
            auth_index: &knobeln::auth::index(AUTH),
            mailbox: "millers@lords.example",
            inbox_id: None,
            proof: db::AddressProof::Claimed,
        },
        Utc::now(),
    )
    .unwrap();
    db::insert_pending_registration(
        store.conn(),
        &db::NewPending {
            mail_address: "bob@newcomer.example",
            mailbox: "bob@newcomer.example",
            domain: "newcomer.example",
            requested_by: "ann@newcomer.example",
            body: &registration(
                "bob@newcomer.example",
                "bobs_team",
                "University of Northeast Sacrodata, Intellect City, Eggland",
            ),
            code_hash: &knobeln::hash::sha256_hex(CODE.as_bytes()),
        },
        Utc::now(),
    )
    .unwrap();
    let filler = "x".repeat(5_000);
    let mut mails: Vec<Vec<u8>> = (0..40)
        .map(|i| raw(i, &format!("s{i}@d{}.example", i % 8), "help", &filler))
        .collect();
    mails.push(raw(
        100,
        "someone@forged.example",
        "status",
        &format!("<<FROM>> millers {AUTH}"),
    ));
    mails.push(raw(
        101,
        "bob@newcomer.example",
        &format!("Re: KNOBELN: please confirm your address ({CODE})"),
        "yes",
    ));
    append(&stack, &user, &mails);
    take_in(&mut store, &config, &user, &stack);
    assert_eq!(unseen(&stack, &user), 0, "every mail taken in");
    assert_eq!(
        count(
            &store,
            "SELECT COUNT(*) FROM inbox WHERE stranger_sender IS NOT NULL"
        ),
        10
    );
    assert_eq!(
        count(
            &store,
            "SELECT COUNT(*) FROM inbox WHERE length(CAST(raw AS BLOB)) = 0 AND state = 'ignored'"
        ),
        30
    );
    assert!(
        count(
            &store,
            "SELECT max(length(origin) + coalesce(length(message_id), 0) + length(dedupe_key)
                        + length(received_at) + length(outcome) + length(processed_at) + 64)
               FROM inbox WHERE length(CAST(raw AS BLOB)) = 0"
        ) < 1024
    );
    assert_eq!(
        count(
            &store,
            "SELECT COUNT(*) FROM inbox WHERE state = 'new' AND stranger_sender IS NULL"
        ),
        2,
        "the team's and bob's mails whole, uncharged"
    );
    process_pending(&mut store, &config, &RefereeConfig::default(), &Utc::now).unwrap();
    assert_eq!(
        count(
            &store,
            "SELECT COUNT(*) FROM outbox WHERE recipients LIKE '%bob@newcomer.example%'
                AND subject LIKE '%registration accepted%'"
        ),
        1,
        "the confirmation registers bob"
    );
    assert_eq!(
        count(
            &store,
            "SELECT COUNT(*) FROM outbox WHERE recipients LIKE '%millers@lords.example%'"
        ),
        1,
        "the team's status is answered"
    );

    // A day later (the flood's rows 24 hours older): a stranger again.
    store
        .conn()
        .execute(
            "UPDATE inbox SET received_at = '2000-01-01T00:00:00.000Z'
              WHERE stranger_sender IS NOT NULL",
            [],
        )
        .unwrap();
    append(
        &stack,
        &user,
        &[raw(200, "late@fresh.example", "help", "hello")],
    );
    take_in(&mut store, &config, &user, &stack);
    assert_eq!(
        count(
            &store,
            "SELECT COUNT(*) FROM inbox WHERE stranger_sender = 'late@fresh.example'
                AND length(CAST(raw AS BLOB)) > 0"
        ),
        1,
        "the budget renews"
    );
}
