//! Unit tests of reading a stranger's mail: size caps, MIME, charsets,
//! attachments, automatic mail, answerable addresses.

use super::*;
use crate::seed::SplitMix64;

const LOOP: &str = "knobeln@contest.example";

fn p(raw: &str) -> Inbound {
    parse(raw.as_bytes(), LOOP, &Limits::default()).expect("a mail")
}

#[test]
fn plain_mail() {
    let m = p("From: Joe Cool <Joe.Cool@Machine.Domain.EDU>\r\n\
                   Reply-To: team@uni.example\r\n\
                   Subject:   registration  for KNOBELN \r\n\
                   Message-ID: <abc@x.example>\r\n\
                   In-Reply-To: <q@x.example>\r\n\
                   References: <p@x.example> <q@x.example>\r\n\
                   \r\n\
                   hello\r\nworld\r\n");
    let from = m.from.as_ref().unwrap();
    assert_eq!(from.address, "Joe.Cool@machine.domain.edu");
    assert_eq!(from.name.as_deref(), Some("Joe Cool"));
    assert_eq!(m.reply_address().unwrap().address, "team@uni.example");
    assert_eq!(m.subject, "registration for KNOBELN");
    assert_eq!(m.message_id.as_deref(), Some("abc@x.example"));
    assert_eq!(m.in_reply_to.as_deref(), Some("q@x.example"));
    assert_eq!(m.references, vec!["p@x.example", "q@x.example"]);
    assert_eq!(m.body, Body::Text("hello\nworld\n".into()));
    assert_eq!(m.automatic, None);
    assert!(m.attachments.is_empty());
}

#[test]
fn mbox_from_line_is_skipped() {
    let m = p("From joe@x.example Tue Apr 12 10:14:55 1994\n\
                   From: joe@x.example\nSubject: s\n\nbody\n");
    assert_eq!(m.from.unwrap().address, "joe@x.example");
    assert_eq!(m.subject, "s");
    assert_eq!(m.body, Body::Text("body\n".into()));
}

#[test]
fn too_large_is_checked_before_parsing() {
    let limits = Limits {
        max_mail_bytes: 10,
        max_attachment_bytes: 10,
    };
    assert_eq!(
        parse(b"From: a@b.c\n\nxxxxxxxx", LOOP, &limits),
        Err(Unreadable::TooLarge {
            size: 21,
            limit: 10
        })
    );
}

#[test]
fn not_a_mail() {
    for raw in [
        &b""[..],
        b"\n\n\n",
        b"just some text\nwithout any header\n",
        b"\x00\x01\x02\xff\xfe",
        b"foo: bar\n\nthis has no known header\n",
    ] {
        assert_eq!(
            parse(raw, LOOP, &Limits::default()),
            Err(Unreadable::NotAMail),
            "{:?}",
            String::from_utf8_lossy(raw)
        );
    }
}

#[test]
fn automatic_kinds() {
    let cases = [
        ("Auto-Submitted: auto-replied\n", Some("auto_submitted")),
        ("Auto-Submitted: no\n", None),
        ("Precedence: bulk\n", Some("precedence")),
        ("Precedence: first-class\n", None),
        ("List-Id: <knobeln.lists.example>\n", Some("list_id")),
        ("Return-Path: <>\n", Some("null_return_path")),
        ("Return-Path: <joe@x.example>\n", None),
        ("X-Loop: KNOBELN@contest.example\n", Some("our_loop")),
        ("X-Loop: someone@else.example\n", None),
        ("Sender: owner@x.example\n", None),
        ("Sender: Postmaster@x.example\n", Some("daemon_sender")),
    ];
    for (header, kind) in cases {
        let m = p(&format!(
            "From: joe@x.example\n{header}Subject: s\n\nbody\n"
        ));
        assert_eq!(m.automatic.as_ref().map(|a| a.kind()), kind, "{header}");
    }
    let m = p("From: MAILER-DAEMON@x.example\nSubject: s\n\nbody\n");
    assert_eq!(
        m.automatic,
        Some(Automatic::DaemonSender("MAILER-DAEMON".into()))
    );
    // An empty loop id disables the loop check.
    let m = parse(
        b"From: joe@x.example\nX-Loop: \nSubject: s\n\nb\n",
        "",
        &Limits::default(),
    )
    .unwrap();
    assert_eq!(m.automatic, None);
}

/// A program's own mail (`Auto-Submitted: auto-generated`) is named only
/// when nothing else marks it a machine's, and only it is provable by a
/// team's string: an auto-responder's (`auto-replied`), a list's or our
/// own mail coming back never is, whatever `Auto-Submitted` says too.
#[test]
fn only_a_programs_own_mail_is_provable() {
    let cases = [
        ("Auto-Submitted: auto-generated\n", "auto_submitted", true),
        (
            "Auto-Submitted: Auto-Generated (cron)\n",
            "auto_submitted",
            true,
        ),
        ("Auto-Submitted: auto-replied\n", "auto_submitted", false),
        (
            "Auto-Submitted: auto-generated\nAuto-Submitted: auto-replied\n",
            "auto_submitted",
            false,
        ),
        (
            "Auto-Submitted: auto-generated\nList-Id: <l.x.example>\n",
            "list_id",
            false,
        ),
        (
            "Auto-Submitted: auto-generated\nX-Loop: KNOBELN@contest.example\n",
            "our_loop",
            false,
        ),
        (
            "Auto-Submitted: auto-generated\nX-Autoreply: yes\n",
            "auto_reply_header",
            false,
        ),
        (
            "Auto-Submitted: auto-generated\nPrecedence: bulk\n",
            "precedence",
            false,
        ),
    ];
    for (header, kind, provable) in cases {
        let m = p(&format!(
            "From: joe@x.example\n{header}Subject: s\n\nbody\n"
        ));
        let auto = m.automatic.as_ref().expect(header);
        assert_eq!((auto.kind(), auto.provable()), (kind, provable), "{header}");
    }
}

#[test]
fn every_marker_of_automatic_mail_is_recognised() {
    let cases = [
        ("X-Autoreply: yes\n", Some("auto_reply_header")),
        ("X-Autorespond: vacation\n", Some("auto_reply_header")),
        ("X-Autoreply: no\n", None),
        ("Precedence: auto_reply\n", Some("precedence")),
        ("Precedence: JUNK\n", Some("precedence")),
        (
            "List-Unsubscribe: <mailto:u@x.example>\n",
            Some("list_header"),
        ),
        ("List-Post: <mailto:l@x.example>\n", Some("list_header")),
        (
            "Return-Path: <bounces+12-joe=x.example@m.example>\n",
            Some("bounce_sender"),
        ),
        (
            "Return-Path: <games-l-bounces@lists.example>\n",
            Some("bounce_sender"),
        ),
        (
            "Return-Path: <owner-games-l@lists.example>\n",
            Some("bounce_sender"),
        ),
        ("Return-Path: <no_reply@x.example>\n", Some("daemon_sender")),
        ("Sender: noreply-shop@x.example\n", Some("daemon_sender")),
        ("Return-Path: <joe+bounce@x.example>\n", None),
        ("Sender: bouncer@x.example\n", None),
    ];
    for (header, kind) in cases {
        let m = p(&format!(
            "From: joe@x.example\n{header}Subject: s\n\nbody\n"
        ));
        assert_eq!(m.automatic.as_ref().map(|a| a.kind()), kind, "{header}");
    }
    // A delivery report inside a forwarded mail, inside a multipart.
    let m = p(
        "From: joe@x.example\nContent-Type: multipart/mixed; boundary=A\n\n\
                   --A\nContent-Type: text/plain\n\nsee below\n\
                   --A\nContent-Type: message/rfc822\n\n\
                   From: MAILER-DAEMON@y.example\nContent-Type: multipart/report; boundary=B\n\n\
                   --B\nContent-Type: text/plain\n\nfailed\n\
                   --B\nContent-Type: message/delivery-status\n\nStatus: 5.1.1\n--B--\n\
                   --A--\n",
    );
    assert_eq!(m.automatic, Some(Automatic::Report));
}

#[test]
fn only_ordinary_addresses_can_be_answered() {
    for ok in [
        "joe@lords.example",
        "Joe.Cool+knobeln@machine.domain.edu",
        "a_b-c@x-y.example",
    ] {
        assert_eq!(check_answerable(ok), Ok(()), "{ok}");
    }
    let local = "j".repeat(65);
    let long_domain = format!("j@{}example", format!("{}.", "d".repeat(60)).repeat(5));
    let cases = [
        ("a..b@x.example", "bad_local_part"),
        (".joe@x.example", "bad_local_part"),
        ("joe.@x.example", "bad_local_part"),
        ("jo(e@x.example", "bad_local_part"),
        ("joe@[127.0.0.1]", "domain_literal"),
        ("joe@localhost", "bad_domain"),
        ("joe@x..example", "bad_domain"),
        ("joe@-x.example", "bad_domain"),
        ("joe@x_y.example", "bad_domain"),
        ("a..b@x", "bad_local_part"),
    ];
    for (addr, kind) in cases {
        assert_eq!(check_answerable(addr).unwrap_err().kind(), kind, "{addr}");
    }
    assert_eq!(
        check_answerable(&format!("{local}@x.example")),
        Err(Unanswerable::LocalPartTooLong(65))
    );
    assert_eq!(
        check_answerable(&long_domain).unwrap_err().kind(),
        "address_too_long"
    );
}

#[test]
fn html_only_and_empty() {
    let m = p("From: a@b.example\nContent-Type: text/html\n\n<p>hi</p>\n");
    assert_eq!(m.body, Body::HtmlOnly);
    assert_eq!(strategy_source(&m), Err(SourceProblem::HtmlOnly));
    let m = p("From: a@b.example\nSubject: x\n\n \n\n");
    assert_eq!(m.body, Body::Empty);
    assert_eq!(strategy_source(&m), Err(SourceProblem::Empty));
    let m = p("From: a@b.example\nSubject: x\n");
    assert_eq!(m.body, Body::Empty);
}

#[test]
fn alternative_prefers_plain() {
    let m = p(
        "From: a@b.example\nContent-Type: multipart/alternative; boundary=XX\n\n\
                   --XX\nContent-Type: text/html\n\n<b>int x;</b>\n\
                   --XX\nContent-Type: text/plain; charset=utf-8\n\nint x;\n\
                   --XX--\n",
    );
    assert_eq!(m.body, Body::Text("int x;".into()));
    assert!(m.attachments.is_empty());
}

#[test]
fn source_from_attachment_or_body() {
    let m = p(
        "From: a@b.example\nContent-Type: multipart/mixed; boundary=XX\n\n\
                   --XX\nContent-Type: text/plain\n\nsee attachment\n\
                   --XX\nContent-Type: application/octet-stream; name=s.c\n\
                   Content-Transfer-Encoding: base64\n\naW50IHg7DQo=\n\
                   --XX--\n",
    );
    assert_eq!(m.attachments.len(), 1);
    assert_eq!(m.attachments[0].filename.as_deref(), Some("s.c"));
    assert_eq!(strategy_source(&m).unwrap(), "int x;\n");

    let m = p("From: a@b.example\n\nint x;\r\n-- \r\nJoe\r\n");
    assert_eq!(strategy_source(&m).unwrap(), "int x;\n");
    let m = p("From: a@b.example\n\nint x;\n--\nJoe\n--x;\n");
    assert_eq!(strategy_source(&m).unwrap(), "int x;\n");
    let m = p("From: a@b.example\n\n-- \nonly a signature\n");
    assert_eq!(strategy_source(&m), Err(SourceProblem::Empty));
}

#[test]
fn several_and_oversized_c_attachments() {
    let part = |name: &str| {
        format!("--XX\nContent-Type: text/x-csrc\nContent-Disposition: attachment; filename={name}\n\nint x;\n")
    };
    let raw = format!(
        "From: a@b.example\nContent-Type: multipart/mixed; boundary=XX\n\n{}{}--XX--\n",
        part("a.c"),
        part("b.C")
    );
    let m = p(&raw);
    assert_eq!(
        strategy_source(&m),
        Err(SourceProblem::SeveralCAttachments(2))
    );
    let limits = Limits {
        max_mail_bytes: 1 << 20,
        max_attachment_bytes: 3,
    };
    let raw = format!(
        "From: a@b.example\nContent-Type: multipart/mixed; boundary=XX\n\n{}--XX--\n",
        part("a.c")
    );
    let m = parse(raw.as_bytes(), LOOP, &limits).unwrap();
    assert!(m.attachments[0].over_limit);
    assert!(m.attachments[0].bytes.is_empty());
    assert!(matches!(
        strategy_source(&m),
        Err(SourceProblem::TooLarge { .. })
    ));
}

#[test]
fn charsets_and_encoded_words() {
    let m = p(
        "From: =?iso-8859-1?q?J=FCrgen_M=FCller?= <jm@uni-karlsruhe.DE>\n\
                   Subject: =?utf-8?q?please_compile?=\n\
                   Content-Type: text/plain; charset=windows-1252\n\
                   Content-Transfer-Encoding: quoted-printable\n\n\
                   K=F6ln =80 5=\n 6\n",
    );
    assert_eq!(m.subject, "please compile");
    let from = m.from.unwrap();
    assert_eq!(from.name.as_deref(), Some("Jürgen Müller"));
    assert_eq!(from.address, "jm@uni-karlsruhe.de");
    assert_eq!(m.body, Body::Text("Köln € 5 6\n".into()));
}

#[test]
fn unparsable_addresses_are_none() {
    let m = p("From: undisclosed-recipients:;\nSubject: x\n\nb\n");
    assert_eq!(m.from, None);
    assert_eq!(m.reply_address(), None);
}

#[test]
fn never_panics_on_random_or_truncated_input() {
    let mut rng = SplitMix64::new(1994);
    let sample = "From: Joe <joe@x.example>\r\nSubject: =?utf-8?b?cGxlYXNl?=\r\n\
            Content-Type: multipart/mixed; boundary=\"b1\"\r\n\r\n--b1\r\n\
            Content-Type: multipart/alternative; boundary=b2\r\n\r\n--b2\r\n\
            Content-Type: text/plain; charset=iso-8859-1\r\n\
            Content-Transfer-Encoding: quoted-printable\r\n\r\nK=F6ln=\r\n\r\n--b2\r\n\
            Content-Type: text/html\r\n\r\n<p>x</p>\r\n--b2--\r\n--b1\r\n\
            Content-Type: message/rfc822\r\n\r\nFrom: x@y.z\r\n\r\nnested\r\n--b1\r\n\
            Content-Type: application/octet-stream; name=\"a.c\"\r\n\
            Content-Transfer-Encoding: base64\r\n\r\naW50IHg7\r\n--b1--\r\n";
    for cut in 0..=sample.len() {
        if let Ok(m) = parse(&sample.as_bytes()[..cut], LOOP, &Limits::default()) {
            let _ = strategy_source(&m);
        }
    }
    let alphabet = b"From: \r\n--b1=?:;<>@\"boundary=Content-Type multipart/mixed base64 \x00\xff";
    for _ in 0..3000 {
        let len = rng.below(400) as usize;
        let mut raw: Vec<u8> = if rng.below(2) == 0 {
            sample.as_bytes().to_vec()
        } else {
            Vec::new()
        };
        for _ in 0..len {
            let b = if rng.below(3) == 0 {
                rng.below(256) as u8
            } else {
                alphabet[rng.below(alphabet.len() as u64) as usize]
            };
            let at = rng.below(raw.len() as u64 + 1) as usize;
            raw.insert(at, b);
        }
        if let Ok(m) = parse(&raw, LOOP, &Limits::default()) {
            let _ = strategy_source(&m);
        }
    }
}

/// `mail-parser` reads messages nested inline to any depth and frees them
/// by recursion: 16,000 levels (464 kB, within the size cap) overflowed a
/// 2 MiB stack and ended the process, past any `catch_unwind`. Read here
/// on a thread with a 2 MiB stack, as the server's own threads have: the
/// parse runs on a deep stack of its own ([`on_a_deep_stack`]), and so
/// does the sealing's.
#[test]
fn a_mail_nested_inline_to_the_size_cap_is_read_without_overflowing_a_stack() {
    let level = "Content-Type: message/rfc822\n\n";
    let levels = 17_000;
    let raw = format!(
        "From: a@b.example\nSubject: deep\n{}From: c@d.example\nSubject: inner\n\nhello\n",
        level.repeat(levels)
    );
    let limits = Limits::default();
    assert!(raw.len() <= limits.max_mail_bytes, "{}", raw.len());
    let read = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || {
            let parsed = parse(raw.as_bytes(), "loop", &limits).map(|m| m.subject);
            let sealed = crate::mail::secrets::seal(
                raw.as_bytes(),
                &[],
                crate::mail::secrets::Look::Inbound,
                limits.max_mail_bytes,
            );
            (parsed, sealed.body_dropped)
        })
        .unwrap()
        .join()
        .unwrap();
    // Read; and sealed: nested deeper than the sealing looks, the mail
    // keeps only its headers.
    assert_eq!(read, (Ok("deep".to_string()), true));
}

/// The sealing reads a mail's one parse both ways ([`read`]): that reading
/// is the server's, for every mail of the corpus and the red teams'.
#[test]
fn reading_a_parsed_mail_is_parsing_it() {
    let limits = Limits::default();
    let mut read_both_ways = 0;
    for dir in ["tests/data/mail", "tests/data/sealing"] {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "eml") {
                continue;
            }
            let raw = std::fs::read(&path).unwrap();
            let parsed = mail_parser::MessageParser::default().parse(&raw[..]);
            let read = parsed.as_ref().map(|m| read(m, "loop", &limits));
            match read {
                Some(read) => assert_eq!(read, parse(&raw, "loop", &limits), "{}", path.display()),
                None => assert!(parse(&raw, "loop", &limits).is_err(), "{}", path.display()),
            }
            read_both_ways += 1;
        }
    }
    assert!(read_both_ways > 40, "{read_both_ways}");
}
