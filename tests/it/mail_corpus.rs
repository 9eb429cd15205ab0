//! The mail front end on a corpus of real-looking mails in
//! `tests/data/mail/`: each `NAME.eml` with its `NAME.expected.json` (format
//! in that folder's README). One test checks every expectation of every
//! mail and reports all mismatches with their file names; the others cut,
//! convert and grow the corpus mails to check that no input makes the parser
//! panic, that line ends do not matter, and that the size cap holds.

use std::fs;
use std::path::PathBuf;

use knobeln::mail::message::{parse, strategy_source, Body, Inbound, Limits, SourceProblem};
use knobeln::mail::registration::{parse_registration, render_record};
use serde_json::{Map, Value};

use crate::common::repo_path;

/// The `X-Loop` value the corpus assumes for the server.
const LOOP_ID: &str = "knobeln@contest.example";

/// Every `(name, raw mail, expectations)` of the corpus, sorted by name.
fn corpus() -> Vec<(String, Vec<u8>, Map<String, Value>)> {
    let dir = repo_path("tests/data/mail");
    let mut names: Vec<String> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            name.strip_suffix(".eml").map(str::to_string)
        })
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|name| {
            let eml: PathBuf = dir.join(format!("{name}.eml"));
            let exp = dir.join(format!("{name}.expected.json"));
            let raw = fs::read(&eml).unwrap_or_else(|e| panic!("{}: {e}", eml.display()));
            let text =
                fs::read_to_string(&exp).unwrap_or_else(|e| panic!("{}: {e}", exp.display()));
            let json: Value =
                serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", exp.display()));
            let Value::Object(map) = json else {
                panic!("{}: not a JSON object", exp.display())
            };
            (name, raw, map)
        })
        .collect()
}

fn source_problem_name(p: &SourceProblem) -> &'static str {
    match p {
        SourceProblem::HtmlOnly => "html_only",
        SourceProblem::Empty => "empty",
        SourceProblem::SeveralCAttachments(_) => "several_c_attachments",
        SourceProblem::TooLarge { .. } => "too_large",
        SourceProblem::Undecodable { .. } => "undecodable",
    }
}

/// A string, or a list of strings, of an expectation.
fn strings(v: &Value) -> Vec<String> {
    match v {
        Value::String(s) => vec![s.clone()],
        Value::Array(a) => a
            .iter()
            .map(|x| x.as_str().unwrap_or("<not a string>").to_string())
            .collect(),
        other => vec![other.to_string()],
    }
}

/// The mismatches between a mail and its expectations.
fn check(raw: &[u8], exp: &Map<String, Value>) -> Vec<String> {
    let mut bad = Vec::new();
    let mut mismatch = |key: &str, want: &dyn std::fmt::Debug, got: &dyn std::fmt::Debug| {
        bad.push(format!("{key}: expected {want:?}, got {got:?}"));
    };

    let parsed = parse(raw, LOOP_ID, &Limits::default());
    if let Some(want) = exp.get("unreadable") {
        let got = match &parsed {
            Err(knobeln::mail::message::Unreadable::NotAMail) => "not_a_mail",
            Err(knobeln::mail::message::Unreadable::TooLarge { .. }) => "too_large",
            Ok(_) => "readable",
        };
        if want.as_str() != Some(got) {
            mismatch("unreadable", want, &got);
        }
        return bad;
    }
    let m: Inbound = match parsed {
        Ok(m) => m,
        Err(e) => return vec![format!("not parsed: {e}")],
    };
    let source = strategy_source(&m);
    let registration = m.body.text().map(parse_registration);

    for (key, want) in exp {
        let want_str = want.as_str();
        match key.as_str() {
            "subject" => {
                if want_str != Some(m.subject.as_str()) {
                    mismatch(key, want, &m.subject);
                }
            }
            "from" => {
                let got = m.from.as_ref().map(|f| f.address.as_str());
                if want_str != got {
                    mismatch(key, want, &got);
                }
            }
            "from_name" => {
                let got = m.from.as_ref().and_then(|f| f.name.as_deref());
                if want_str != got {
                    mismatch(key, want, &got);
                }
            }
            "reply_address" => {
                let got = m.reply_address().map(|f| f.address.as_str());
                if want_str != got {
                    mismatch(key, want, &got);
                }
            }
            "message_id" => {
                if want_str != m.message_id.as_deref() {
                    mismatch(key, want, &m.message_id);
                }
            }
            "in_reply_to" => {
                if want_str != m.in_reply_to.as_deref() {
                    mismatch(key, want, &m.in_reply_to);
                }
            }
            "references" => {
                if strings(want) != m.references {
                    mismatch(key, want, &m.references);
                }
            }
            "automatic" => {
                let got = m.automatic.as_ref().map(|a| a.kind());
                if want_str != got {
                    mismatch(key, want, &m.automatic);
                }
            }
            "unanswerable" => {
                let got = m.answerable_address().err().map(|e| e.kind());
                if want_str != got {
                    mismatch(key, want, &got);
                }
            }
            "references_count" => {
                if want.as_u64() != Some(m.references.len() as u64) {
                    mismatch(key, want, &m.references.len());
                }
            }
            "body" => {
                if want_str != Some(m.body.kind()) {
                    mismatch(key, want, &m.body.kind());
                }
            }
            "body_contains" => {
                for s in strings(want) {
                    if !m.body.text().is_some_and(|t| t.contains(&s)) {
                        mismatch(key, &s, &m.body);
                    }
                }
            }
            "attachments" => {
                if want.as_u64() != Some(m.attachments.len() as u64) {
                    mismatch(key, want, &m.attachments.len());
                }
            }
            "attachment_names" => {
                let got: Vec<String> = m
                    .attachments
                    .iter()
                    .map(|a| a.filename.clone().unwrap_or_default())
                    .collect();
                if strings(want) != got {
                    mismatch(key, want, &got);
                }
            }
            "source_starts_with" | "source_ends_with" | "source_not_contains" => {
                let Ok(src) = &source else {
                    mismatch(key, want, &source);
                    continue;
                };
                for s in strings(want) {
                    let ok = match key.as_str() {
                        "source_starts_with" => src.starts_with(&s),
                        "source_ends_with" => src.ends_with(&s),
                        _ => !src.contains(&s),
                    };
                    if !ok {
                        mismatch(key, &s, src);
                    }
                }
            }
            "source_problem" => {
                let got = source.as_ref().err().map(source_problem_name);
                if want_str != got {
                    mismatch(key, want, &source);
                }
            }
            "registration" => match (&registration, want) {
                (Some(Ok(_)), Value::String(s)) if s == "ok" => {}
                (Some(Err(problems)), Value::Array(_)) => {
                    let shown: Vec<String> = problems.iter().map(|p| p.to_string()).collect();
                    for s in strings(want) {
                        if !shown.iter().any(|p| p.contains(&s)) {
                            mismatch(key, &s, &shown);
                        }
                    }
                }
                (got, _) => mismatch(key, want, got),
            },
            "registration_problems" => {
                let got = match &registration {
                    Some(Err(p)) => p.len(),
                    _ => 0,
                };
                if want.as_u64() != Some(got as u64) {
                    mismatch(key, want, &registration);
                }
            }
            "organization" | "team_name" | "mail_address" | "members" => {
                let Some(Ok(r)) = &registration else {
                    mismatch(key, want, &registration);
                    continue;
                };
                let got = match key.as_str() {
                    "organization" => Value::from(r.organization.as_str()),
                    "team_name" => Value::from(r.team_name.as_str()),
                    "mail_address" => Value::from(r.mail_address.as_str()),
                    _ => Value::from(r.members.len()),
                };
                if *want != got {
                    mismatch(key, want, &got);
                }
            }
            _ => mismatch(key, &"a known expectation (see the README)", &"unknown"),
        }
    }
    bad
}

#[test]
fn corpus_matches_expectations() {
    let cases = corpus();
    assert!(
        cases.len() >= 16,
        "only {} mails in the corpus",
        cases.len()
    );
    let mut report = Vec::new();
    for (name, raw, exp) in &cases {
        for m in check(raw, exp) {
            report.push(format!("{name}.eml: {m}"));
        }
    }
    assert!(report.is_empty(), "\n{}\n", report.join("\n"));
}

#[test]
fn every_expectation_file_has_its_mail() {
    let dir = repo_path("tests/data/mail");
    for entry in fs::read_dir(&dir).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if let Some(stem) = name.strip_suffix(".expected.json") {
            assert!(
                dir.join(format!("{stem}.eml")).exists(),
                "{name} has no {stem}.eml"
            );
        }
    }
}

/// The corpus has both line-end conventions, and converting a mail to the
/// other one changes nothing a caller sees.
#[test]
fn line_ends_do_not_matter() {
    let cases = corpus();
    let is_crlf = |raw: &[u8]| raw.windows(2).any(|w| w == b"\r\n");
    assert!(cases.iter().any(|(_, raw, _)| is_crlf(raw)));
    assert!(cases.iter().any(|(_, raw, _)| !is_crlf(raw)));
    for (name, raw, _) in &cases {
        let lf: Vec<u8> = String::from_utf8_lossy(raw)
            .replace("\r\n", "\n")
            .into_bytes();
        let crlf: Vec<u8> = String::from_utf8_lossy(&lf)
            .replace('\n', "\r\n")
            .into_bytes();
        let a = parse(&lf, LOOP_ID, &Limits::default());
        let b = parse(&crlf, LOOP_ID, &Limits::default());
        match (a, b) {
            (Ok(a), Ok(b)) => {
                assert_eq!(a.subject, b.subject, "{name}");
                assert_eq!(a.from, b.from, "{name}");
                assert_eq!(a.reply_to, b.reply_to, "{name}");
                assert_eq!(a.automatic, b.automatic, "{name}");
                assert_eq!(a.body, b.body, "{name}");
                assert_eq!(a.attachments.len(), b.attachments.len(), "{name}");
                assert_eq!(strategy_source(&a), strategy_source(&b), "{name}");
            }
            (a, b) => assert_eq!(a.err(), b.err(), "{name}"),
        }
    }
}

/// Every prefix of every corpus mail (a connection that died anywhere) is
/// read without a panic, and so is everything done with the result.
#[test]
fn truncated_mails_never_panic() {
    for (_, raw, _) in corpus() {
        for cut in 0..=raw.len() {
            if let Ok(m) = parse(&raw[..cut], LOOP_ID, &Limits::default()) {
                let _ = strategy_source(&m);
                if let Body::Text(t) = &m.body {
                    let _ = parse_registration(t);
                }
            }
        }
    }
}

/// A mail over the cap is refused before it is parsed; one at the cap is
/// read, and an attachment over its own cap keeps its size but not its
/// bytes.
#[test]
fn oversized_mail() {
    let limits = Limits::default();
    let header = "From: Joe Cool <our@machine.domain.example>\r\n\
                  Subject: please compile\r\n\
                  MIME-Version: 1.0\r\n\
                  Content-Type: multipart/mixed; boundary=\"b\"\r\n\r\n\
                  --b\r\nContent-Type: text/x-csrc; name=\"big.c\"\r\n\r\n";
    let trailer = "\r\n--b--\r\n";
    let filler = limits.max_mail_bytes - header.len() - trailer.len();
    let line = "/* the same comment line, again and again and again */\r\n";
    let mut body: String = line.repeat(filler / line.len() + 1);
    body.truncate(filler);
    let at_limit = format!("{header}{body}{trailer}");
    assert_eq!(at_limit.len(), limits.max_mail_bytes);

    let m = parse(at_limit.as_bytes(), LOOP_ID, &limits).expect("a mail at the cap is read");
    assert_eq!(m.subject, "please compile");
    assert_eq!(m.attachments.len(), 1);
    let a = &m.attachments[0];
    assert!(a.size > limits.max_attachment_bytes);
    assert!(a.over_limit && a.bytes.is_empty());
    assert!(matches!(
        strategy_source(&m),
        Err(SourceProblem::TooLarge { ref filename, .. }) if filename.as_deref() == Some("big.c")
    ));

    let over = format!("{header}x{body}{trailer}");
    assert_eq!(
        parse(over.as_bytes(), LOOP_ID, &limits),
        Err(knobeln::mail::message::Unreadable::TooLarge {
            size: limits.max_mail_bytes + 1,
            limit: limits.max_mail_bytes,
        })
    );
    // The cap is checked first: even a mail that is garbage says TooLarge.
    let garbage = vec![0xffu8; limits.max_mail_bytes + 1];
    assert!(matches!(
        parse(&garbage, LOOP_ID, &limits),
        Err(knobeln::mail::message::Unreadable::TooLarge { .. })
    ));
}

/// The plain registration mail carries exactly the announcement's form, and
/// the form written back is the same text.
#[test]
fn announcement_registration_round_trips() {
    let raw = fs::read(repo_path("tests/data/mail/registration_plain.eml")).unwrap();
    let m = parse(&raw, LOOP_ID, &Limits::default()).unwrap();
    let body = m.body.text().expect("a text body");
    let r = parse_registration(body).expect("the announcement's example is accepted");
    assert_eq!(render_record(&r), body);
    assert_eq!(parse_registration(&render_record(&r)), Ok(r));
}
