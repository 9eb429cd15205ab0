//! The bodies of the fuzz harnesses (issue 35): one function per parser a
//! stranger's bytes reach, taking arbitrary bytes.
//!
//! Each function feeds its bytes to the parsers of one input (a mail, a
//! form, a `<<FROM>>` line, a C source, a referee's line protocol, a kept
//! folder, a worker's message, a stored program, …) and checks a cheap
//! property where one is natural: a stored or wire format reads back what
//! it wrote, a mail parse keeps its size limits, a sealed mail holds no
//! secret it was told of, a replayed transcript is the transcript. The
//! oracle is a panic: an `assert!` here, or an overflow check or debug
//! assertion in the library under `-Coverflow-checks -Cdebug-assertions`.
//!
//! Two callers share these bodies: the libFuzzer bins of the separate
//! `fuzz/` crate (`bash fuzz/run.sh SECONDS`, coverage-guided), and the
//! replay test `tests/it/fuzz_corpus.rs`, which runs every file of the
//! checked-in corpus `fuzz/corpus/NAME/` through them on every test run.
//!
//! What this is not: no part of the server calls it, it does no I/O, and
//! it tests no behaviour beyond "does not panic" and the properties named
//! at each function (the parsers' own tests say what they accept).

use std::collections::BTreeSet;
use std::sync::LazyLock;

use crate::auth;
use crate::discipline::flooding::rules as flooding;
use crate::discipline::footsteps::rules as footsteps;
use crate::discipline::morabaraba::rules as morabaraba;
use crate::discipline::play::Setup;
use crate::discipline::transcript;
use crate::discipline::ultimatum::rules as ultimatum;
use crate::mail::message::{self, Limits};
use crate::mail::{commands, inbox, registration, secrets};
use crate::toolchain::{lex, purec, source};

/// Whether a panic is one the library catches by design: mail-parser's
/// (0.11.9 panics on some nested `message/rfc822` parts), which
/// `mail::message::parse` and the sealing of a kept mail catch, the mail
/// then being unreadable. Every other panic is a finding.
pub fn caught_by_design(info: &std::panic::PanicHookInfo<'_>) -> bool {
    info.location()
        .is_some_and(|l| l.file().contains("/mail-parser-"))
}

/// Wraps the panic hook (libFuzzer's, which aborts) so that a panic
/// [`caught_by_design`] unwinds, silently, to the `catch_unwind` that is
/// there for it; any other panic still reaches the hook. A mail-parser
/// panic that nothing catches still ends the run when it unwinds out of
/// the harness. Called once, by each fuzz bin's `init`.
pub fn spare_caught_panics() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !caught_by_design(info) {
            previous(info);
        }
    }));
}

/// A harness body: any bytes in, a panic on a finding.
pub type Harness = fn(&[u8]);

/// Every harness by name, as `fuzz/fuzz_targets/NAME.rs` and
/// `fuzz/corpus/NAME/` are named.
pub const HARNESSES: &[(&str, Harness)] = &[
    ("mail_intake", mail_intake),
    ("from_line", from_line),
    ("registration", registration),
    ("source_checks", source_checks),
    ("lexer", lexer),
    ("referee_lines", referee_lines),
    ("island", island),
    ("protocol", protocol),
    ("folder_image", folder_image),
    ("wire", wire),
    ("bot_program", bot_program),
];

/// Small caps, so that the fuzzer reaches the "over the limit" paths.
const LIMITS: Limits = Limits {
    max_mail_bytes: 48 * 1024,
    max_attachment_bytes: 1024,
};

/// The loop id the harnesses' mails are checked against.
const LOOP_ID: &str = "fuzz.knobeln.invalid";

/// Bytes as the mail front end turns a decoded body into text.
fn text(data: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(data)
}

/// Mail intake and the MIME walk: `inbox::Capped::from_bytes`, then
/// `message::parse` and what the commands take from a parsed mail.
/// Properties: the caps hold (a mail over `max_mail_bytes` is not parsed,
/// no attachment keeps more than `max_attachment_bytes`), a strategy source
/// has LF line ends only, an answerable address passes `check_answerable`.
pub fn mail_intake(data: &[u8]) {
    let capped = inbox::Capped::from_bytes(data, 16 * 1024);
    assert!(capped.bytes.len() <= data.len());
    assert!(data.starts_with(&capped.bytes));
    assert_eq!(capped.full_size.is_some(), data.len() > 16 * 1024);
    let _ = inbox::message_id_of(data);
    let _ = inbox::content_sha256(data);
    let _ = crate::mail::intake::headline(data);
    for raw in [data, capped.bytes.as_slice()] {
        let parsed = message::parse(raw, LOOP_ID, &LIMITS);
        if raw.len() > LIMITS.max_mail_bytes {
            assert!(matches!(parsed, Err(message::Unreadable::TooLarge { .. })));
        }
        let Ok(m) = parsed else { continue };
        for a in &m.attachments {
            assert_eq!(a.over_limit, a.size > LIMITS.max_attachment_bytes);
            assert!(a.bytes.len() <= LIMITS.max_attachment_bytes);
            if a.over_limit {
                assert!(a.bytes.is_empty());
            }
        }
        assert!(!m.subject.contains('\n'));
        if let Ok(src) = message::strategy_source(&m) {
            assert!(!src.contains('\r'));
            assert!(!src.trim().is_empty());
        }
        if let Ok(mb) = m.answerable_address() {
            assert!(message::check_answerable(&mb.address).is_ok());
        }
        let _ = commands::compile_bot::bot_source(&m);
        let _ = commands::classify(&m.subject);
        let _ = commands::rsm::round_of(&m.subject);
    }
    let _ = message::sender_and_subject(data, LOOP_ID);
}

/// A made-up stored secret (fixed salt: the harness is deterministic).
fn known_secret(secret: &str) -> secrets::KnownSecret {
    let salt = vec![7u8; 16];
    let hash = auth::hash(&salt, secret).to_vec();
    secrets::KnownSecret { salt, hash }
}

/// Whether `secret` shows in `haystack`, in any letter case.
fn shows(haystack: &[u8], secret: &str) -> bool {
    let secret = secret.to_ascii_lowercase();
    haystack
        .to_ascii_lowercase()
        .windows(secret.len())
        .any(|w| w == secret.as_bytes())
}

/// The `<<FROM>> team auth` line (and `<<RSM>> token`): the commands'
/// readers of a body (`credentials`, `compile_bot::from_line`,
/// `rsm::token_and_summary`, `preference::requested`) and the sealing of a
/// kept mail (`secrets::seal`). The bytes are a whole mail. Property: when
/// the mail's `<<FROM>>` line carries a string with the shape of an
/// authentification string that the store knows, the sealed mail shows it
/// nowhere: not in its raw bytes, its decoded body or its attachments.
pub fn from_line(data: &[u8]) {
    let plain = text(data);
    let _ = commands::credentials(&plain);
    let _ = commands::compile_bot::from_line(Some(&plain), &plain);
    let _ = commands::rsm::token_and_summary(&plain);
    let _ = commands::preference::requested(&plain);
    let mut words = BTreeSet::new();
    secrets::credential_words(data, &mut words);
    secrets::shaped_words(data, &mut words);

    let body = match message::parse(data, LOOP_ID, &LIMITS) {
        Ok(m) => m.body.text().map(str::to_string),
        Err(_) => None,
    };
    let auth = body
        .as_deref()
        .and_then(commands::credentials)
        .map(|c| c.auth)
        .filter(|a| a.len() == secrets::AUTH_LEN && a.bytes().all(|b| auth::ALPHABET.contains(&b)));
    let known: Vec<secrets::KnownSecret> = auth.iter().map(|a| known_secret(a)).collect();
    let sealed = secrets::seal(data, &known, secrets::Look::Inbound, LIMITS.max_mail_bytes);
    if !sealed.changed() {
        assert_eq!(sealed.raw, data);
    }
    let Some(auth) = auth else { return };
    assert!(
        !shows(&sealed.raw, &auth),
        "the raw sealed mail shows {auth}"
    );
    if let Ok(m) = message::parse(&sealed.raw, LOOP_ID, &LIMITS) {
        if let Some(t) = m.body.text() {
            assert!(!shows(t.as_bytes(), &auth), "the sealed body shows {auth}");
        }
        assert!(!shows(m.subject.as_bytes(), &auth));
        for a in &m.attachments {
            assert!(!shows(&a.bytes, &auth), "a sealed attachment shows {auth}");
        }
    }
    let masked = secrets::mask_known(body.as_deref().unwrap_or(""), &known);
    assert!(!shows(masked.as_bytes(), &auth));
}

/// The registration form and the preference form: `parse_registration`
/// (and the command's `register::parse`), `parse_preferences`,
/// `parse_address`, `with_entry`. Properties: an accepted form renders to
/// a record that parses back to it, its address is one a reply can go to.
pub fn registration(data: &[u8]) {
    let body = text(data);
    let _ = commands::register::parse(&body);
    if let Ok(r) = registration::parse_registration(&body) {
        let record = registration::render_record(&r);
        assert_eq!(
            registration::parse_registration(&record).as_ref(),
            Ok(&r),
            "{record}"
        );
        assert!(message::check_answerable(&r.mail_address).is_ok());
        assert_eq!(
            registration::parse_address(&r.mail_address).as_ref(),
            Ok(&r.mail_address)
        );
        let _ = r.warnings();
        let _ = registration::with_entry(&record, "team-name", "x");
    }
    // The preference command reads one value out of a body.
    let value = commands::preference::requested(&body).unwrap_or(&body);
    if let Ok(p) = registration::parse_preferences(value) {
        let again = p.iter().map(|p| p.as_str()).collect::<Vec<_>>().join(",");
        assert_eq!(registration::parse_preferences(&again), Ok(p));
    }
    for line in body.lines().take(8) {
        if let Ok(a) = registration::parse_address(line) {
            assert!(message::check_answerable(&a).is_ok(), "{a}");
        }
    }
}

/// Lines of `src` as the toolchain counts them.
fn lines_of(src: &str) -> u32 {
    lex::count_line_ends(src).saturating_add(1)
}

/// The source checks on a submitted C source: the header (`parse_header`,
/// the other `<<FROM>>` line), the single-file rule, the description, and
/// the check of gcc's preprocessed output. Property: every line number
/// named is a line of the source; the single-file findings are sorted.
pub fn source_checks(data: &[u8]) {
    let src = text(data);
    let n = lines_of(&src);
    let in_source = |line: Option<u32>| line.is_none_or(|l| (1..=n).contains(&l));
    match source::parse_header(&src) {
        Ok(h) => {
            assert!((1..=n).contains(&h.line));
            assert!(!h.team.is_empty() && !h.auth.is_empty());
            assert!(!h.team.contains(char::is_whitespace));
        }
        Err(d) => assert!(in_source(d.line), "{d:?}"),
    }
    let found = source::check_single_file(&src);
    assert!(found.iter().all(|d| in_source(d.line)), "{found:?}");
    assert!(found.windows(2).all(|w| w[0].line <= w[1].line));
    if let Some(d) = source::find_description(&src) {
        // An `#if 0` on the last line: its (empty) text starts after it.
        assert!(d.if_line < d.first_line && d.first_line <= n.saturating_add(1));
    }
    let _ = source::find_comment_description(&src);
    let _ = source::check_description(&src, 5);
    let (stripped, map) = purec::strip_line_markers(&src);
    assert_eq!(map.len(), stripped.matches('\n').count());
    let _ = purec::check_preprocessed(&src);
}

/// The lexer, in every dialect. Properties: every token is a slice of the
/// input, in order, without overlap; lines never go back nor past the
/// input's; the work stays linear (the bound its own test holds).
pub fn lexer(data: &[u8]) {
    let src = text(data);
    let n = lines_of(&src);
    for options in lex::LexOptions::ALL {
        let base = src.as_ptr() as usize;
        let mut at = 0;
        let mut line = 1;
        let mut lexer = lex::Lexer::new(&src, options);
        for t in lexer.by_ref() {
            let start = (t.text.as_ptr() as usize)
                .checked_sub(base)
                .expect("a token inside the input");
            assert!(start >= at && start + t.text.len() <= src.len());
            assert!(!t.text.is_empty());
            at = start + t.text.len();
            assert!(t.line >= line && t.line <= n, "{t:?}");
            line = t.line;
            let _ = t.literal_value();
            let _ = t.lexical_elements();
        }
        let work = lexer.work();
        assert!(work <= 8 * src.len() as u64 + 64, "work {work}");
    }
    let _ = lex::remove_splices(&src);
}

/// One small setup of each bot discipline.
static SETUPS: LazyLock<[Setup; 4]> = LazyLock::new(|| {
    let island =
        flooding::Island::parse(include_str!("discipline/flooding/test_islands/atoll.txt"))
            .expect("the demo island parses");
    [
        crate::discipline::ultimatum::setup(ultimatum::Params { rounds: 3 }),
        crate::discipline::footsteps::setup(footsteps::Params::default()),
        crate::discipline::morabaraba::setup(),
        crate::discipline::flooding::setup(island, flooding::Params { max_rounds: 30 }, 1),
    ]
});

/// The referees' line protocols: what a bot prints, through each
/// discipline's line parsers and, as a stored moves text
/// (`transcript::parse_moves`), replayed through the game's rules
/// (`transcript::expand`). The first byte picks the discipline. Properties:
/// a parsed line is in range and prints back the same; the moves body
/// reads back (also written in format 1, players from 0), and packed as
/// the store keeps it unpacks to the same bytes; the moves of a
/// replayed transcript replay to it again (`expand(moves(t)) == t`).
pub fn referee_lines(data: &[u8]) {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    // Any bytes as a stored packed body: text no longer than a kept game's,
    // or an error.
    if let Ok(t) = transcript::unpack_moves(rest) {
        assert!(t.len() <= transcript::MAX_MOVES_BYTES);
    }
    let text = text(rest);
    for line in text.lines().take(32) {
        if let Ok(offer) = ultimatum::parse_offer(line) {
            assert!(offer <= 1000);
        }
        let _ = ultimatum::parse_answer(line);
        let _ = flooding::Command::parse(line);
        if let Ok(bid) = footsteps::judge_bid(line, 50) {
            assert!(bid <= 50);
        }
        if let Ok(m) = morabaraba::Move::parse(line) {
            assert_eq!(morabaraba::Move::parse(&m.to_line()), Ok(m));
        }
        let _ = crate::lines::show_line(line);
        let _ = crate::game::lines::stored_line(line);
    }
    let setup = &SETUPS[usize::from(which) % SETUPS.len()];
    let Ok(moves) = transcript::parse_moves(&text, setup.seats()) else {
        return;
    };
    let body = transcript::moves_body(&moves);
    // As the store keeps it: packed, and unpacked byte for byte.
    if let Some(packed) = transcript::pack_moves(&body) {
        assert_eq!(transcript::unpack_moves(&packed).as_deref(), Ok(&*body));
    }
    let back = transcript::parse_moves(&body, setup.seats()).expect("a moves body reads back");
    assert_eq!(back.moves, moves.moves);
    assert_eq!(back.ends_after, moves.ends_after);
    // The same moves in format 1 (seats from 0, no format line, as older
    // contests stored them) read as the same game.
    let old: String = moves
        .moves
        .iter()
        .map(|m| format!("{}: {}\n", m.seat, transcript::quote(&m.line)))
        .chain(moves.forfeits.iter().map(|(s, _)| format!("! {s}: gone\n")))
        .chain(moves.ends_after.map(|n| format!("= {n}\n")))
        .collect();
    let old = transcript::parse_moves(&old, setup.seats()).expect("format 1 reads");
    assert_eq!(old.moves, moves.moves);
    assert_eq!(old.ends_after, moves.ends_after);
    let t = crate::discipline::play::expand(setup, &moves);
    if moves.forfeits.is_empty() && moves.ends_after.is_some() {
        // `= N` without a failure is no transcript the server writes.
        return;
    }
    // Known and left open (docs/src/security.md, "Fuzzing"): a line longer than
    // STORED_LINE_BYTES is kept cut, with the count of bytes cut off; the
    // replay cuts that cut line again, with another count.
    let long = crate::game::lines::STORED_LINE_BYTES;
    if t.iter().any(|e| e.line.len() > long) {
        return;
    }
    let again = transcript::moves_of(&t, &moves.forfeits);
    assert_eq!(crate::discipline::play::expand(setup, &again), t);
}

/// An island as the `island` command takes it: `Island::parse`.
/// Property: its text form parses back to the same island.
pub fn island(data: &[u8]) {
    let Ok(i) = flooding::Island::parse(&text(data)) else {
        return;
    };
    assert!(i.n_land() <= usize::from(i.width()) * usize::from(i.height()));
    let t = i.to_text();
    let back = flooding::Island::parse(&t).expect("an island's text parses");
    assert_eq!(back.to_text(), t);
    assert_eq!(back.rows(), i.rows());
    assert_eq!(back.start(), i.start());
    let _ = crate::discipline::flooding::rules::FloodGame::new(
        &i,
        flooding::Params { max_rounds: 5 },
        1,
    );
}

/// `text` with the checksum of every `KNOBELN-END` line made right (and
/// every line without its quoting and trailing blanks, as the decoder
/// reads it): a mutated protocol is then read past its checksum.
fn with_checksums(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut block: Option<String> = None;
    for raw in text.split('\n') {
        let line = raw
            .trim_start_matches([' ', '\t', '>', '|'])
            .trim_end_matches([' ', '\t', '\r', '\x0b', '\x0c']);
        if line.starts_with("KNOBELN-PROTOCOL ") {
            block = Some(String::new());
        }
        if let (Some(b), Some(rest)) = (&block, line.strip_prefix("KNOBELN-END ")) {
            let n = rest.split([' ', '\t']).next().unwrap_or("");
            let crc = crate::protocol::crc32(b.as_bytes());
            out.push_str(&format!("KNOBELN-END {n} {crc:08x}\n"));
            block = None;
            continue;
        }
        if let Some(b) = &mut block {
            b.push_str(line);
            b.push('\n');
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// Game protocols (the DGP mails, `knobeln protocolfmt` on what a
/// participant pastes): `protocol::decode_all`, on the text as it is and
/// with its checksums made right. Property: each protocol decoded encodes
/// to a text that decodes to it.
pub fn protocol(data: &[u8]) {
    let text = text(data);
    let _ = crate::protocol::decode(&text);
    for text in [text.to_string(), with_checksums(&text)] {
        let Ok(all) = crate::protocol::decode_all(&text) else {
            continue;
        };
        for p in &all {
            let encoded = crate::protocol::encode(p);
            assert_eq!(
                crate::protocol::decode(&encoded).as_ref(),
                Ok(p),
                "{encoded}"
            );
            let _ = crate::protocol::format_full(p);
        }
    }
}

/// The most content bytes a kept folder may have here.
const FOLDER_BYTES: u64 = 64 * 1024;

/// Kept-folder images (what a bot leaves, stored and shipped):
/// `FolderImage::decode`. Property: its encoding decodes to it, within the
/// size it was read with.
pub fn folder_image(data: &[u8]) {
    use crate::sandbox::folder::FolderImage;
    let Ok(img) = FolderImage::decode(data, FOLDER_BYTES) else {
        return;
    };
    assert!(img.content_bytes() <= FOLDER_BYTES);
    let encoded = img.encode();
    assert!(encoded.len() <= data.len());
    assert_eq!(FolderImage::decode(&encoded, FOLDER_BYTES), Ok(img.clone()));
    let _ = img.files();
    let _ = img.dirs();
    let _ = img.cost();
    let _ = img.fitted(FOLDER_BYTES / 2);
}

/// The coordinator's and the workers' messages: `JobMessage::decode`,
/// `JobMessage::identity`, `ResultMessage::decode`. Property: a decoded
/// message encodes to bytes that decode to it.
pub fn wire(data: &[u8]) {
    use crate::distributed::wire::{JobMessage, ResultMessage};
    if let Ok(job) = JobMessage::decode(data) {
        assert_eq!(JobMessage::decode(&job.encode()).as_ref(), Ok(&job));
    }
    let _ = JobMessage::identity(data);
    if let Ok(r) = ResultMessage::decode(data) {
        assert_eq!(ResultMessage::decode(&r.encode()).as_ref(), Ok(&r));
    }
}

/// Stored programs (a bot's build, kept and shipped to workers):
/// `BotProgram::decode`. Property: its encoding decodes to it and is no
/// larger than the bytes it was read from (the older JSON form aside).
pub fn bot_program(data: &[u8]) {
    use crate::lang::build::BotProgram;
    let Ok(p) = BotProgram::decode(data) else {
        return;
    };
    let encoded = p.encode();
    if data.first() != Some(&b'{') {
        assert!(encoded.len() <= data.len());
    }
    assert_eq!(BotProgram::decode(&encoded), Ok(p));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_harness_takes_empty_and_odd_input() {
        for (name, run) in HARNESSES {
            for input in [&b""[..], b"\0", b"\xff\xfe", b"\n\n\r", b"{}"] {
                let _ = name;
                run(input);
            }
        }
    }
}
