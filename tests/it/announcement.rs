//! What the announcement promised a participant, and the participant gets:
//! the acceptance of a registration carries knobellib.c (which builds and
//! plays with the kit's own referee) and the description of the five
//! routines; "should" rules (a team of more than ten) are warnings, not
//! refusals; every mail text is 7-bit ASCII within 72 columns.

use std::path::PathBuf;
use std::process::Command;

use mail_parser::{MessageParser, MimeHeaders};

use knobeln::kit::{self, BUILD_COMMAND};
use knobeln::protocol::decode;
use knobeln::toolchain::compile::Profile;
use knobeln::toolchain::diagnostic::Check;

use super::common::{compile_source, source_path};
use super::mail_spool::{Contest, REGISTRATION};

/// The raw bytes of the last mail in the spool's outbox.
fn last_raw(c: &Contest) -> Vec<u8> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(c.spool().join("outgoing"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "eml"))
        .collect();
    files.sort();
    std::fs::read(files.last().expect("a mail")).unwrap()
}

/// Every line of a mail's text part: 7-bit, at most 72 columns, no
/// trailing blanks.
pub fn assert_mail_text(what: &str, text: &str) {
    for line in text.lines() {
        assert!(line.is_ascii(), "{what}: not 7-bit: {line:?}");
        assert!(line.len() <= 72, "{what}: longer than 72: {line:?}");
        assert_eq!(line, line.trim_end(), "{what}: trailing blanks: {line:?}");
    }
}

fn sh(dir: &std::path::Path, line: &str) -> std::process::Output {
    let out = Command::new("sh")
        .arg("-c")
        .arg(line)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "`{line}` failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

#[test]
fn the_acceptance_carries_knobellib_c_that_builds_and_plays_with_the_kits_referee() {
    let c = Contest::new("");
    let reg = c.mail(
        "joe@lords.example",
        "registration for KNOBELN",
        REGISTRATION,
        "",
    );
    assert!(c.ingest(&[&reg]).status.success());
    let raw = last_raw(&c);
    let m = MessageParser::default().parse(&raw).unwrap();
    assert!(m.subject().unwrap().contains("registration accepted"));
    let body = m.body_text(0).unwrap().replace("\r\n", "\n");
    assert_mail_text("acceptance", &body);
    // The text: the five routines, described, with the contest's rules.
    for routine in [
        "int init_random ()",
        "int log2 (int number)",
        "int next_random (int low, int high)",
        "int make_throw (int my_throw)",
        "int count_points (int throw1, int throw2, int *points1, int *points2)",
    ] {
        assert!(body.contains(routine), "{routine} in {body}");
    }
    assert!(body.contains("outside 1..12288"), "{body}");
    assert!(body.contains("at least 8 throws"), "{body}");
    assert!(body.contains("Attached to this mail are knobellib.c"));
    // The whole mail, attachments included, is 7-bit safe.
    assert!(raw.is_ascii(), "the mail is 7-bit");
    // The attachments: exactly the kit's knobellib.c and knobellib.h.
    let mut got = std::collections::BTreeMap::new();
    for a in m.attachments() {
        let name = a.attachment_name().unwrap().to_string();
        got.insert(name, a.contents().to_vec());
    }
    assert_eq!(
        got.keys().map(String::as_str).collect::<Vec<_>>(),
        ["knobellib.c", "knobellib.h"]
    );
    for (name, bytes) in &got {
        assert_eq!(bytes.as_slice(), kit::file(name).unwrap().bytes, "{name}");
    }
    // It builds: the 1994 example with the mailed knobellib.c, played by
    // the kit's referee (built with gcc alone) against itself.
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes) in &got {
        std::fs::write(dir.path().join(name), bytes).unwrap();
    }
    for name in ["referee.c", "example.c"] {
        std::fs::write(dir.path().join(name), kit::file(name).unwrap().bytes).unwrap();
    }
    sh(dir.path(), "gcc -O2 -o referee referee.c");
    sh(
        dir.path(),
        &BUILD_COMMAND.replace("-o mine mine.c", "-o example example.c"),
    );
    let game = sh(dir.path(), "./referee -s 1994 example example");
    let p = decode(&String::from_utf8(game.stdout).unwrap()).expect("a protocol");
    assert_eq!(p.throws.len(), 1000);
    assert!(p.failures.is_empty(), "{:?}", p.failures);
}

#[test]
fn a_team_of_eleven_is_registered_with_a_warning() {
    let c = Contest::new("");
    let mut body = REGISTRATION.to_string();
    for i in 0..9 {
        body.push_str(&format!(" Member {i}, 30, programmer,\n some background\n"));
    }
    let reg = c.mail("joe@lords.example", "registration for KNOBELN", &body, "");
    assert!(c.ingest(&[&reg]).status.success());
    let ack = c.replies().pop().unwrap();
    assert!(
        ack.subject.contains("registration accepted"),
        "{}",
        ack.subject
    );
    let text = ack.body.replace("\r\n", "\n");
    assert!(text.contains("Please note:"), "{text}");
    assert!(text.contains("has 11 members"), "{text}");
    assert!(text.contains("\"Team size should be"), "{text}");
    assert_mail_text("acknowledgement", &text);
}

/// The valid corpus submission with its 15-line `#if 0` description
/// replaced by `description`.
fn with_description(description: &str) -> String {
    let src = std::fs::read_to_string(source_path("valid")).unwrap();
    let start = src.find("#if 0\n").unwrap();
    let end = src.find("#endif\n").unwrap() + "#endif\n".len();
    format!("{}{description}{}", &src[..start], &src[end..])
}

fn description_lines(n: usize, prefix: &str) -> String {
    (1..=n)
        .map(|i| format!("{prefix}We cooperate, idea number {i}.\n"))
        .collect()
}

#[test]
fn requirement_7_accepts_about_15_lines_and_a_comment_with_a_warning() {
    let valid = compile_source(
        std::fs::read(source_path("valid")).unwrap().as_slice(),
        Profile::Submission,
    );
    let count = valid.report().lexical_elements;
    assert_eq!(count, Some(81));
    let warnings_of = |src: &str| -> (bool, Option<u64>, Vec<String>) {
        let o = compile_source(src.as_bytes(), Profile::Submission);
        let r = o.report();
        let w = r
            .warnings()
            .filter(|d| d.check == Check::Description)
            .map(|d| d.message.clone())
            .collect();
        (o.accepted(), r.lexical_elements, w)
    };
    // 12 lines in #if 0: accepted, warned, counted the same.
    let (ok, n, w) = warnings_of(&with_description(&format!(
        "#if 0\n{}#endif\n",
        description_lines(12, "")
    )));
    assert!(ok);
    assert_eq!(n, count, "the lexical count is unaffected");
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(w[0].contains("has 12 non-blank lines"), "{w:?}");
    // 11 lines: too short even for "about 15".
    let (ok, _, _) = warnings_of(&with_description(&format!(
        "#if 0\n{}#endif\n",
        description_lines(11, "")
    )));
    assert!(!ok);
    // 15 lines in a comment: accepted, the warning names the form.
    let (ok, n, w) = warnings_of(&with_description(&format!(
        "/*\n{} */\n",
        description_lines(15, " * ")
    )));
    assert!(ok);
    assert_eq!(n, count, "the lexical count is unaffected");
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].contains("Please enclose the description in #if 0 ..... #endif"),
        "{w:?}"
    );
    // The same in line comments.
    let (ok, n, w) = warnings_of(&with_description(&description_lines(15, "// ")));
    assert!(ok && n == count && w.len() == 1, "{w:?}");
    // And the report says so under Warnings, without blaming gcc.
    let o = compile_source(
        with_description(&description_lines(15, "// ")).as_bytes(),
        Profile::Submission,
    );
    let text = knobeln::report::compile_report(
        o.report(),
        o.accepted(),
        10_000,
        None,
        &knobeln::report::ReportNotes::default(),
    );
    assert!(
        text.contains("Warnings (your program is not rejected for them):"),
        "{text}"
    );
    assert!(text.contains("check 4 (verbal description"), "{text}");
}
