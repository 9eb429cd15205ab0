//! A participant's walk through each bot discipline by mail (issue 36),
//! with mails shaped as today's common clients send them: an Outlook
//! registration (Windows-1252, quoted-printable, a blank line after every
//! line, no-break spaces as indentation), the kit, a bot in each form the
//! help mail allows (in a Gmail body after `language:` with `<<FROM>>`
//! before the source and no-break spaces as indentation; attached with
//! `<<FROM>>` in the body; attached with `<<FROM>>` in a comment), the
//! reports, and the results mails by preference (GRP and DGP). It asserts
//! the texts a participant reads: one verdict line a report, the contest's
//! own name in every subject, no KNOBELN, no Rust debug text.

use knobeln::demo::bots::demo_bots;
use knobeln::discipline::Discipline;

use crate::common::{debug_text, stderr_of};
use crate::mail_spool::{auth_of, Contest, Reply};

/// `text` as Gmail's text part writes it: blanks that indent a line as
/// no-break spaces alternating with blanks, UTF-8 in quoted-printable with
/// soft line breaks at 76 columns, CRLF.
fn gmail_text_part(text: &str) -> String {
    let mut out = String::new();
    for line in text.split('\n') {
        let lead = line.len() - line.trim_start_matches(' ').len();
        let shaped: String = (0..lead)
            .map(|i| if i % 2 == 0 { '\u{a0}' } else { ' ' })
            .chain(line[lead..].chars())
            .collect();
        let mut encoded = String::new();
        for b in shaped.bytes() {
            if (b' '..=b'~').contains(&b) && b != b'=' {
                encoded.push(b as char);
            } else {
                encoded.push_str(&format!("={b:02X}"));
            }
        }
        // Soft breaks: at most 75 characters and the `=`, never inside an escape.
        let mut rest = encoded.as_str();
        while rest.len() > 75 {
            let mut cut = 75;
            while rest[..cut].ends_with('=') || rest[..cut - 1].ends_with('=') {
                cut -= 1;
            }
            out.push_str(&rest[..cut]);
            out.push_str("=\r\n");
            rest = &rest[cut..];
        }
        out.push_str(rest);
        out.push_str("\r\n");
    }
    out
}

/// A mail as Gmail sends it: multipart/alternative, the text part as
/// [`gmail_text_part`], an HTML part beside it.
fn gmail_mail(c: &Contest, from: &str, subject: &str, body: &str, n: usize) -> std::path::PathBuf {
    let b = "000000000000a8c41b05f8e2d7c3";
    let text = format!(
        "MIME-Version: 1.0\r\nDate: Sat, 28 Nov 2026 11:02:17 +0100\r\n\
         Message-ID: <CAJx3kQ7v2Tn0Yd8mG5pR1sWq{n}@mail.gmail.com>\r\nSubject: {subject}\r\n\
         From: {from}\r\nTo: knobeln@contest.example\r\n\
         Content-Type: multipart/alternative; boundary=\"{b}\"\r\n\r\n\
         --{b}\r\nContent-Type: text/plain; charset=\"UTF-8\"\r\n\
         Content-Transfer-Encoding: quoted-printable\r\n\r\n{}\r\n\
         --{b}\r\nContent-Type: text/html; charset=\"UTF-8\"\r\n\r\n\
         <div dir=\"ltr\">(the same as HTML)</div>\r\n--{b}--\r\n",
        gmail_text_part(body)
    );
    let path = c.dir.path().join(format!("gmail{n}.eml"));
    std::fs::write(&path, text).unwrap();
    path
}

/// A mail with `body` as text and `source` attached as `file`.
fn attached(c: &Contest, from: &str, body: &str, file: &str, source: &str) -> std::path::PathBuf {
    let text = format!(
        "From: {from}\r\nTo: knobeln@contest.example\r\nSubject: please compile\r\n\
         Message-ID: <att-{file}-{}@participants.example>\r\nMIME-Version: 1.0\r\n\
         Content-Type: multipart/mixed; boundary=\"b0\"\r\n\r\n\
         --b0\r\nContent-Type: text/plain\r\n\r\n{}\r\n--b0\r\nContent-Type: \
         application/octet-stream\r\nContent-Disposition: attachment; filename=\"{file}\"\r\n\
         \r\n{}\r\n--b0--\r\n",
        body.len(),
        body.replace('\n', "\r\n"),
        source.replace('\n', "\r\n")
    );
    let path = c.dir.path().join(format!("att-{file}-{}.eml", body.len()));
    std::fs::write(&path, text).unwrap();
    path
}

fn last(c: &Contest) -> Reply {
    c.replies().last().expect("a reply").clone()
}

/// What every mail a participant reads must be.
fn assert_readable(r: &Reply, contest: &str) {
    assert!(r.subject.starts_with(contest), "{}", r.subject);
    assert!(!r.subject.contains("KNOBELN"), "{}", r.subject);
    assert!(!r.body.contains("KNOBELN"), "{}:\n{}", r.subject, r.body);
    assert!(
        debug_text(&r.body).is_empty(),
        "{}: {:?}",
        r.subject,
        debug_text(&r.body)
    );
    for l in r.body.lines() {
        assert!(l.len() <= 72, "{}: {l:?}", r.subject);
    }
}

/// The report of a compile: accepted, one verdict line, the steps under it.
fn assert_accepted(r: &Reply, contest: &str) {
    assert_readable(r, contest);
    assert!(r.subject.contains("accepted"), "{}\n{}", r.subject, r.body);
    let verdicts = r
        .body
        .lines()
        .filter(|l| l.starts_with("Result:"))
        .collect::<Vec<_>>();
    assert_eq!(verdicts.len(), 1, "{}", r.body);
    assert!(verdicts[0].starts_with("Result: ACCEPTED"), "{}", r.body);
    assert!(r.body.contains("Build: passed"), "{}", r.body);
    assert!(r.body.contains("Trial: passed"), "{}", r.body);
}

/// Each bot discipline: (its config, a Python demo bot, a C demo bot).
const WALKS: &[(Discipline, &str, &str, &str)] = &[
    (
        Discipline::ULTIMATUM,
        "[ultimatum]\nrounds = 50\nrepetitions = 1\n",
        "random.py",
        "simple.c",
    ),
    (
        Discipline::FLOODING,
        "[flooding]\nruns = 2\n",
        "wanderer.py",
        "keeper.c",
    ),
    (
        Discipline::FOOTSTEPS,
        "[footsteps]\ngames_per_pair = 2\n",
        "counter.py",
        "steady.c",
    ),
    (Discipline::MORABARABA, "", "first.py", "miller.c"),
];

#[test]
fn a_participant_walks_through_each_bot_discipline_by_mail() {
    for &(d, section, py, c_bot) in WALKS {
        walk(d, section, py, c_bot);
    }
}

fn walk(d: Discipline, section: &str, py: &str, c_bot: &str) {
    let contest = format!("Walk {}", d.name());
    let c = Contest::new(&format!(
        "[contest]\ndiscipline = \"{}\"\nname = \"{contest}\"\n{section}",
        d.name()
    ));
    let source = |file: &str| {
        demo_bots(d)
            .iter()
            .find(|b| b.file == file)
            .unwrap_or_else(|| panic!("{d}: no demo bot {file}"))
            .source
    };
    // Registration from Outlook (the corpus mail, as it came).
    let outlook = c.dir.path().join("outlook.eml");
    std::fs::copy(
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/mail/registration_outlook.eml"
        ),
        &outlook,
    )
    .unwrap();
    c.ingest(&[&outlook]);
    let r = last(&c);
    assert_readable(&r, &contest);
    assert!(
        r.subject
            .contains("registration accepted: team the_outlook_lords"),
        "{d}: {}\n{}",
        r.subject,
        r.body
    );
    let auth = auth_of(&r);
    let jane = "jane.more@uni-karlsruhe.example";
    let from = format!("<<FROM>> the_outlook_lords {auth}");

    // The kit.
    c.ingest(&[&c.mail(jane, "send kit", "", "")]);
    let r = last(&c);
    assert_readable(&r, &contest);
    for f in ["README", "RULES.txt", "referee.py"] {
        assert!(
            r.attachments.iter().any(|a| a == f),
            "{d}: {:?}",
            r.attachments
        );
    }

    // 1. In a Gmail body after "language:", <<FROM>> before the source.
    let body = format!("language: python\n{from}\n\n{}", source(py));
    c.ingest(&[&gmail_mail(&c, jane, "please compile", &body, 1)]);
    assert_accepted(&last(&c), &contest);
    // 2. Attached, <<FROM>> in the body.
    c.ingest(&[&attached(
        &c,
        jane,
        &format!("Here it is.\n{from}\n"),
        c_bot,
        source(c_bot),
    )]);
    assert_accepted(&last(&c), &contest);
    // 3. Attached, <<FROM>> in a comment among the first lines.
    let commented = format!("/* {from} */\n{}", source(c_bot));
    c.ingest(&[&attached(&c, jane, "the newest version", c_bot, &commented)]);
    let r = last(&c);
    assert_accepted(&r, &contest);

    // The status: the bot, in the contest's words.
    c.ingest(&[&c.mail(jane, "status", &from, "")]);
    let r = last(&c);
    assert_readable(&r, &contest);
    assert!(!r.body.contains("strategy"), "{d}: {}", r.body);

    // An opponent, then the contest.
    let joe_auth = c.register_joe();
    let joe = format!("<<FROM>> the_heavy_lords_of_knobeln {joe_auth}");
    c.ingest(&[&attached(
        &c,
        "joe@lords.example",
        &joe,
        c_bot,
        source(c_bot),
    )]);
    assert_accepted(&last(&c), &contest);
    let n_before = c.replies().len();
    let out = c.start_contest();
    assert!(out.status.success(), "{d}: {}", stderr_of(&out));
    let results: Vec<Reply> = c.replies().into_iter().skip(n_before).collect();
    let to_jane: Vec<&Reply> = results.iter().filter(|r| r.to == [jane]).collect();
    for r in &to_jane {
        assert_readable(r, &contest);
    }
    let subjects: Vec<&str> = to_jane.iter().map(|r| r.subject.as_str()).collect();
    // GRP: the results per opponent (or island), without the hint to name
    // DGP, which she did; DGP: the transcripts, attached; and the final
    // results.
    let summary = to_jane
        .iter()
        .find(|r| {
            r.subject.ends_with("your results per opponent")
                || r.subject.ends_with("your results per island")
        })
        .unwrap_or_else(|| panic!("{d}: no summary in {subjects:?}"));
    assert!(!summary.body.contains("name DGP"), "{d}: {}", summary.body);
    let transcripts = to_jane
        .iter()
        .find(|r| r.subject.contains("transcripts"))
        .unwrap_or_else(|| panic!("{d}: no transcripts in {subjects:?}"));
    assert!(
        !transcripts.attachments.is_empty(),
        "{d}: {}",
        transcripts.body
    );
    assert!(
        to_jane
            .iter()
            .any(|r| r.subject.ends_with("the final results")),
        "{d}: {subjects:?}"
    );
}
