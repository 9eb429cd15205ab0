//! A large mail is read first in a probe the kernel stops at a CPU budget
//! (`knobeln::mail::probe`): mails that `mail-parser` reads in time
//! growing with the square of their size (a long boundary over a run of
//! dashes; boundaries that never come; the same inside a base64 nested
//! message, where no scan of the raw bytes sees it) are never parsed in
//! the server's process, whoever sent them; ordinary large mails are.

use std::process::Command;

use knobeln::mail::probe::{self, Reading, PROBED_FROM_BYTES, PROBE_CPU};
use knobeln::mail::secrets::{self, KnownSecret, Look};

use crate::mail_spool::Contest;

const BIN: &str = env!("CARGO_BIN_EXE_knobeln");

const HEAD: &str = "From: Team Kappa <kappa@example.org>\r\nTo: contest@example.org\r\n\
                    Subject: status\r\nMessage-ID: <probe@example.org>\r\nMIME-Version: 1.0\r\n";

/// One boundary of a quarter of the mail's size over a run of dashes: each
/// `--` of the run compares the boundary (0.6 s a parse at 512 KiB in
/// release).
fn long_boundary(size: usize, head: &str, first_line: &str) -> Vec<u8> {
    let mut m = format!(
        "{head}Content-Type: multipart/mixed; boundary=\"{}x\"\r\n\r\n{first_line}\r\n",
        "-".repeat(size / 4)
    )
    .into_bytes();
    m.resize(size, b'-');
    m
}

/// A multipart mail of boundary `b1`: a text part of `first_line`, then
/// `part(i)` for i = 0, 1, … while the mail is under `size` less 200
/// bytes, then (where `close`) the closing boundary.
fn parts(
    size: usize,
    head: &str,
    first_line: &str,
    part: impl Fn(usize) -> String,
    close: Close,
) -> Vec<u8> {
    let mut m = format!(
        "{head}Content-Type: multipart/mixed; boundary=\"b1\"\r\n\r\n--b1\r\n\
         Content-Type: text/plain\r\n\r\n{first_line}\r\n"
    );
    let mut i = 0;
    while m.len() < size - 200 {
        m += &part(i);
        i += 1;
    }
    if close == Close::Closed {
        m += "--b1--\r\n";
    }
    m.into_bytes()
}

#[derive(PartialEq)]
enum Close {
    Closed,
    Open,
}

/// Parts that each declare a boundary that never comes: each is looked
/// for to the end of the mail (1.2 s a parse at 512 KiB in release).
fn never_coming(size: usize, head: &str, first_line: &str) -> Vec<u8> {
    let part = |i| format!("--b1\r\nContent-Type: multipart/mixed; boundary=\"n{i}\"\r\n\r\nx\r\n");
    parts(size, head, first_line, part, Close::Open)
}

/// `data` in base64, in lines of 76 characters.
fn base64(data: &[u8]) -> String {
    crate::common::base64_lines(data, "\r\n")
}

/// The long boundary inside a nested message in base64: `mail-parser`
/// decodes it and parses it again; the raw bytes show no dash.
fn nested_in_base64(size: usize, head: &str, first_line: &str) -> Vec<u8> {
    let inner = long_boundary(
        size * 7 / 10,
        "From: x@example.org\r\nSubject: inner\r\nMIME-Version: 1.0\r\n",
        "",
    );
    format!(
        "{head}Content-Type: multipart/mixed; boundary=\"b1\"\r\n\r\n--b1\r\n\
         Content-Type: text/plain\r\n\r\n{first_line}\r\n--b1\r\nContent-Type: message/rfc822\r\n\
         Content-Transfer-Encoding: base64\r\n\r\n{}\r\n--b1--\r\n",
        base64(&inner)
    )
    .into_bytes()
}

/// An ordinary large mail: a text and an attachment in base64.
fn with_attachment(size: usize, head: &str, first_line: &str) -> Vec<u8> {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let bytes: Vec<u8> = (0..size * 3 / 4 - 2048)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    format!(
        "{head}Content-Type: multipart/mixed; boundary=\"b1\"\r\n\r\n--b1\r\n\
         Content-Type: text/plain\r\n\r\n{first_line}\r\n--b1\r\n\
         Content-Type: application/octet-stream; name=\"data.bin\"\r\n\
         Content-Disposition: attachment; filename=\"data.bin\"\r\n\
         Content-Transfer-Encoding: base64\r\n\r\n{}\r\n--b1--\r\n",
        base64(&bytes)
    )
    .into_bytes()
}

/// An ordinary large mail of many small parts, each closed.
fn many_parts(size: usize, head: &str, first_line: &str) -> Vec<u8> {
    let part =
        |i| format!("--b1\r\nContent-Type: text/plain\r\n\r\nline {i} of an ordinary mail\r\n");
    parts(size, head, first_line, part, Close::Closed)
}

/// A header field of about `size` bytes of encoded-word starts
/// (`=?aa?q?x`), folded: each start is decoded as quoted-printable to the
/// field's end, so the field reads in time quadratic in its size (30 ms at
/// 16 KiB, 0.54 s at 64 KiB, release); `breaker` after every tenth ends
/// each scan at once (a `=` before a letter), so the field reads in linear
/// time until the breaker is masked.
fn encoded_word_starts(name: &str, size: usize, breaker: Option<&str>) -> String {
    let mut out = format!("{name}:");
    let mut line = String::new();
    let mut k = 0;
    while out.len() + line.len() < size {
        line += "=?aa?q?x";
        k += 1;
        if let Some(b) = breaker.filter(|_| k % 10 == 0) {
            line += b;
        }
        if line.len() >= 64 {
            out += &format!(" {line}\r\n");
            line.clear();
        }
    }
    if !line.is_empty() {
        out += &format!(" {line}\r\n");
    }
    out
}

const SIZE: usize = 500 << 10;

/// Each costly construction is stopped at the budget; each ordinary mail
/// of the same size is read within it (by the debug build the tests run,
/// slower than the release build the server runs).
#[test]
fn the_probe_stops_costly_mails_and_reads_ordinary_large_ones() {
    let program = std::path::Path::new(BIN);
    for (name, costly) in [
        ("long boundary", long_boundary(SIZE, HEAD, "x")),
        ("never-coming boundaries", never_coming(SIZE, HEAD, "x")),
        ("nested in base64", nested_in_base64(SIZE, HEAD, "x")),
    ] {
        let r = probe::probe_with(program, &costly, PROBE_CPU).unwrap();
        assert!(
            // The timer fires at the budget; the usage read back can be
            // a tick short of it.
            matches!(r, Reading::OverBudget { cpu } if cpu >= PROBE_CPU * 9 / 10),
            "{name}: {r:?}"
        );
        // A byte of raw dashes is not what the probe looks at: it parses.
        if name == "nested in base64" {
            assert!(!costly.windows(8).any(|w| w == b"--------"));
        }
    }
    for (name, ordinary) in [
        ("attachment", with_attachment(SIZE, HEAD, "x")),
        ("many parts", many_parts(SIZE, HEAD, "x")),
    ] {
        let r = probe::probe_with(program, &ordinary, PROBE_CPU).unwrap();
        assert!(
            matches!(r, Reading::WithinBudget { cpu } if cpu < PROBE_CPU),
            "{name}: {r:?}"
        );
    }
}

/// Small mails are never probed: the costliest constructions at
/// [`PROBED_FROM_BYTES`] cost less than a probe's start.
#[test]
fn a_mail_up_to_the_probes_size_is_not_probed() {
    probe::use_this_program(BIN.into());
    let mut small = never_coming(PROBED_FROM_BYTES, HEAD, "x");
    small.resize(PROBED_FROM_BYTES, b'x');
    assert_eq!(probe::reading(&small).unwrap(), Reading::NotProbed);
    small.push(b'x');
    assert!(
        matches!(
            probe::reading(&small).unwrap(),
            Reading::WithinBudget { .. }
        ),
        "a byte more is probed"
    );
}

/// A probe that ends otherwise than by its exit 0 within the budget has not
/// read the mail: the server does not read it either (`serve` checks at
/// its start that its probe reads an ordinary mail, `check_program`, so
/// such an end is the mail's doing).
#[test]
fn a_probe_that_ends_otherwise_has_not_read_the_mail() {
    let r = probe::probe_with(
        std::path::Path::new("/bin/false"),
        &with_attachment(SIZE, HEAD, "x"),
        PROBE_CPU,
    )
    .unwrap();
    assert!(
        matches!(
            r,
            Reading::Ended {
                how: probe::Ending::Exit(1),
                ..
            }
        ),
        "{r:?}"
    );
    assert!(!r.may_be_read());
    assert!(r.why_unread(1).unwrap().contains("exit status 1"), "{r:?}");
    probe::use_this_program(BIN.into());
    probe::check_program().unwrap();
}

/// A probe that cannot start is the server's trouble, not the mail's: an
/// error, so the mail stays where it came from.
#[test]
fn a_probe_that_cannot_start_is_an_error_not_a_verdict() {
    let e = probe::probe_with(
        std::path::Path::new("/nonexistent/knobeln"),
        &long_boundary(SIZE, HEAD, "x"),
        PROBE_CPU,
    )
    .unwrap_err();
    assert!(e.to_string().contains("starting the mail probe"), "{e}");
}

/// Through `knobeln serve --once` on the spool: a stranger's costly mail
/// and a team's with its own string (which would be the team's, within
/// its share) are kept as their keys only, with the reason, never
/// answered; the team's ordinary large mail is answered.
#[test]
fn costly_mails_are_kept_as_keys_whoever_sent_them_and_ordinary_large_ones_are_answered() {
    let c = Contest::new("");
    let auth = c.register_joe();
    let team = format!("<<FROM>> the_heavy_lords_of_knobeln {auth}");
    let joe = "From: joe@lords.example\r\nTo: knobeln@contest.example\r\nSubject: status\r\n\
               MIME-Version: 1.0\r\n";
    let new = c.spool().join("incoming/new");
    std::fs::create_dir_all(&new).unwrap();
    let head = |n: usize, from: &str| {
        format!(
            "From: {from}\r\nTo: knobeln@contest.example\r\nSubject: help\r\n\
             Message-ID: <p{n}@example.org>\r\nMIME-Version: 1.0\r\n"
        )
    };
    let files: Vec<(&str, Vec<u8>)> = vec![
        (
            "a1.eml",
            long_boundary(SIZE, &head(1, "s@strangers.example"), "help"),
        ),
        (
            "a2.eml",
            never_coming(SIZE, &head(2, "t@strangers.example"), "help"),
        ),
        (
            "a3.eml",
            nested_in_base64(
                SIZE,
                &format!("{joe}Message-ID: <p3@lords.example>\r\n"),
                &team,
            ),
        ),
        (
            "a4.eml",
            with_attachment(
                SIZE,
                &format!("{joe}Message-ID: <p4@lords.example>\r\n"),
                &team,
            ),
        ),
        (
            "a5.eml",
            format!(
                "From: u@strangers.example\r\nMessage-ID: <p5@example.org>\r\n{}\r\nhelp\r\n",
                encoded_word_starts("Subject", 64 << 10, None)
            )
            .into_bytes(),
        ),
    ];
    for (name, raw) in &files {
        std::fs::write(new.join(name), raw).unwrap();
    }
    let before = c.replies().len();
    let o = Command::new(BIN)
        .args(["serve", "--once", "--config"])
        .arg(c.config())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let got = c.replies()[before..].to_vec();
    assert_eq!(got.len(), 1, "only the ordinary mail is answered: {got:?}");
    assert!(
        got[0].to == ["joe@lords.example"] && got[0].subject.contains("status"),
        "{got:?}"
    );
    let db = rusqlite::Connection::open(c.dir.path().join("k.db")).unwrap();
    let row = |file: &str| -> (String, i64, String, Option<String>) {
        db.query_row(
            "SELECT state, length(CAST(raw AS BLOB)), coalesce(outcome, ''), message_id FROM inbox \
             WHERE origin = ?1",
            [format!("spool:{file}")],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .unwrap()
    };
    for file in ["a1.eml", "a2.eml", "a3.eml", "a5.eml"] {
        let (state, bytes, outcome, message_id) = row(file);
        assert_eq!((state.as_str(), bytes), ("ignored", 0), "{file}: {outcome}");
        // Not a byte of it parsed, its header part neither: its key row
        // has no Message-ID (before, its headers were read for it, 0.54 s
        // for a5's subject in release).
        assert_eq!(message_id, None, "{file}");
        assert!(
            outcome.starts_with(&format!(
                "not taken in: reading its MIME structure took more than {} ms of CPU",
                PROBE_CPU.as_millis()
            )),
            "{file}: {outcome}"
        );
    }
    let (state, bytes, _, message_id) = row("a4.eml");
    assert_eq!(state, "done");
    assert!(bytes > 0);
    assert_eq!(message_id.as_deref(), Some("p4@lords.example"));
    // Every file is gone: nothing stays to be judged again.
    assert_eq!(std::fs::read_dir(&new).unwrap().count(), 0);
}

/// The sealing's masked copy is another mail: a team that knows its string
/// writes boundaries that contain it in the body, where the sealing masks
/// it, and escaped in their declarations, where the raw bytes do not show
/// it whole; the mail the probe let through (each boundary comes) would,
/// masked, look for 4,000 boundaries that never come, each to the end.
/// The probe stops the masked copy too: it is never read, and keeps no
/// body.
#[test]
fn a_masked_copy_that_would_cost_too_much_is_not_read_and_keeps_no_body() {
    probe::use_this_program(BIN.into());
    let auth = knobeln::auth::new_auth_string();
    let salt = knobeln::auth::new_salt().to_vec();
    let hash = knobeln::auth::hash(&salt, &auth).to_vec();
    let known = [KnownSecret { salt, hash }];
    let (front, back) = auth.split_at(6);
    let mut m = format!(
        "{HEAD}Content-Type: multipart/mixed; boundary=\"B\"\r\n\r\n--B\r\n\
         Content-Type: text/plain\r\n\r\n<<FROM>> kappa {auth}\r\n"
    );
    let mut i = 0;
    while m.len() < SIZE - 200 {
        m += &format!(
            "--B\r\nContent-Type: multipart/mixed; boundary=\"n{i}.{front}\\{back}\"\r\n\r\n\
             --n{i}.{auth}--\r\n"
        );
        i += 1;
    }
    m += "--B--\r\n";
    let raw = m.into_bytes();
    let program = std::path::Path::new(BIN);
    assert!(
        matches!(
            probe::probe_with(program, &raw, PROBE_CPU).unwrap(),
            Reading::WithinBudget { .. }
        ),
        "the mail as sent is read in time"
    );
    let mut masked = raw.clone();
    secrets::mask(&mut masked, &[auth.as_bytes().to_vec()].into());
    assert!(
        matches!(
            probe::probe_with(program, &masked, PROBE_CPU).unwrap(),
            Reading::OverBudget { .. }
        ),
        "the masked copy costs more than the budget"
    );
    let sealed = secrets::seal(&raw, &known, Look::Inbound, usize::MAX);
    assert!(sealed.masked > 0);
    assert!(sealed.body_dropped);
    assert!(
        sealed.masked_copy_unread,
        "the masked copy was read: {i} parts"
    );
    assert!(!String::from_utf8_lossy(&sealed.raw).contains(&auth));
}

/// The sealing's masked copy whose headers turn costly: a header field of
/// encoded-word starts with a breaker after every tenth, the breaker the
/// second word after `<<FROM>>`, which the sealing takes for a string and
/// masks everywhere. As sent the mail reads in linear time; masked, the
/// field is quadratic (seconds at 500 KiB). The probe stops the masked
/// copy, and nothing of it is parsed in the server's process, its headers
/// neither: the kept mail is the line saying its body was dropped.
#[test]
fn a_masked_copy_whose_headers_would_cost_too_much_keeps_nothing_parsed() {
    probe::use_this_program(BIN.into());
    let breaker = "=zzzzzzzzzzz";
    let raw = format!(
        "From: Mallory <mallory@attacker.example>\r\nMessage-ID: <f2@attacker.example>\r\n\
         Subject: hello\r\n{}\r\nhello\r\n<<FROM>> team {breaker}\r\n",
        encoded_word_starts("Comments", SIZE, Some(breaker))
    )
    .into_bytes();
    let program = std::path::Path::new(BIN);
    assert!(
        matches!(
            probe::probe_with(program, &raw, PROBE_CPU).unwrap(),
            Reading::WithinBudget { .. }
        ),
        "the mail as sent is read in time"
    );
    let sealed = secrets::seal(&raw, &[], Look::Inbound, usize::MAX);
    assert!(
        sealed.masked > 0 && sealed.body_dropped && sealed.masked_copy_unread,
        "{sealed:?}"
    );
    assert_eq!(
        String::from_utf8_lossy(&sealed.raw),
        format!("{}\r\n\r\n", secrets::BODY_DROPPED)
    );
}
