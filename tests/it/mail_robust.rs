//! Nothing lost in silence, on the spool transport: the organizer's digest
//! of undeliverable and set-aside mails (one mail, batched, never a loop),
//! mails from senders that cannot be answered (kept, dropped, counted),
//! de-duplication by Message-ID *and* content, the size cap on reading, the
//! markers of automatic mail, the reply caps (per sender with `+tag`
//! folded, per domain, the kit), reply headers within 998 characters
//! whatever a hostile mail carries, and what a processed mail keeps (its
//! first 4 KiB; its row `keep_inbox_days`). The undeliverable acknowledgement on
//! the real Postfix is in `mail_e2e`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use super::common::repo_path;
use super::mail_spool::{parse_reply, Contest, Reply, REGISTRATION};

const BIN: &str = env!("CARGO_BIN_EXE_knobeln");
const ORGANIZER: &str = "organizer@contest.example";

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr)
}

fn knobeln(c: &Contest, args: &[&str]) -> String {
    let o = Command::new(BIN)
        .args(args)
        .arg("--config")
        .arg(c.config())
        .output()
        .unwrap();
    assert!(o.status.success(), "{args:?}: {}", out(&o));
    out(&o)
}

fn db(c: &Contest) -> rusqlite::Connection {
    rusqlite::Connection::open(c.dir.path().join("k.db")).unwrap()
}

fn digests(c: &Contest) -> Vec<Reply> {
    c.replies()
        .into_iter()
        .filter(|r| r.to == [ORGANIZER] && r.subject.starts_with("KNOBELN server:"))
        .collect()
}

/// Makes the spool unable to write outgoing mail number `id` of `kind`:
/// a directory where its temporary file goes (fails even for root).
fn block_outgoing(c: &Contest, id: u32, kind: &str) {
    let p = c
        .spool()
        .join("outgoing")
        .join(format!("{id:06}-{kind}.eml.tmp"));
    std::fs::create_dir_all(p).unwrap();
}

/// The text with every run of white space (line ends included) as one blank.
fn flat(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn corpus_mail(name: &str) -> PathBuf {
    repo_path(&format!("tests/data/mail/{name}.eml"))
}

#[test]
fn an_undeliverable_acknowledgement_reaches_the_organizer_in_one_digest_per_interval() {
    let c = Contest::new("[limits]\nmax_send_attempts = 1\n");
    block_outgoing(&c, 1, "registration_accepted");
    let reg = c.mail(
        "joe@lords.example",
        "registration for KNOBELN",
        REGISTRATION,
        "",
    );
    let o = c.ingest(&[&reg]);
    assert!(o.status.success(), "{}", out(&o));
    let d = digests(&c);
    assert_eq!(d.len(), 1, "{:?}", c.replies());
    assert!(d[0].subject.contains("1 undelivered"), "{}", d[0].subject);
    let body = flat(&d[0].body);
    for s in [
        "outbox 1 (registration_accepted) to: joe@lords.example",
        "registration accepted",
        "Is a directory",
        "knobeln admin resend 1",
    ] {
        assert!(body.contains(s), "{s:?} missing:\n{body}");
    }
    let status = knobeln(&c, &["status"]);
    assert!(status.contains("1 failed"), "{status}");
    assert!(
        status.contains("failed: outbox 1 to joe@lords.example"),
        "{status}"
    );
    assert!(status.contains("0 failure(s) waiting"), "{status}");

    // A second failure within the hour: no second digest yet, but status
    // shows it waiting.
    block_outgoing(&c, 3, "registration_accepted");
    let o = c.ingest(&[&c.registration_mail("ann", "Ann's Uni")]);
    assert!(o.status.success(), "{}", out(&o));
    assert_eq!(digests(&c).len(), 1);
    let status = knobeln(&c, &["status"]);
    assert!(status.contains("2 failed"), "{status}");
    assert!(status.contains("1 failure(s) waiting"), "{status}");
    // Once the interval is over (here: shortened to 0), the next flush
    // reports only the new one.
    let cfg = std::fs::read_to_string(c.config()).unwrap().replace(
        "max_send_attempts = 1",
        "max_send_attempts = 1\ndigest_interval_minutes = 0",
    );
    std::fs::write(c.config(), cfg).unwrap();
    knobeln(&c, &["serve", "--once"]);
    let d = digests(&c);
    assert_eq!(d.len(), 2);
    assert!(
        d[1].body.contains("ann@participants.example"),
        "{}",
        d[1].body
    );
    assert!(!d[1].body.contains("joe@lords.example"), "{}", d[1].body);
    knobeln(&c, &["serve", "--once"]);
    assert_eq!(digests(&c).len(), 2, "nothing new, no digest");
}

#[test]
fn a_digest_that_fails_never_causes_another_digest() {
    let c = Contest::new("[limits]\nmax_send_attempts = 1\ndigest_interval_minutes = 0\n");
    block_outgoing(&c, 1, "registration_accepted");
    block_outgoing(&c, 2, "organizer_digest");
    let reg = c.mail(
        "joe@lords.example",
        "registration for KNOBELN",
        REGISTRATION,
        "",
    );
    c.ingest(&[&reg]);
    for _ in 0..3 {
        knobeln(&c, &["serve", "--once"]);
    }
    let conn = db(&c);
    let rows: Vec<(String, String)> = conn
        .prepare("SELECT kind, state FROM outbox ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        rows,
        [
            ("registration_accepted".to_string(), "failed".to_string()),
            ("organizer_digest".to_string(), "failed".to_string())
        ]
    );
    // The organizer can still see both.
    let status = knobeln(&c, &["status"]);
    assert!(status.contains("2 failed"), "{status}");
    assert!(
        status.contains("failed: outbox 2 to organizer@contest.example"),
        "{status}"
    );
}

#[test]
fn a_set_aside_mail_is_in_the_digest_with_the_command_that_reprocesses_it() {
    let c = Contest::new("");
    let m = c.mail("joe@lords.example", "please compile", "int x;", "");
    let raw = std::fs::read(&m).unwrap();
    knobeln(&c, &["serve", "--once"]); // creates the database
    db(&c)
        .execute(
            "INSERT INTO inbox (origin, message_id, dedupe_key, raw, received_at, state, attempts, outcome)
             VALUES ('spool:x.eml', 'x@test', 'x@test', ?1, '2026-01-01T00:00:00Z', 'failed', 3,
                     'set aside: processing panicked: boom')",
            [raw],
        )
        .unwrap();
    knobeln(&c, &["serve", "--once"]);
    let d = digests(&c);
    assert_eq!(d.len(), 1);
    let body = flat(&d[0].body);
    for s in [
        "inbox 1 (spool:x.eml) from: joe@lords.example",
        "subject: please compile",
        "processing panicked: boom",
        "knobeln admin reprocess 1",
    ] {
        assert!(body.contains(s), "{s:?} missing:\n{body}");
    }
}

#[test]
fn mails_from_unanswerable_senders_are_kept_and_dropped_without_retry_or_alert() {
    let c = Contest::new("[limits]\ndigest_interval_minutes = 0\n");
    let names = [
        "from_double_dot",
        "from_ip_literal",
        "from_long_local",
        "no_from",
    ];
    let files: Vec<PathBuf> = names.iter().map(|n| corpus_mail(n)).collect();
    let refs: Vec<&Path> = files.iter().map(|p| p.as_path()).collect();
    let o = c.ingest(&refs);
    assert!(o.status.success(), "{}", out(&o));
    assert_eq!(
        out(&o)
            .matches("ignored: dropped: unanswerable sender")
            .count(),
        4,
        "{}",
        out(&o)
    );
    assert!(
        c.replies().is_empty(),
        "no reply, no alert: {:?}",
        c.replies()
    );
    let conn = db(&c);
    let rows: Vec<(String, u32, usize)> = conn
        .prepare("SELECT state, attempts, length(raw) FROM inbox ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(rows.len(), 4);
    for (state, attempts, len) in rows {
        assert_eq!((state.as_str(), attempts), ("ignored", 1));
        assert!(len > 50, "the mail is kept");
    }
    let status = knobeln(&c, &["status"]);
    assert!(
        status.contains("4 mail(s) dropped: unanswerable sender"),
        "{status}"
    );
    // Counted in the next digest that something else causes.
    db(&c)
        .execute(
            "INSERT INTO outbox (kind, recipients, subject, message_id, raw, state, next_attempt_at, created_at,
                                 last_error)
             VALUES ('help', '[\"x@y.example\"]', 'KNOBELN: help', '<f1@test>', x'00', 'failed',
                     '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z', '550 no such user')",
            [],
        )
        .unwrap();
    knobeln(&c, &["serve", "--once"]);
    let d = digests(&c);
    assert_eq!(d.len(), 1);
    assert!(
        flat(&d[0].body).contains("4 mail(s) were dropped"),
        "{}",
        d[0].body
    );
}

#[test]
fn the_same_message_id_with_other_content_is_a_second_mail_and_the_same_mail_twice_is_one() {
    let c = Contest::new("");
    let head = "From: joe@lords.example\r\nTo: knobeln@contest.example\r\n\
                Message-ID: <same@lords.example>\r\nDate: Sat, 14 May 1994 10:00:00 +0000\r\n";
    let a = c.dir.path().join("a.eml");
    let b = c.dir.path().join("b.eml");
    let a_again = c.dir.path().join("a-again.eml");
    std::fs::write(&a, format!("{head}Subject: hello\r\n\r\nfirst\r\n")).unwrap();
    std::fs::write(
        &b,
        format!("{head}Subject: SEND knobelnsoftware\r\n\r\nsecond\r\n"),
    )
    .unwrap();
    // The first one again, as a second delivery adds it: other trace fields.
    std::fs::write(
        &a_again,
        format!(
            "Return-Path: <joe@lords.example>\r\nDelivered-To: knobeln@contest.example\r\n\
             Received: from mx2.lords.example by mail.contest.example;\r\n Sat, 14 May 1994 10:05:00 +0000\r\n\
             {head}Subject: hello\r\n\r\nfirst\r\n"
        ),
    )
    .unwrap();
    let o = c.ingest(&[&a, &b, &a_again]);
    let text = out(&o);
    assert!(text.contains("a.eml: done"), "{text}");
    assert!(text.contains("b.eml: done"), "{text}");
    assert!(
        text.contains("a-again.eml: already received before"),
        "{text}"
    );
    let to_joe: Vec<Reply> = c
        .replies()
        .into_iter()
        .filter(|r| r.to == ["joe@lords.example"])
        .collect();
    assert_eq!(to_joe.len(), 2, "{to_joe:?}");
    assert!(to_joe[1].subject.contains("participant kit"));
}

#[test]
fn a_40_mb_mail_is_refused_without_keeping_it_and_answered_once() {
    let c = Contest::new("");
    let big = c.dir.path().join("big.eml");
    {
        use std::io::Write;
        let mut f = std::fs::File::create(&big).unwrap();
        f.write_all(
            b"From: Joe <joe@lords.example>\r\nTo: knobeln@contest.example\r\n\
              Subject: please compile\r\nMessage-ID: <big@lords.example>\r\n\r\n",
        )
        .unwrap();
        let line = [b'x'; 1000];
        for _ in 0..40_000 {
            f.write_all(&line).unwrap();
            f.write_all(b"\r\n").unwrap();
        }
    }
    let size = std::fs::metadata(&big).unwrap().len();
    assert!(size > 40_000_000);
    let o = c.ingest(&[&big]);
    assert!(o.status.success(), "{}", out(&o));
    let (stored, full_size): (usize, i64) = db(&c)
        .query_row("SELECT length(raw), full_size FROM inbox", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    assert!(
        stored < 1000,
        "only the header part is kept: {stored} bytes"
    );
    assert_eq!(full_size as u64, size);
    let r = c.replies();
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].to, ["joe@lords.example"]);
    let body = flat(&r[0].body);
    assert!(
        body.contains(&format!("Your mail of {size} bytes")),
        "{body}"
    );
    assert!(body.contains("(40.1 MB; the limit is 0.5 MB)"), "{body}");
    assert!(body.contains("plain text"), "{body}");
    // The same mail again: no second answer.
    let o = c.ingest(&[&big]);
    assert!(out(&o).contains("already received before"), "{}", out(&o));
    assert_eq!(c.replies().len(), 1);
    // Through the spool folder the same: read only as far as the cap.
    let c2 = Contest::new("");
    let new = c2.spool().join("incoming/new");
    std::fs::create_dir_all(&new).unwrap();
    std::fs::rename(&big, new.join("big.eml")).unwrap();
    knobeln(&c2, &["serve", "--once"]);
    let stored: usize = db(&c2)
        .query_row("SELECT length(raw) FROM inbox", [], |r| r.get(0))
        .unwrap();
    assert!(stored < 1000, "{stored}");
    assert_eq!(c2.replies().len(), 1);
}

#[test]
fn automatic_mail_of_every_kind_is_never_answered() {
    let c = Contest::new("");
    let names = [
        "x_autoreply",
        "x_autorespond",
        "precedence_auto_reply",
        "list_unsubscribe",
        "verp_sender",
        "bounces_return_path",
        "no_reply_underscore",
        "nested_report",
        "auto_reply",
        "bounce",
        "list_mail",
    ];
    let files: Vec<PathBuf> = names.iter().map(|n| corpus_mail(n)).collect();
    let refs: Vec<&Path> = files.iter().map(|p| p.as_path()).collect();
    let o = c.ingest(&refs);
    assert_eq!(
        out(&o).matches(": ignored: automatic mail").count(),
        names.len(),
        "{}",
        out(&o)
    );
    assert!(c.replies().is_empty(), "{:?}", c.replies());
}

#[test]
fn the_sender_cap_folds_plus_tags_and_case_and_the_domain_cap_stops_forged_floods() {
    let c =
        Contest::new("[limits]\nreplies_per_sender_per_day = 2\nreplies_per_domain_per_day = 4\n");
    let mails: Vec<PathBuf> = [
        "joe+a@lords.example",
        "JOE+b@Lords.Example",
        "joe@LORDS.example",
    ]
    .iter()
    .map(|from| c.mail(from, "registration for KNOBELN", "?", ""))
    .collect();
    let refs: Vec<&Path> = mails.iter().map(|p| p.as_path()).collect();
    let o = c.ingest(&refs);
    assert!(
        out(&o).contains("problem(s) (no reply: 2 replies to this sender today already)"),
        "{}",
        out(&o)
    );
    let helps = |c: &Contest| {
        c.replies()
            .into_iter()
            .filter(|r| r.to != [ORGANIZER])
            .count()
    };
    assert_eq!(helps(&c), 2);
    // A flood of forged senders at one domain: at most 4 replies a day.
    let flood: Vec<PathBuf> = (0..6)
        .map(|i| {
            c.mail(
                &format!("victim{i}@forged.example"),
                "registration for KNOBELN",
                "?",
                "",
            )
        })
        .collect();
    let refs: Vec<&Path> = flood.iter().map(|p| p.as_path()).collect();
    let o = c.ingest(&refs);
    assert!(
        out(&o).contains("(no reply: 4 replies to senders at forged.example today already)"),
        "{}",
        out(&o)
    );
    let to_forged = c
        .replies()
        .into_iter()
        .filter(|r| r.to.iter().any(|t| t.ends_with("@forged.example")))
        .count();
    assert_eq!(to_forged, 4);
}

/// Issue 35: kits to everybody together are capped too (strangers at
/// many domains draw at most `kits_per_day` kits a day), and the kit's
/// size the book's mail front end chapter (docs/src/organizer/mail.md) and
/// the config state is the real one (within 10 %).
#[test]
fn the_kits_of_a_day_are_capped_in_all_and_their_size_is_stated() {
    let c = Contest::new("[limits]\nkits_per_day = 3\n");
    let mails: Vec<PathBuf> = (0..5)
        .map(|i| {
            c.mail(
                &format!("s{i}@domain{i}.example"),
                "SEND knobelnsoftware",
                "",
                "",
            )
        })
        .collect();
    let refs: Vec<&Path> = mails.iter().map(|p| p.as_path()).collect();
    let o = c.ingest(&refs);
    assert_eq!(
        out(&o)
            .matches("no participant kit: 3 kits went to strangers today")
            .count(),
        2,
        "{}",
        out(&o)
    );
    let outgoing = c.spool().join("outgoing");
    let sizes: Vec<u64> = std::fs::read_dir(&outgoing)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|f| !parse_reply(f).attachments.is_empty())
        .map(|f| std::fs::metadata(f).unwrap().len())
        .collect();
    assert_eq!(sizes.len(), 3);
    let readme = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/docs/src/organizer/mail.md"
    ))
    .unwrap();
    let marker = "participant\nkit (`SEND knobelnsoftware`, about ";
    let at = readme
        .find(marker)
        .or_else(|| readme.find(&marker.replace('\n', " ")))
        .expect("the mail front end chapter states the kit's size");
    let rest = &readme[at + marker.len()..];
    let stated: u64 = rest[..rest.find(' ').unwrap()].parse::<u64>().unwrap() * 1000;
    for size in sizes {
        let off = size.abs_diff(stated) as f64 / size as f64;
        assert!(
            off <= 0.10,
            "the kit mail has {size} bytes, the book says {stated}"
        );
    }
}

#[test]
fn the_kit_is_capped_harder_than_other_replies() {
    let c = Contest::new("[limits]\nkits_per_sender_per_day = 1\nkits_per_domain_per_day = 2\n");
    let mails: Vec<PathBuf> = [
        "joe@lords.example",
        "joe+again@lords.example",
        "ann@lords.example",
        "bob@lords.example",
    ]
    .iter()
    .map(|from| c.mail(from, "SEND knobelnsoftware", "", ""))
    .collect();
    let refs: Vec<&Path> = mails.iter().map(|p| p.as_path()).collect();
    let o = c.ingest(&refs);
    assert_eq!(
        out(&o)
            .matches("no participant kit: at most 1 kits")
            .count(),
        2,
        "{}",
        out(&o)
    );
    let kits: Vec<Vec<String>> = c
        .replies()
        .into_iter()
        .filter(|r| !r.attachments.is_empty())
        .map(|r| r.to)
        .collect();
    assert_eq!(
        kits,
        [
            vec!["joe@lords.example".to_string()],
            vec!["ann@lords.example".to_string()]
        ]
    );
}

#[test]
fn reply_headers_stay_within_998_characters_whatever_the_incoming_ids() {
    let c = Contest::new("");
    let o = c.ingest(&[&corpus_mail("hostile_ids")]);
    assert!(o.status.success(), "{}", out(&o));
    let outgoing = c.spool().join("outgoing");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&outgoing)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert_eq!(files.len(), 2, "the help and its forward to the organizer");
    for f in &files {
        let raw = std::fs::read(f).unwrap();
        let head_end = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
        for line in String::from_utf8_lossy(&raw[..head_end]).split("\r\n") {
            assert!(
                line.len() <= 998,
                "{}: {} characters: {line:.80}",
                f.display(),
                line.len()
            );
        }
    }
    let help = files
        .iter()
        .map(|f| parse_reply(f))
        .find(|r| r.to == ["hostile@lords.example"])
        .expect("the help");
    // The over-long ids are not echoed; the last references that fit are.
    assert!(help.in_reply_to.is_none(), "{:?}", help.in_reply_to);
    assert!(help
        .headers
        .contains("<ref0119.rrrrrrrrrrrrrrrrrrrr@hostile.example>"));
    assert!(!help.headers.contains("<ref0000."));
    assert!(!help.headers.contains("mmmmmmmmmm"));
}

/// F8 (issue 35's model: every resource of every input bounded and charged
/// to its cause): the inbox kept every mail whole for ever, so a stranger
/// who sent mails of just under `max_mail_bytes` (512 KiB) made the
/// database grow by that much a mail, at whatever rate the mail server
/// took them, none of it charged to anybody (and a team's mails beyond its
/// replies the same). A processed mail is kept as its first 4 KiB (its
/// outcome, its replies and what it registered or compiled are kept on
/// their own); a Message-ID longer than 256 bytes is kept as its digest.
#[test]
fn a_processed_mail_is_kept_as_its_first_4_kb() {
    // Two strangers' mails a day are passed on to the organizer: those
    // stay whole (the forward names their inbox id for the whole).
    let c = Contest::new("[limits]\nforwards_per_day = 2\n");
    let auth = c.register_joe();
    let filler: String = (0..5000)
        .map(|i| format!("{i:>6} {}\n", "x".repeat(72)))
        .collect();
    assert!(filler.len() > 390_000 && filler.len() < 500_000);
    let flood: Vec<PathBuf> = (0..6)
        .map(|i| c.mail(&format!("flood{i}@forged.example"), "hello", &filler, ""))
        .collect();
    // One more whose Message-ID is 50,000 bytes long.
    let long_id = c.dir.path().join("long-id.eml");
    std::fs::write(
        &long_id,
        format!(
            "From: flood@forged.example\r\nTo: knobeln@contest.example\r\nSubject: hello\r\n\
             Message-ID: <{}@forged.example>\r\nDate: Sat, 14 May 1994 10:00:00 +0000\r\n\r\n{}",
            "i".repeat(50_000),
            filler.replace('\n', "\r\n")
        ),
    )
    .unwrap();
    // The registered team's own mail, proven by its string: kept whole.
    let status = c.mail(
        "joe@lords.example",
        "status",
        &format!("<<FROM>> the_heavy_lords_of_knobeln {auth}\n\n{filler}"),
        "",
    );
    let mut refs: Vec<&Path> = flood.iter().map(|p| p.as_path()).collect();
    refs.push(&long_id);
    refs.push(&status);
    let o = c.ingest(&refs);
    assert!(o.status.success(), "{}", out(&o));
    let rows: Vec<(String, String, i64, i64, Option<i64>)> = {
        let db = db(&c);
        let mut st = db
            .prepare(
                "SELECT origin, state, length(raw), length(coalesce(message_id, '')) + length(dedupe_key),
                        full_size FROM inbox ORDER BY id",
            )
            .unwrap();
        let rows = st
            .query_map([], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
            })
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        rows
    };
    assert_eq!(rows.len(), 9, "{rows:?}");
    for (origin, state, _, ids, _) in &rows {
        assert_ne!(state, "new", "{origin}");
        assert!(*ids <= 1024, "{origin}: {ids} bytes of Message-ID and key");
    }
    // The first two strangers' mails, forwarded, whole.
    for (origin, _, raw, _, full_size) in &rows[1..3] {
        assert!(*raw > 390_000 && full_size.is_none(), "{origin}: {raw}");
    }
    // The other four, the one with the long Message-ID and the team's
    // status: their heads, with their real sizes.
    for (origin, _, raw, _, full_size) in &rows[3..] {
        assert!(
            *raw <= 4096,
            "{origin}: {raw} bytes kept of a processed mail"
        );
        assert!(full_size.unwrap_or(0) > 390_000, "{origin}: {full_size:?}");
    }
    // The registration, shorter than 4 KiB, is kept as it came.
    let (_, _, registration, _, none) = &rows[0];
    assert!(*registration > 500 && none.is_none(), "{:?}", rows[0]);
    // The team's string was verified: the status was answered to the team.
    let to_joe = c
        .replies()
        .into_iter()
        .filter(|r| r.to == ["joe@lords.example"])
        .count();
    assert_eq!(to_joe, 2, "the acknowledgement and the status");
    // The strangers were answered all the same (one help each, within the caps).
    let helps = c
        .replies()
        .into_iter()
        .filter(|r| r.to.iter().any(|t| t.ends_with("@forged.example")))
        .count();
    assert_eq!(helps, 7);
    let forwards: Vec<Reply> = c
        .replies()
        .into_iter()
        .filter(|r| r.to == [ORGANIZER])
        .collect();
    assert_eq!(forwards.len(), 2);
    assert!(
        forwards[0].body.contains("the whole mail is inbox id")
            && forwards[0].body.contains("for 90 days)"),
        "{}",
        forwards[0].body
    );
}

/// The server deletes the rows of mails processed `keep_inbox_days` (90)
/// days ago, through the binary: two mails ingested, one of them made 91
/// days old in the database; `serve --once` (a cycle) deletes its row and
/// keeps the other's. That mail's file ingested again is then a new mail
/// (exactly-once holds while the row is there), the other is still
/// "already received".
#[test]
fn serve_deletes_the_rows_of_mails_processed_keep_inbox_days_ago() {
    let c = Contest::new("");
    let old = c.mail("r1@participants.example", "help", "hello", "");
    let recent = c.mail("r2@participants.example", "help", "hello", "");
    let o = c.ingest(&[&old, &recent]);
    assert!(o.status.success(), "{}", out(&o));
    let origins = || -> Vec<String> {
        db(&c)
            .prepare("SELECT origin FROM inbox ORDER BY id")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    };
    assert_eq!(origins().len(), 2);
    let aged = db(&c)
        .execute(
            "UPDATE inbox SET processed_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-91 days')
              WHERE origin = ?1",
            [format!("ingest:{}", old.display())],
        )
        .unwrap();
    assert_eq!(aged, 1);
    knobeln(&c, &["serve", "--once"]);
    assert_eq!(origins(), [format!("ingest:{}", recent.display())]);
    let o = c.ingest(&[&old, &recent]);
    assert!(o.status.success(), "{}", out(&o));
    let text = out(&o);
    let line = |p: &Path| {
        let name = p.display().to_string();
        text.lines()
            .find(|l| l.starts_with(&format!("{name}:")))
            .unwrap_or_else(|| panic!("no line for {name}: {text}"))
            .to_string()
    };
    assert!(!line(&old).contains("already received"), "{text}");
    assert!(line(&recent).contains("already received"), "{text}");
}
