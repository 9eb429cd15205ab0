//! Keeping authentification strings (and the organizer's one-time RSM
//! tokens) out of what the server keeps once it no longer needs them.
//!
//! The database holds a secret only as a salt and a SHA-256 ([`crate::auth`]).
//! The plain secret still passes through: a participant's mail carries it
//! in its `<<FROM>>` line (and sometimes quotes the acknowledgement), the
//! acknowledgement and the reset mail carry it out. [`seal`] is what the
//! server does to such a raw mail once processing (or delivery) has been
//! committed: every occurrence of a secret is overwritten in place by `*`
//! of the same length, in any letter case, so the mail keeps its shape and
//! its headers; when a secret survives in a decoded part (base64, quoted-
//! printable, a nested message) or in what the server's own parser reads
//! of the mail (its body text, its attachments), the body is dropped and
//! the headers kept. The mail is judged as every reader of it sees it:
//! `mail-parser`'s walk of its parts and `mail::message::parse`, through
//! which every command reads it.
//!
//! What counts as a secret in a mail: every word that stands where an
//! authentification string goes (the second word after `<<FROM>>`, the
//! word after `<<RSM>>`), verified or not, since a near miss gives most of
//! a string away (but not one under [`MIN_WORD_LEN`] characters); and every
//! word with an auth string's shape (26 letters of its alphabet, any case)
//! that matches a stored salted hash. The work is linear in the mail: at
//! most [`MAX_WORDS`] distinct words are looked at, at most
//! [`MAX_SCAN_FACTOR`] times the mail's bytes of decoded text, and a mail
//! that would need more, or one too large to be read, loses its body.
//!
//! This module is pure: the stored hashes come in as data, the sealed mail
//! goes out as data. It does not decide when to seal (see
//! `mail::process` and `mail::delivery`).

use std::collections::BTreeSet;

use std::sync::LazyLock;

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};
use mail_parser::{Message, MessageParser, PartType};

use crate::auth;
use crate::mail::message::{self, Limits};

/// The byte a secret is overwritten with.
pub const MASK: u8 = b'*';

/// Length of an authentification string (and an RSM token).
pub const AUTH_LEN: usize = 26;

/// Most distinct words a mail is checked for (credential words and
/// auth-shaped words each); a mail with more keeps only its headers.
pub const MAX_WORDS: usize = 256;

/// Longest credential word masked as a whole (longer ones: their start).
const MAX_WORD_LEN: usize = 64;

/// Shortest credential word taken for a secret: a shorter one is neither a
/// string (26 characters) nor a near miss that gives one away, and masking
/// it everywhere (`<<FROM>> team x`) would deface the mail.
pub const MIN_WORD_LEN: usize = 12;

/// Bytes after a `<<FROM>>` or `<<RSM>>` read for its words.
const LOOK_AHEAD: usize = 256;

/// Nesting depth of message/rfc822 parts looked into.
const MAX_DEPTH: usize = 8;

/// The header line a mail gets when its body was dropped.
pub const BODY_DROPPED: &str = "X-Knobeln-Body-Removed: it carried an authentification \
                                string in encoded form; removed after processing";

pub use crate::auth::{KnownSecret, SecretLookup};

impl SecretLookup for &[KnownSecret] {
    type Error = std::convert::Infallible;
    fn is_secret(&mut self, word: &str) -> Result<bool, Self::Error> {
        Ok(self.iter().any(|k| k.matches(word)))
    }
}

/// Which secrets to look for in a mail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Look {
    /// A participant's mail: credential words (verified or not) and
    /// auth-shaped words that match a stored hash.
    Inbound,
    /// The server's own mail: only words that match a stored hash (its
    /// texts name `<<FROM>> team_name auth_string` as an example).
    Outbound,
}

/// What [`seal`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sealed {
    /// The mail to keep.
    pub raw: Vec<u8>,
    /// How many occurrences were overwritten.
    pub masked: usize,
    /// Whether the body was dropped (a secret in an encoded part, or too
    /// many words to check).
    pub body_dropped: bool,
}

impl Sealed {
    /// Whether the kept mail differs from the original.
    pub fn changed(&self) -> bool {
        self.masked > 0 || self.body_dropped
    }
}

/// The markers a secret follows (built once).
static MARKERS: LazyLock<AhoCorasick> = LazyLock::new(|| {
    AhoCorasick::builder()
        .ascii_case_insensitive(true)
        .build(["<<FROM>>", "<<RSM>>"])
        .expect("two literal patterns")
});

/// An automaton for a mail's few secrets: quick to build, used once.
fn matcher(secrets: &BTreeSet<Vec<u8>>, kind: MatchKind) -> AhoCorasick {
    AhoCorasick::builder()
        .ascii_case_insensitive(true)
        .match_kind(kind)
        .kind(Some(AhoCorasickKind::NoncontiguousNFA))
        .build(secrets.iter())
        .expect("bounded literal patterns")
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

fn in_alphabet(b: u8) -> bool {
    auth::ALPHABET.contains(&b.to_ascii_lowercase())
}

/// Words standing where a secret goes: the second whitespace-separated word
/// after each `<<FROM>>`, the first after each `<<RSM>>`, within 256 bytes
/// (lower case, at least [`MIN_WORD_LEN`] and at most [`MAX_WORD_LEN`]
/// bytes each). Returns `false` when there were more than [`MAX_WORDS`]
/// distinct ones.
pub fn credential_words(text: &[u8], out: &mut BTreeSet<Vec<u8>>) -> bool {
    for m in MARKERS.find_iter(text) {
        let skip = if m.pattern().as_usize() == 0 { 1 } else { 0 };
        // A bounded look ahead keeps the scan linear (`<<FROM>>` repeated
        // without a blank would otherwise be read again at every match).
        let rest_end = text.len().min(m.end() + LOOK_AHEAD);
        let mut rest = &text[m.end()..rest_end];
        let mut word: &[u8] = &[];
        for _ in 0..=skip {
            let start = rest
                .iter()
                .position(|b| !b.is_ascii_whitespace())
                .unwrap_or(rest.len());
            rest = &rest[start..];
            let len = rest
                .iter()
                .position(|b| b.is_ascii_whitespace())
                .unwrap_or(rest.len());
            word = &rest[..len];
            rest = &rest[len..];
        }
        // `*/` closing the header comment on the same line is not part of it.
        let word = word.strip_suffix(b"*/").unwrap_or(word);
        if word.len() < MIN_WORD_LEN || word.iter().all(|&b| b == MASK) {
            continue;
        }
        let word = &word[..word.len().min(MAX_WORD_LEN)];
        out.insert(word.to_ascii_lowercase());
        if out.len() > MAX_WORDS {
            return false;
        }
    }
    true
}

/// Words with the shape of an authentification string: maximal runs of
/// `[A-Za-z0-9_]` of exactly [`AUTH_LEN`] bytes, all in its alphabet (any
/// case), lower-cased. Returns `false` when there were more than
/// [`MAX_WORDS`] distinct ones.
pub fn shaped_words(text: &[u8], out: &mut BTreeSet<Vec<u8>>) -> bool {
    let mut i = 0;
    while i < text.len() {
        if !is_word_byte(text[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < text.len() && is_word_byte(text[i]) {
            i += 1;
        }
        let word = &text[start..i];
        if word.len() == AUTH_LEN && word.iter().all(|&b| in_alphabet(b)) {
            out.insert(word.to_ascii_lowercase());
            if out.len() > MAX_WORDS {
                return false;
            }
        }
    }
    true
}

/// The shaped words that are a known secret: one lookup per word.
fn verified<L: SecretLookup>(
    words: &BTreeSet<Vec<u8>>,
    known: &mut L,
) -> Result<BTreeSet<Vec<u8>>, L::Error> {
    let mut out = BTreeSet::new();
    for w in words {
        if known.is_secret(&String::from_utf8_lossy(w))? {
            out.insert(w.clone());
        }
    }
    Ok(out)
}

/// Overwrites every occurrence of every secret (ASCII case-insensitive)
/// with [`MASK`]; returns how many.
pub fn mask(bytes: &mut [u8], secrets: &BTreeSet<Vec<u8>>) -> usize {
    if secrets.is_empty() {
        return 0;
    }
    let spans: Vec<(usize, usize)> = matcher(secrets, MatchKind::LeftmostLongest)
        .find_iter(&*bytes)
        .map(|m| (m.start(), m.end()))
        .collect();
    for &(s, e) in &spans {
        bytes[s..e].fill(MASK);
    }
    spans.len()
}

/// `text` with every occurrence of `secret` (ASCII case-insensitive)
/// overwritten by [`MASK`]: for the stored source and its report, whose
/// header carries the (verified) authentification string.
pub fn mask_text(text: &str, secret: &str) -> String {
    if secret.is_empty() {
        return text.to_string();
    }
    let mut bytes = text.as_bytes().to_vec();
    mask(
        &mut bytes,
        &BTreeSet::from([secret.as_bytes().to_ascii_lowercase()]),
    );
    // Only ASCII bytes of a match were replaced by ASCII: still UTF-8.
    String::from_utf8(bytes).expect("ASCII replaced by ASCII")
}

/// What [`mask_in_text`] shows instead of a text with too many words to check.
pub const NOT_SHOWN: &str = "(not shown: too many words to check for authentification strings)";

/// `text` (a participant's, to be passed on or noted) with every secret it
/// carries masked, as [`seal`] finds them for [`Look::Inbound`]; a text
/// with too many words to check becomes [`NOT_SHOWN`].
pub fn mask_in_text<L: SecretLookup>(text: &str, mut known: L) -> Result<String, L::Error> {
    let mut secrets = BTreeSet::new();
    let mut shaped = BTreeSet::new();
    if !(credential_words(text.as_bytes(), &mut secrets)
        && shaped_words(text.as_bytes(), &mut shaped))
    {
        return Ok(NOT_SHOWN.to_string());
    }
    secrets.extend(verified(&shaped, &mut known)?);
    let mut bytes = text.as_bytes().to_vec();
    mask(&mut bytes, &secrets);
    // Only ASCII bytes of a match were replaced by ASCII: still UTF-8.
    Ok(String::from_utf8(bytes).expect("ASCII replaced by ASCII"))
}

/// `text` with every word that matches a stored hash masked: for text the
/// server wrote itself (a stored source, a report) where only a real
/// string is to be masked. Every auth-shaped word is checked (no cap: for
/// the one-time sealing of an older database's stored sources).
pub fn mask_known(text: &str, known: &[KnownSecret]) -> String {
    let mut shaped = BTreeSet::new();
    let mut i = 0;
    let bytes = text.as_bytes();
    while i < bytes.len() {
        if !is_word_byte(bytes[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && is_word_byte(bytes[i]) {
            i += 1;
        }
        let word = &bytes[start..i];
        if word.len() == AUTH_LEN && word.iter().all(|&b| in_alphabet(b)) {
            shaped.insert(word.to_ascii_lowercase());
        }
    }
    let Ok(secrets) = verified(&shaped, &mut { known });
    let mut out = bytes.to_vec();
    mask(&mut out, &secrets);
    // Only ASCII bytes of a match were replaced by ASCII: still UTF-8.
    String::from_utf8(out).expect("ASCII replaced by ASCII")
}

/// Whether any secret occurs in `bytes` (ASCII case-insensitive).
pub fn contains_any(bytes: &[u8], secrets: &BTreeSet<Vec<u8>>) -> bool {
    !secrets.is_empty() && matcher(secrets, MatchKind::Standard).is_match(bytes)
}

/// Most bytes the sealing looks at in a mail's decoded texts, as a multiple
/// of the mail's own bytes. Each level of nesting shows a nested message's
/// bytes again (walked, and as the bytes it decodes to), a charset's
/// conversion to UTF-8 can double a text, and the server's own reading
/// shows the body and the attachments once more: an ordinary mail needs
/// two times its bytes (a text in a one-byte charset up to four), a
/// forward three, a forward of a forward four. A mail that
/// would need more (messages nested [`MAX_DEPTH`] deep need about ten)
/// keeps only its headers.
pub const MAX_SCAN_FACTOR: usize = 8;

/// What a mail decodes to, for the sealing to look at.
#[derive(Debug)]
enum Decoded {
    /// The subject, every part's decoded content, nested messages' too,
    /// and what the server's own parser reads of it.
    Texts(Vec<Vec<u8>>),
    /// `mail-parser` could not read it as MIME: its raw bytes are all any
    /// reader sees.
    NotMime,
    /// Its decoded texts would be more than [`MAX_SCAN_FACTOR`] times its
    /// bytes.
    TooMuch,
}

impl Decoded {
    /// Whether any secret shows in what the mail decodes to; a mail too
    /// large to look at counts as showing one.
    fn shows_any(&self, secrets: &BTreeSet<Vec<u8>>) -> bool {
        match self {
            Decoded::Texts(texts) => texts.iter().any(|t| contains_any(t, secrets)),
            Decoded::NotMime => false,
            Decoded::TooMuch => true,
        }
    }
}

/// The decoded texts gathered, within a budget of bytes.
struct Gathered {
    texts: Vec<Vec<u8>>,
    left: usize,
    too_much: bool,
}

impl Gathered {
    fn push(&mut self, bytes: &[u8]) {
        if self.too_much || bytes.is_empty() {
            return;
        }
        match self.left.checked_sub(bytes.len()) {
            Some(left) => {
                self.left = left;
                self.texts.push(bytes.to_vec());
            }
            None => self.too_much = true,
        }
    }
}

/// The decoded texts of a mail, as each reader of it sees them: the
/// subject and every part's decoded content as `mail-parser` walks it,
/// nested messages' too ([`MAX_DEPTH`] levels), and what the server's own
/// parser (`mail::message::parse`, which every command reads a mail
/// through) returns: its subject, its body text and each attachment's
/// bytes. The thing checked is the thing read: the server's parser joins
/// a mail's text parts, unfolds `format=flowed` lines and reads no-break
/// spaces as blanks, so its body can show a string that no part shows
/// whole (a string split over two flowed lines); and it takes a nested
/// message whose type is folded for an attachment, whose bytes the walk
/// of it as a message can hide (fuzzing found a secret in base64 under a
/// folded `message/rfc822` type that the walk never showed, and the
/// sealed mail's attachment did). A nested message is therefore also
/// looked at as the bytes it decodes to.
///
/// At most [`MAX_SCAN_FACTOR`] times the mail's bytes are gathered.
fn decoded_texts(raw: &[u8]) -> Decoded {
    fn walk(m: &Message<'_>, depth: usize, out: &mut Gathered) {
        if let Some(s) = m.subject() {
            out.push(s.as_bytes());
        }
        for part in &m.parts {
            match &part.body {
                PartType::Multipart(_) => {}
                PartType::Message(inner) => {
                    out.push(part.contents());
                    if depth < MAX_DEPTH {
                        walk(inner, depth + 1, out);
                    }
                }
                _ => out.push(part.contents()),
            }
        }
    }
    let mut out = Gathered {
        texts: Vec::new(),
        left: raw.len().saturating_mul(MAX_SCAN_FACTOR),
        too_much: false,
    };
    let walked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let m = MessageParser::default().parse(raw)?;
        walk(&m, 0, &mut out);
        Some(())
    }));
    if !matches!(walked, Ok(Some(()))) {
        return Decoded::NotMime;
    }
    // The server's parser: the caller has already held the mail to its
    // size; every attachment is looked at, whatever its size.
    let limits = Limits {
        max_mail_bytes: usize::MAX,
        max_attachment_bytes: usize::MAX,
    };
    if let Ok(m) = message::parse(raw, "", &limits) {
        out.push(m.subject.as_bytes());
        if let Some(text) = m.body.text() {
            out.push(text.as_bytes());
        }
        for a in &m.attachments {
            out.push(&a.bytes);
        }
    }
    if out.too_much {
        Decoded::TooMuch
    } else {
        Decoded::Texts(out.texts)
    }
}

/// The header part of a raw mail, without the blank line that ends it.
fn header_lines(raw: &[u8]) -> &[u8] {
    let crlf = raw.windows(4).position(|w| w == b"\r\n\r\n").map(|p| p + 2);
    let lf = raw.windows(2).position(|w| w == b"\n\n").map(|p| p + 1);
    let end = match (crlf, lf) {
        (Some(a), Some(b)) => a.min(b),
        (a, b) => a.or(b).unwrap_or(raw.len()),
    };
    &raw[..end]
}

/// The headers of `raw` (already masked) and [`BODY_DROPPED`]; if a secret
/// still shows in the decoded headers, only that line.
fn drop_body(raw: &[u8], secrets: &BTreeSet<Vec<u8>>) -> Vec<u8> {
    let mut out = header_lines(raw).to_vec();
    if !out.is_empty() && !out.ends_with(b"\n") {
        out.extend_from_slice(b"\r\n");
    }
    let subject_leaks = decoded_texts(&[out.as_slice(), b"\r\n"].concat()).shows_any(secrets);
    if subject_leaks || MARKERS.is_match(&out) {
        out.clear();
    }
    out.extend_from_slice(BODY_DROPPED.as_bytes());
    out.extend_from_slice(b"\r\n\r\n");
    out
}

/// The mail to keep once `raw` has been processed (or delivered): every
/// secret overwritten, or the body dropped where that cannot be done in
/// place. `known`: the stored salted hashes (registrations, RSM tokens).
/// A mail over `max_bytes` (one too large to be read) is not decoded: its
/// headers are kept, masked, and its body dropped.
pub fn seal(raw: &[u8], known: &[KnownSecret], look: Look, max_bytes: usize) -> Sealed {
    let Ok(sealed) = seal_with(raw, look, max_bytes, known);
    sealed
}

/// [`seal`], with each auth-shaped word of the mail looked up in `known`
/// (most mails have none; at most [`MAX_WORDS`]).
pub fn seal_with<L: SecretLookup>(
    raw: &[u8],
    look: Look,
    max_bytes: usize,
    mut known: L,
) -> Result<Sealed, L::Error> {
    let readable = raw.len() <= max_bytes;
    let decoded = if readable {
        decoded_texts(raw)
    } else {
        Decoded::NotMime
    };
    let texts_of_decoded: &[Vec<u8>] = match &decoded {
        Decoded::Texts(texts) => texts,
        Decoded::NotMime | Decoded::TooMuch => &[],
    };
    let mut secrets = BTreeSet::new();
    let mut shaped = BTreeSet::new();
    let mut within_bounds = !matches!(decoded, Decoded::TooMuch);
    let texts: Vec<&[u8]> = std::iter::once(raw)
        .chain(texts_of_decoded.iter().map(|t| t.as_slice()))
        .collect();
    for text in &texts {
        if look == Look::Inbound {
            within_bounds &= credential_words(text, &mut secrets);
        }
        within_bounds &= shaped_words(text, &mut shaped);
        if !within_bounds {
            break;
        }
    }
    if !shaped.is_empty() {
        secrets.extend(verified(&shaped, &mut known)?);
    }
    if secrets.is_empty() && within_bounds && readable {
        return Ok(Sealed {
            raw: raw.to_vec(),
            masked: 0,
            body_dropped: false,
        });
    }
    let mut kept = raw.to_vec();
    let masked = mask(&mut kept, &secrets);
    let leaks = !within_bounds || !readable || decoded_texts(&kept).shows_any(&secrets);
    if leaks {
        return Ok(Sealed {
            raw: drop_body(&kept, &secrets),
            masked,
            body_dropped: true,
        });
    }
    Ok(Sealed {
        raw: kept,
        masked,
        body_dropped: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn known(secret: &str) -> Vec<KnownSecret> {
        let salt = auth::new_salt().to_vec();
        let hash = auth::hash(&salt, secret).to_vec();
        vec![KnownSecret { salt, hash }]
    }

    fn base64(data: &[u8]) -> String {
        const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut out = String::new();
        for c in data.chunks(3) {
            let n = (c[0] as u32) << 16
                | (*c.get(1).unwrap_or(&0) as u32) << 8
                | *c.get(2).unwrap_or(&0) as u32;
            for i in 0..4 {
                if i <= c.len() {
                    out.push(T[(n >> (18 - 6 * i) & 63) as usize] as char);
                } else {
                    out.push('=');
                }
            }
        }
        out
    }

    #[test]
    fn credential_words_are_the_second_word_after_from_and_the_first_after_rsm() {
        let mut w = BTreeSet::new();
        assert!(credential_words(
            b"/*\n <<FROM>> team SeCrEt_of_a_team */\nx <<from>>\tother\n  near_miss_of_it\n<<RSM>> the_rsm_token_1 <<FROM>> t short",
            &mut w
        ));
        let w: Vec<String> = w
            .into_iter()
            .map(|v| String::from_utf8(v).unwrap())
            .collect();
        assert_eq!(
            w,
            vec!["near_miss_of_it", "secret_of_a_team", "the_rsm_token_1"]
        );
    }

    #[test]
    fn a_secret_is_masked_in_place_in_any_case_and_the_mail_keeps_its_shape() {
        let auth = auth::new_auth_string();
        let raw = format!(
            "From: a@b.example\r\nSubject: status\r\n\r\n<<FROM>> team {auth}\r\n\
             > your authentification string is {}\r\nbye\r\n",
            auth.to_ascii_uppercase()
        );
        let s = seal(raw.as_bytes(), &known(&auth), Look::Inbound, usize::MAX);
        assert_eq!(s.masked, 2);
        assert!(!s.body_dropped);
        assert_eq!(s.raw.len(), raw.len());
        let text = String::from_utf8(s.raw).unwrap();
        assert!(!text.to_ascii_lowercase().contains(&auth), "{text}");
        assert!(text.contains(&format!("<<FROM>> team {}\r\n", "*".repeat(26))));
        assert!(text.ends_with("bye\r\n"));
    }

    #[test]
    fn a_quoted_secret_without_a_from_line_is_found_by_its_hash() {
        let auth = auth::new_auth_string();
        let raw = format!("From: a@b.example\r\n\r\n> string is {auth}\r\n");
        let s = seal(raw.as_bytes(), &known(&auth), Look::Outbound, usize::MAX);
        assert_eq!(s.masked, 1);
        // An auth-shaped word that is nobody's secret stays.
        let other = auth::new_auth_string();
        let raw = format!("From: a@b.example\r\n\r\n> string is {other}\r\n");
        let s = seal(raw.as_bytes(), &known(&auth), Look::Outbound, usize::MAX);
        assert!(!s.changed());
    }

    #[test]
    fn a_secret_in_an_encoded_part_drops_the_body_and_keeps_the_headers() {
        let auth = auth::new_auth_string();
        let src = format!("/* <<FROM>> team {auth} */\nmain() {{}}\n");
        let b64 = base64(src.as_bytes());
        let raw = format!(
            "From: a@b.example\r\nSubject: please compile\r\nMIME-Version: 1.0\r\n\
             Content-Type: text/plain\r\nContent-Transfer-Encoding: base64\r\n\r\n{b64}\r\n"
        );
        let s = seal(raw.as_bytes(), &[], Look::Inbound, usize::MAX);
        assert!(s.body_dropped);
        let text = String::from_utf8(s.raw).unwrap();
        assert!(text.contains("Subject: please compile\r\n"), "{text}");
        assert!(text.contains(BODY_DROPPED), "{text}");
        assert!(!text.contains(&b64));
    }

    /// Fuzzing (`from_line`): a secret in a base64 part typed
    /// `message/rfc822` with a folded continuation was hidden from the
    /// walk of the nested message, and the sealed mail's attachment, as
    /// the server's parser reads it, showed it.
    #[test]
    fn a_secret_in_a_nested_message_read_as_an_attachment_drops_the_body() {
        let auth = "k3mnpqrstuvwxyz23456789_ab";
        let raw = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/fuzz/corpus/from_line/crash-sealed-nested-message-hides-a-secret"
        ))
        .unwrap();
        let s = seal(&raw, &[], Look::Inbound, usize::MAX);
        assert!(s.body_dropped);
        let limits = crate::mail::message::Limits::default();
        if let Ok(m) = crate::mail::message::parse(&s.raw, "loop", &limits) {
            for a in &m.attachments {
                let shown = String::from_utf8_lossy(&a.bytes).to_ascii_lowercase();
                assert!(!shown.contains(auth), "{shown}");
            }
        }
        assert!(!String::from_utf8_lossy(&s.raw).contains(auth));
    }

    /// What the server's parser reads of a sealed mail: subject, body,
    /// each attachment's bytes, lower-cased.
    fn as_the_server_reads(raw: &[u8]) -> Vec<String> {
        let limits = Limits::default();
        let Ok(m) = message::parse(raw, "loop", &limits) else {
            return Vec::new();
        };
        let mut out = vec![m.subject.to_ascii_lowercase()];
        out.extend(m.body.text().map(str::to_ascii_lowercase));
        out.extend(
            m.attachments
                .iter()
                .map(|a| String::from_utf8_lossy(&a.bytes).to_ascii_lowercase()),
        );
        out
    }

    /// The server's parser joins what no part shows whole: a string split
    /// over two lines of a `format=flowed; delsp=yes` text (neither half
    /// a credential word of [`MIN_WORD_LEN`] nor of an auth string's
    /// shape), and a near miss after `<<FROM>>` and a team's name written
    /// with no-break spaces (read as blanks). Before the sealing looked at
    /// the server's reading, both were kept whole: the first in a body the
    /// server reads as the team's string.
    #[test]
    fn a_string_only_the_servers_parser_reads_whole_is_sealed() {
        let auth = auth::new_auth_string();
        let (head, tail) = auth.split_at(10);
        let flowed = format!(
            "From: a@b.example\r\nSubject: status\r\nMIME-Version: 1.0\r\n\
             Content-Type: text/plain; charset=utf-8; format=flowed; delsp=yes\r\n\r\n\
             <<FROM>> team {head} \r\n{tail}\r\n"
        );
        let near_miss = "a_near_miss_of_a_string";
        let no_break = format!(
            "From: a@b.example\r\nSubject: status\r\nMIME-Version: 1.0\r\n\
             Content-Type: text/plain; charset=utf-8\r\n\r\n\
             <<FROM>>\u{a0}team\u{a0}{near_miss}\r\n"
        );
        let server_reads = |raw: &str, word: &str| {
            as_the_server_reads(raw.as_bytes())
                .iter()
                .any(|t| t.contains(&format!("<<from>> team {word}")))
        };
        assert!(server_reads(&flowed, &auth));
        assert!(server_reads(&no_break, near_miss));
        for (raw, word, known) in [
            (&flowed, auth.as_str(), known(&auth)),
            (&no_break, near_miss, vec![]),
        ] {
            let s = seal(raw.as_bytes(), &known, Look::Inbound, usize::MAX);
            assert!(s.changed(), "{raw}");
            for shown in as_the_server_reads(&s.raw) {
                assert!(!shown.contains(word), "{shown}");
            }
            assert!(!String::from_utf8_lossy(&s.raw).contains(word));
        }
    }

    /// `inner` as a `message/rfc822` attachment of a new mail.
    fn forwarded(inner: &str) -> String {
        format!(
            "From: a@b.example\r\nSubject: fwd\r\nMIME-Version: 1.0\r\n\
             Content-Type: multipart/mixed; boundary=\"b\"\r\n\r\n\
             --b\r\nContent-Type: text/plain\r\n\r\nsee below\r\n\
             --b\r\nContent-Type: message/rfc822\r\n\r\n{inner}\r\n--b--\r\n"
        )
    }

    /// Each level of nesting shows a message's bytes again: a mail of the
    /// server's size limit with messages nested [`MAX_DEPTH`] deep would
    /// have about ten times its bytes looked at; the sealing looks at no
    /// more than [`MAX_SCAN_FACTOR`] times, and such a mail keeps only its
    /// headers. A forwarded forward is looked at whole, and kept.
    #[test]
    fn a_mail_nested_too_deep_to_look_at_keeps_only_its_headers() {
        let text = "int main(void) { return 0; }\r\n".repeat(16_000);
        let mut mail = format!("From: c@d.example\r\nSubject: inner\r\n\r\n{text}");
        for depth in 1..=MAX_DEPTH + 2 {
            mail = forwarded(&mail);
            let Decoded::Texts(texts) = decoded_texts(mail.as_bytes()) else {
                assert!(depth > 2, "a forward {depth} deep was too much");
                assert!(mail.len() < Limits::default().max_mail_bytes);
                let s = seal(mail.as_bytes(), &[], Look::Inbound, usize::MAX);
                assert!(s.body_dropped);
                let kept = String::from_utf8(s.raw).unwrap();
                assert!(kept.ends_with(&format!("{BODY_DROPPED}\r\n\r\n")), "{kept}");
                assert!(!kept.contains("int main"), "{kept}");
                return;
            };
            let looked_at: usize = texts.iter().map(Vec::len).sum();
            eprintln!(
                "{depth} deep: {:.1} times its bytes",
                looked_at as f64 / mail.len() as f64
            );
            assert!(looked_at <= mail.len() * MAX_SCAN_FACTOR);
            if depth <= 2 {
                let s = seal(mail.as_bytes(), &[], Look::Inbound, usize::MAX);
                assert!(!s.changed());
            }
        }
        panic!(
            "messages nested {} deep were looked at whole",
            MAX_DEPTH + 2
        );
    }

    #[test]
    fn too_many_words_drop_the_body() {
        let mut body = String::new();
        for i in 0..=MAX_WORDS {
            body.push_str(&format!("<<FROM>> t near_miss_number_{i}\n"));
        }
        let raw = format!("From: a@b.example\r\n\r\n{body}");
        let s = seal(raw.as_bytes(), &[], Look::Inbound, usize::MAX);
        assert!(s.body_dropped);
        assert!(!String::from_utf8(s.raw).unwrap().contains("near_miss"));
    }

    #[test]
    fn a_mail_too_large_to_read_keeps_only_its_headers() {
        let auth = auth::new_auth_string();
        let raw = format!("From: a@b.example\r\nSubject: s {auth}\r\n\r\n<<FROM>> t {auth}\r\n");
        let s = seal(raw.as_bytes(), &known(&auth), Look::Inbound, 10);
        assert!(s.body_dropped);
        let text = String::from_utf8(s.raw).unwrap();
        assert!(
            text.starts_with("From: a@b.example\r\nSubject: s ****"),
            "{text}"
        );
        assert!(
            !text.contains(&auth) && !text.contains("<<FROM>>"),
            "{text}"
        );
    }

    #[test]
    fn a_short_word_after_from_is_no_secret() {
        let raw = b"From: a@b.example\r\n\r\n<<FROM>> team x\r\nxx x\r\n";
        assert!(!seal(raw, &[], Look::Inbound, usize::MAX).changed());
    }

    #[test]
    fn a_text_passed_on_has_its_secrets_masked() {
        let auth = auth::new_auth_string();
        let text = format!("Hello, <<FROM>> team {auth} fails; my string is {auth}. Ümlaut");
        let masked = mask_in_text(&text, known(&auth).as_slice()).unwrap();
        assert_eq!(
            masked,
            format!(
                "Hello, <<FROM>> team {0} fails; my string is {0}. Ümlaut",
                "*".repeat(26)
            )
        );
    }

    #[test]
    fn hostile_mails_are_sealed() {
        // A repeated marker without a blank (without the look-ahead bound,
        // 25,000 markers would each read the 200 kB after them), a long
        // word after a marker, and more auth-shaped words than are checked.
        let n = 200_000;
        let markers = "<<FROM>>".repeat(n / 8);
        let long_word = format!("<<FROM>> t {}", "a".repeat(n));
        let shaped: String = (0..n / 27).map(|_| "abcdefghjkmnpqrstuvwxyz234 ").collect();
        for body in [markers, long_word, shaped] {
            let raw = format!("From: a@b.example\r\n\r\n{body}\r\n");
            let mut words = BTreeSet::new();
            credential_words(raw.as_bytes(), &mut words);
            assert!(words.iter().all(|w| w.len() <= MAX_WORD_LEN));
            let s = seal(raw.as_bytes(), &[], Look::Inbound, usize::MAX);
            assert!(s.raw.len() <= raw.len() + BODY_DROPPED.len() + 4);
        }
    }

    #[test]
    fn a_mail_without_secrets_is_kept_as_it_is() {
        let raw = b"From: a@b.example\r\nSubject: help\r\n\r\nwhat is <<FROM>>?\r\n";
        let s = seal(raw, &[], Look::Inbound, usize::MAX);
        assert!(!s.changed());
        assert_eq!(s.raw, raw);
    }
}
