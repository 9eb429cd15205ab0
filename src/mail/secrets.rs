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
//! printable, a nested message), a decoded header, or what the server's
//! own parser reads of the mail (its body text, its attachments), or when
//! the masking changed how the mail reads (its parts, a type's
//! parameters), the body is dropped and the headers kept, if they on
//! their own show none. The mail is judged as every reader of it sees it:
//! its bytes, `mail-parser`'s walk of its headers and parts (what a mail
//! client shows), and `mail::message::parse`, through which every command
//! reads it; each text also as its readers join it ([`joined`]: line
//! splices, as the reader of a C source's header removes them, and NULs).
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
use mail_parser::{
    Address, ContentType, Encoding, HeaderValue, Message, MessageParser, MessagePart, MimeHeaders,
    PartType,
};

use crate::auth;
use crate::mail::message::{self, Limits};
use crate::mail::probe::{self, Reading};
use crate::toolchain::lex::splice_len;

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

/// Nesting depth of message/rfc822 parts looked into; a mail nesting
/// deeper keeps only its headers.
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
    /// Whether the masked copy was left unread: its probe stopped it at
    /// the CPU budget (`mail::probe`), so nothing of it is kept but the
    /// line saying the body was dropped (its headers are not parsed either).
    pub masked_copy_unread: bool,
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
    [Blanks::Ascii, Blanks::Unicode]
        .into_iter()
        .all(|blanks| credential_words_between(text, blanks, out))
}

/// What separates the words after a marker: the server's readers split
/// with Rust's `split_whitespace` (Unicode's blanks: an ideographic space,
/// a vertical tab, U+0085, U+00A0, also as one Latin-1 byte, as a source
/// not in UTF-8 is read), the sealing's first look with ASCII blanks; the
/// words of both are taken (red team `u1`: a near miss after an
/// ideographic space was the server's word and none of the sealing's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Blanks {
    Ascii,
    Unicode,
}

impl Blanks {
    /// The length of the blank `rest` starts with, 0 if none.
    fn len_at(self, rest: &[u8]) -> usize {
        let Some(&b) = rest.first() else {
            return 0;
        };
        if b.is_ascii_whitespace() {
            return 1;
        }
        if self == Blanks::Ascii {
            return 0;
        }
        if matches!(b, 0x0b | 0x85 | 0xa0) {
            return 1;
        }
        let len = match b {
            0xc0..=0xdf => 2,
            0xe0..=0xef => 3,
            0xf0..=0xf7 => 4,
            _ => return 0,
        };
        let blank = rest
            .get(..len)
            .and_then(|c| std::str::from_utf8(c).ok())
            .and_then(|c| c.chars().next())
            .is_some_and(char::is_whitespace);
        if blank {
            len
        } else {
            0
        }
    }
}

fn credential_words_between(text: &[u8], blanks: Blanks, out: &mut BTreeSet<Vec<u8>>) -> bool {
    for m in MARKERS.find_iter(text) {
        let skip = if m.pattern().as_usize() == 0 { 1 } else { 0 };
        // A bounded look ahead keeps the scan linear (`<<FROM>>` repeated
        // without a blank would otherwise be read again at every match).
        let rest_end = text.len().min(m.end() + LOOK_AHEAD);
        let rest = &text[m.end()..rest_end];
        let mut i = 0;
        let mut word: &[u8] = &[];
        for _ in 0..=skip {
            while let n @ 1.. = blanks.len_at(&rest[i..]) {
                i += n;
            }
            let start = i;
            while i < rest.len() && blanks.len_at(&rest[i..]) == 0 {
                i += 1;
            }
            word = &rest[start..i];
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
    each_shaped_word(text, |word| {
        out.insert(word.to_ascii_lowercase());
        out.len() <= MAX_WORDS
    })
}

/// Calls `f` with each word of `text` that has an auth string's shape
/// while it returns `true`; returns whether it always did.
fn each_shaped_word(text: &[u8], mut f: impl FnMut(&[u8]) -> bool) -> bool {
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
        if word.len() == AUTH_LEN && word.iter().all(|&b| in_alphabet(b)) && !f(word) {
            return false;
        }
    }
    true
}

/// The words of a text that may be secrets, gathered into `words`:
/// credential words (for [`Look::Inbound`]) and shaped words, in the text
/// as written and, where it has splices or NULs, as joined ([`joined`]). Returns
/// `false` past [`MAX_WORDS`] of either kind.
fn words_of(text: &[u8], look: Look, words: &mut Words) -> bool {
    let as_read = joined(text).map(|(t, _)| t);
    std::iter::once(text).chain(as_read.as_deref()).all(|t| {
        (look == Look::Outbound || credential_words(t, &mut words.credential))
            && shaped_words(t, &mut words.shaped)
    })
}

/// The words of a mail (or a text) that may be secrets: credential words,
/// secrets whatever they are, and shaped words, secrets if a stored hash
/// says so.
#[derive(Debug, Default)]
struct Words {
    credential: BTreeSet<Vec<u8>>,
    shaped: BTreeSet<Vec<u8>>,
}

impl Words {
    /// The words of `texts` ([`words_of`] each); `None` past [`MAX_WORDS`].
    fn of<'t>(texts: impl IntoIterator<Item = &'t [u8]>, look: Look) -> Option<Words> {
        let mut words = Words::default();
        texts
            .into_iter()
            .all(|t| words_of(t, look, &mut words))
            .then_some(words)
    }

    /// The secrets among them: every credential word, and the shaped words
    /// a stored hash knows (one lookup each).
    fn secrets<L: SecretLookup>(self, known: &mut L) -> Result<BTreeSet<Vec<u8>>, L::Error> {
        let mut secrets = self.credential;
        if !self.shaped.is_empty() {
            secrets.extend(verified(&self.shaped, known)?);
        }
        Ok(secrets)
    }
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

/// For each byte of `bytes`, the farthest end of an occurrence of a
/// secret that starts there (0 where none does), and how many starts had
/// one. Occurrences may overlap (a near miss ending in a string's first
/// letters, before the string): every one counts. At most as many as
/// bytes times the distinct lengths of the secrets.
fn reach_of(bytes: &[u8], secrets: &BTreeSet<Vec<u8>>) -> (Vec<usize>, usize) {
    let mut reach = vec![0; bytes.len()];
    let mut starts = 0;
    for m in matcher(secrets, MatchKind::Standard).find_overlapping_iter(bytes) {
        if reach[m.start()] == 0 {
            starts += 1;
        }
        reach[m.start()] = reach[m.start()].max(m.end());
    }
    (reach, starts)
}

/// The places some occurrence covers, in one sweep over [`reach_of`]'s ends.
fn covered(reach: &[usize]) -> impl Iterator<Item = usize> + '_ {
    let mut until = 0;
    reach.iter().enumerate().filter_map(move |(i, &end)| {
        until = until.max(end);
        (i < until).then_some(i)
    })
}

/// `bytes` as its readers join it: its line splices removed (a backslash,
/// blanks, a line end: what a C compiler and the server's reader of a
/// source's header remove before reading a word) and its NUL bytes (which
/// a terminal or an editor shows as nothing: a text in UTF-16, red team
/// `n1`); and where each byte kept stands in `bytes`. `None` when it has
/// neither.
fn joined(bytes: &[u8]) -> Option<(Vec<u8>, Vec<usize>)> {
    if !bytes.iter().any(|&b| b == b'\\' || b == 0) {
        return None;
    }
    let mut text = Vec::with_capacity(bytes.len());
    let mut at = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match splice_len(bytes, i) {
            0 if bytes[i] == 0 => i += 1,
            0 => {
                text.push(bytes[i]);
                at.push(i);
                i += 1;
            }
            n => i += n,
        }
    }
    (text.len() < bytes.len()).then_some((text, at))
}

/// Overwrites every occurrence of every secret (ASCII case-insensitive)
/// with [`MASK`], overlapping ones too; then every one that shows in the
/// text as joined ([`joined`]: splices and NULs removed), letter by letter
/// where each stands (the splices and NULs stay, the text keeps its
/// length). Returns how many.
pub fn mask(bytes: &mut [u8], secrets: &BTreeSet<Vec<u8>>) -> usize {
    if secrets.is_empty() {
        return 0;
    }
    // Joined before any is masked: a piece of a string before a splice
    // can be a secret of its own (a near miss), and masking it, splice and
    // all, must not hide the rest of the string (red team `q3`).
    let as_read = joined(bytes);
    let (reach, written) = reach_of(bytes, secrets);
    for i in covered(&reach) {
        bytes[i] = MASK;
    }
    let Some((text, at)) = as_read else {
        return written;
    };
    let (reach, _) = reach_of(&text, secrets);
    // Those that stand across what was removed (the others were masked).
    let across = (0..text.len())
        .filter(|&i| reach[i] > 0 && at[reach[i] - 1] - at[i] != reach[i] - 1 - i)
        .count();
    for i in covered(&reach) {
        bytes[at[i]] = MASK;
    }
    written + across
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
    let Some(words) = Words::of([text.as_bytes()], Look::Inbound) else {
        return Ok(NOT_SHOWN.to_string());
    };
    let secrets = words.secrets(&mut known)?;
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
    let bytes = text.as_bytes();
    let as_read = joined(bytes).map(|(t, _)| t);
    let mut shaped = BTreeSet::new();
    for t in std::iter::once(bytes).chain(as_read.as_deref()) {
        each_shaped_word(t, |word| {
            shaped.insert(word.to_ascii_lowercase());
            true
        });
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

/// One part of a mail as `mail-parser` reads it: where its headers, its
/// body and its end are, its transfer encoding, what kind of part it is
/// and its type. Masking keeps every byte's place, so a masked mail whose
/// parts differ from the sent one's was changed by the masking itself (a
/// near miss that was also a boundary, say): its body is not kept.
#[derive(Debug, PartialEq, Eq)]
struct PartShape {
    depth: usize,
    offsets: [u32; 3],
    encoding: Encoding,
    encoding_problem: bool,
    kind: &'static str,
    content_type: Option<TypeShape>,
    disposition: Option<TypeShape>,
}

/// A `Content-Type` or `Content-Disposition` as `mail-parser` reads it:
/// its type and every parameter, in order, with its value but for a
/// name's (`name`, `filename`: where a string is masked on purpose). A
/// string masked in a parameter's name made another parameter of the same
/// name come first: the charset or `format=flowed` the server read the
/// text by changed, and the kept text showed most of the string (red
/// team: `f1`, `f2`, `f3`).
#[derive(Debug, PartialEq, Eq)]
struct TypeShape {
    kind: String,
    subtype: Option<String>,
    parameters: Vec<(String, Option<String>)>,
}

impl TypeShape {
    fn of(c: &ContentType<'_>) -> TypeShape {
        TypeShape {
            kind: c.ctype().to_ascii_lowercase(),
            subtype: c.subtype().map(str::to_ascii_lowercase),
            parameters: c
                .attributes()
                .unwrap_or_default()
                .iter()
                .map(|a| {
                    let name = a.name.to_ascii_lowercase();
                    let value = (!matches!(name.as_str(), "name" | "filename"))
                        .then(|| a.value.to_string());
                    (name, value)
                })
                .collect(),
        }
    }
}

impl PartShape {
    fn of(part: &MessagePart<'_>, depth: usize) -> PartShape {
        PartShape {
            depth,
            offsets: [part.offset_header, part.offset_body, part.offset_end],
            encoding: part.encoding,
            encoding_problem: part.is_encoding_problem,
            kind: match &part.body {
                PartType::Text(_) => "text",
                PartType::Html(_) => "html",
                PartType::Binary(_) => "binary",
                PartType::InlineBinary(_) => "inline",
                PartType::Message(_) => "message",
                PartType::Multipart(_) => "multipart",
            },
            content_type: part.content_type().map(TypeShape::of),
            disposition: part.content_disposition().map(TypeShape::of),
        }
    }
}

/// What a mail decodes to, for the sealing to look at.
#[derive(Debug)]
enum Decoded {
    /// Every header's decoded value, every part's decoded content, nested
    /// messages' too, and what the server's own parser reads of it; and
    /// its parts.
    Texts {
        texts: Vec<Vec<u8>>,
        parts: Vec<PartShape>,
    },
    /// `mail-parser` could not read it as MIME: its raw bytes are all any
    /// reader sees.
    NotMime,
    /// Its decoded texts would be more than [`MAX_SCAN_FACTOR`] times its
    /// bytes, or it nests messages deeper than [`MAX_DEPTH`].
    TooMuch,
}

impl Decoded {
    /// Whether any secret shows in what the mail decodes to (one automaton
    /// for all its texts); a mail too large to look at counts as showing
    /// one.
    fn shows_any(&self, secrets: &BTreeSet<Vec<u8>>) -> bool {
        match self {
            Decoded::Texts { texts, .. } => {
                !secrets.is_empty() && {
                    let m = matcher(secrets, MatchKind::Standard);
                    texts.iter().any(|t| m.is_match(t))
                }
            }
            Decoded::NotMime => false,
            Decoded::TooMuch => true,
        }
    }

    /// The mail's parts, as `mail-parser` reads them (none if it is no MIME).
    fn parts(&self) -> Option<&[PartShape]> {
        match self {
            Decoded::Texts { parts, .. } => Some(parts),
            Decoded::NotMime | Decoded::TooMuch => None,
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
    /// Gathers `bytes`, and where it has splices or NULs, a copy as
    /// joined ([`joined`]).
    fn push(&mut self, bytes: &[u8]) {
        if self.too_much {
            return;
        }
        self.keep(bytes.to_vec());
        if let Some((text, _)) = joined(bytes) {
            self.keep(text);
        }
    }

    /// Gathers what `mail-parser` decodes out of a header: names and
    /// addresses (RFC 2047), texts and lists of them, a type's parameters
    /// (RFC 2231). A date has no text; a `Received` header's words are
    /// its raw bytes.
    fn push_header(&mut self, value: &HeaderValue<'_>) {
        match value {
            HeaderValue::Address(address) => {
                if let Address::Group(groups) = address {
                    for g in groups {
                        self.push(g.name.as_deref().unwrap_or_default().as_bytes());
                    }
                }
                for a in address.iter() {
                    self.push(a.name.as_deref().unwrap_or_default().as_bytes());
                    self.push(a.address.as_deref().unwrap_or_default().as_bytes());
                }
            }
            HeaderValue::Text(text) => self.push(text.as_bytes()),
            HeaderValue::TextList(texts) => {
                for t in texts {
                    self.push(t.as_bytes());
                }
            }
            HeaderValue::ContentType(c) => {
                self.push(c.ctype().as_bytes());
                self.push(c.subtype().unwrap_or_default().as_bytes());
                for a in c.attributes().unwrap_or_default() {
                    self.push(a.name.as_bytes());
                    self.push(a.value.as_bytes());
                }
            }
            HeaderValue::DateTime(_) | HeaderValue::Received(_) | HeaderValue::Empty => {}
        }
    }

    fn keep(&mut self, text: Vec<u8>) {
        if self.too_much || text.is_empty() {
            return;
        }
        match self.left.checked_sub(text.len()) {
            Some(left) => {
                self.left = left;
                self.texts.push(text);
            }
            None => self.too_much = true,
        }
    }
}

/// The decoded texts of a mail, as each reader of it sees them: every
/// header's decoded value (names and addresses, texts, a type's
/// parameters: what a mail client shows; red team `h1`, `h2`) and every
/// part's decoded content as `mail-parser` walks it, nested messages' too
/// ([`MAX_DEPTH`] levels), and what the server's own
/// parser (`mail::message::parse`, which every command reads a mail
/// through) returns: its subject, its senders' names and addresses, its
/// ids, its body text, each attachment's name and bytes. The thing checked
/// is the thing read: the server's parser joins a mail's text parts,
/// unfolds `format=flowed` lines and reads no-break spaces as blanks, so
/// its body can show a string that no part shows whole (a string split
/// over two flowed lines); it decodes names (RFC 2047, RFC 2231) that no
/// part shows; and it takes a nested message whose type is folded for an
/// attachment, whose bytes the walk of it as a message can hide (fuzzing
/// found a secret in base64 under a folded `message/rfc822` type that the
/// walk never showed, and the sealed mail's attachment did). A nested
/// message is therefore also looked at as the bytes it decodes to. Each
/// text with splices or NULs is looked at as joined too ([`joined`]).
///
/// At most [`MAX_SCAN_FACTOR`] times the mail's bytes are gathered. The
/// parse runs on a deep stack (`mail::message::on_a_deep_stack`): a mail
/// may nest messages as deep as its size allows.
fn decoded_texts(raw: &[u8]) -> Decoded {
    message::on_a_deep_stack(|| decoded_texts_here(raw)).unwrap_or(Decoded::NotMime)
}

fn decoded_texts_here(raw: &[u8]) -> Decoded {
    fn walk(m: &Message<'_>, depth: usize, out: &mut Gathered, parts: &mut Vec<PartShape>) {
        for part in &m.parts {
            parts.push(PartShape::of(part, depth));
            for header in &part.headers {
                out.push_header(&header.value);
            }
            match &part.body {
                PartType::Multipart(_) => {}
                PartType::Message(inner) => {
                    out.push(part.contents());
                    if depth < MAX_DEPTH {
                        walk(inner, depth + 1, out, parts);
                    } else {
                        // Deeper parts are not looked at decoded: a string
                        // in base64 there would be kept unseen.
                        out.too_much = true;
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
    let mut parts = Vec::new();
    let Some(m) = MessageParser::default().parse(raw) else {
        return Decoded::NotMime;
    };
    walk(&m, 0, &mut out, &mut parts);
    // The server's parser's reading of the same parse: the caller has
    // already held the mail to its size; every attachment is looked at,
    // whatever its size. A panic in it (which the server's parse takes
    // for a mail that is none) leaves the walk's texts.
    let limits = Limits {
        max_mail_bytes: usize::MAX,
        max_attachment_bytes: usize::MAX,
    };
    let read = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        message::read(&m, "", &limits)
    }));
    if let Ok(Ok(m)) = read {
        out.push(m.subject.as_bytes());
        for mailbox in [&m.from, &m.reply_to].into_iter().flatten() {
            out.push(mailbox.name.as_deref().unwrap_or_default().as_bytes());
            out.push(mailbox.address.as_bytes());
        }
        let ids = [&m.message_id, &m.in_reply_to, &m.return_path];
        for id in ids.into_iter().flatten().chain(&m.references) {
            out.push(id.as_bytes());
        }
        if let Some(text) = m.body.text() {
            out.push(text.as_bytes());
        }
        for a in &m.attachments {
            out.push(a.filename.as_deref().unwrap_or_default().as_bytes());
            out.push(&a.bytes);
        }
    }
    if out.too_much {
        Decoded::TooMuch
    } else {
        Decoded::Texts {
            texts: out.texts,
            parts,
        }
    }
}

/// Every piece of [`MIN_WORD_LEN`] bytes of every secret: what a kept mail
/// may not show. Masking a piece of a string that is a word of its own (a
/// near miss before a quoted-printable soft break, a flowed line's end, a
/// splice) breaks the join, and a search for the whole string then finds
/// nothing while the rest of it stays (red team `q1`, `q2`, `q3`).
fn pieces(secrets: &BTreeSet<Vec<u8>>) -> BTreeSet<Vec<u8>> {
    secrets
        .iter()
        .flat_map(|s| s.windows(MIN_WORD_LEN.min(s.len())).map(<[u8]>::to_vec))
        .collect()
}

/// What the words of a mail (or of its headers alone) came to.
enum Judgement {
    /// The secrets it carries (none, often).
    Secrets(BTreeSet<Vec<u8>>),
    /// More words, or decoded text, than are looked at: not judged.
    TooMuch,
}

/// The secrets of a mail: the words of its raw bytes and of every decoded
/// text ([`words_of`]), credential words and the shaped words `known`
/// knows.
fn judge<L: SecretLookup>(
    raw: &[u8],
    decoded: &Decoded,
    look: Look,
    known: &mut L,
) -> Result<Judgement, L::Error> {
    let texts: &[Vec<u8>] = match decoded {
        Decoded::Texts { texts, .. } => texts,
        Decoded::NotMime => &[],
        Decoded::TooMuch => return Ok(Judgement::TooMuch),
    };
    let all = std::iter::once(raw).chain(texts.iter().map(Vec::as_slice));
    match Words::of(all, look) {
        Some(words) => Ok(Judgement::Secrets(words.secrets(known)?)),
        None => Ok(Judgement::TooMuch),
    }
}

/// The header part of a raw mail, without the line that ends it: the
/// first blank line, or where `mail-parser` ends the headers if that is
/// earlier (it takes a line of blanks, a `\r\r\n` or a form feed, for
/// the blank line): what is kept as headers is never what a reader takes
/// for a body.
fn header_lines(raw: &[u8]) -> &[u8] {
    let crlf = raw.windows(4).position(|w| w == b"\r\n\r\n").map(|p| p + 2);
    let lf = raw.windows(2).position(|w| w == b"\n\n").map(|p| p + 1);
    let own = match (crlf, lf) {
        (Some(a), Some(b)) => a.min(b),
        (a, b) => a.or(b).unwrap_or(raw.len()),
    };
    let parsed = std::panic::catch_unwind(|| {
        MessageParser::default()
            .parse_headers(raw)
            .map(|m| m.root_part().offset_body as usize)
    });
    let parsers = match parsed {
        Ok(Some(body)) if body > 0 && body <= raw.len() && raw[body - 1] == b'\n' => {
            let line = raw[..body - 1]
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |i| i + 1);
            if raw[line..body - 1].iter().all(u8::is_ascii_whitespace) {
                line
            } else {
                body
            }
        }
        Ok(Some(body)) => body.min(raw.len()),
        Ok(None) | Err(_) => raw.len(),
    };
    &raw[..own.min(parsers)]
}

/// Whether the masked copy a body is dropped from may be parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MaskedCopy {
    /// Parsed within its probe's budget, or small enough not to be probed.
    Read,
    /// Its probe stopped it: nothing of it is parsed.
    Unread,
}

/// The headers of `kept` (masked with the body's `secrets`) and
/// [`BODY_DROPPED`]. The headers are judged on their own, every word of
/// theirs as written and as decoded: the body's judgement may have stopped
/// (too many words, too much decoded text) before it learnt a string they
/// carry. Headers with too many words to judge, or that still show a
/// secret or a marker once masked, are not kept.
fn drop_body<L: SecretLookup>(
    kept: &[u8],
    secrets: &BTreeSet<Vec<u8>>,
    look: Look,
    known: &mut L,
    copy: MaskedCopy,
) -> Result<Vec<u8>, L::Error> {
    fn alone(headers: &[u8]) -> Vec<u8> {
        [headers, b"\r\n"].concat()
    }
    if copy == MaskedCopy::Unread {
        // Not a byte of it is parsed here, its headers neither (a header
        // field of encoded-word starts is quadratic): nothing of it kept.
        return Ok(format!("{BODY_DROPPED}\r\n\r\n").into_bytes());
    }
    let mut headers = header_lines(kept).to_vec();
    if !headers.is_empty() && !headers.ends_with(b"\n") {
        headers.extend_from_slice(b"\r\n");
    }
    let headers_alone = alone(&headers);
    let judged = judge(&headers_alone, &decoded_texts(&headers_alone), look, known)?;
    let keep = match judged {
        Judgement::TooMuch => false,
        Judgement::Secrets(mut own) => {
            own.extend(secrets.iter().cloned());
            let masked = mask(&mut headers, &own) > 0;
            // Masked headers are another text again: probed before they
            // are read (masking can make an encoded word's start that
            // ended at once one that runs to the field's end).
            let readable =
                !masked || probe::reading(&alone(&headers)).is_ok_and(Reading::may_be_read);
            readable
                && !MARKERS.is_match(&headers)
                && !decoded_texts(&alone(&headers)).shows_any(&pieces(&own))
        }
    };
    if !keep {
        headers.clear();
    }
    headers.extend_from_slice(BODY_DROPPED.as_bytes());
    headers.extend_from_slice(b"\r\n\r\n");
    Ok(headers)
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
///
/// The body is kept only when the masked mail, read by every reader as the
/// sent one was ([`decoded_texts`]), shows no piece of a secret
/// ([`pieces`]) and has the same parts ([`PartShape`]): by construction,
/// not by knowing where readers differ.
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
    let (secrets, judged) = match judge(raw, &decoded, look, &mut known)? {
        Judgement::Secrets(secrets) => (secrets, true),
        Judgement::TooMuch => (BTreeSet::new(), false),
    };
    if secrets.is_empty() && judged && readable {
        return Ok(Sealed {
            raw: raw.to_vec(),
            masked: 0,
            body_dropped: false,
            masked_copy_unread: false,
        });
    }
    let mut kept = raw.to_vec();
    let masked = mask(&mut kept, &secrets);
    // The masked copy is another mail: masking can make a boundary that
    // came one that never comes, each such part then read to the end (a
    // mail the probe let through can cost a second the masked way), so a
    // large one is probed again, whatever else holds; one it stops, or
    // could not start on, is not read: nothing of it is kept but the line
    // saying its body was dropped.
    let unread = masked > 0 && !probe::reading(&kept).is_ok_and(Reading::may_be_read);
    let keep_body = judged && readable && !unread && {
        let again = decoded_texts(&kept);
        !again.shows_any(&pieces(&secrets)) && again.parts() == decoded.parts()
    };
    if keep_body {
        return Ok(Sealed {
            raw: kept,
            masked,
            body_dropped: false,
            masked_copy_unread: false,
        });
    }
    let copy = if unread {
        MaskedCopy::Unread
    } else {
        MaskedCopy::Read
    };
    Ok(Sealed {
        raw: drop_body(&kept, &secrets, look, &mut known, copy)?,
        masked,
        body_dropped: true,
        masked_copy_unread: unread,
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

    /// What the server's parser reads of a sealed mail, lower-cased: its
    /// subject, its senders' names and addresses, its ids, its body, each
    /// attachment's name and bytes.
    fn as_the_server_reads(raw: &[u8]) -> Vec<String> {
        let limits = Limits::default();
        let Ok(m) = message::parse(raw, "loop", &limits) else {
            return Vec::new();
        };
        let mut out = vec![m.subject.clone()];
        for mailbox in [&m.from, &m.reply_to].into_iter().flatten() {
            out.extend(mailbox.name.clone());
            out.push(mailbox.address.clone());
        }
        let ids = [&m.message_id, &m.in_reply_to, &m.return_path];
        out.extend(ids.into_iter().flatten().chain(&m.references).cloned());
        out.extend(m.body.text().map(str::to_string));
        for a in &m.attachments {
            out.extend(a.filename.clone());
            out.push(String::from_utf8_lossy(&a.bytes).into_owned());
        }
        out.iter().map(|t| t.to_ascii_lowercase()).collect()
    }

    /// What a mail client shows of a sealed mail, as `mail-parser` reads
    /// it, lower-cased: every header's value as it decodes it (written out
    /// whole, by `Debug`), every part's contents, at every depth.
    fn as_mail_parser_reads(raw: &[u8]) -> Vec<String> {
        fn walk(m: &Message<'_>, out: &mut Vec<String>) {
            for part in &m.parts {
                for h in &part.headers {
                    out.push(format!("{:?}", h.value));
                }
                match &part.body {
                    PartType::Message(inner) => walk(inner, out),
                    PartType::Text(t) | PartType::Html(t) => out.push(t.to_string()),
                    PartType::Binary(b) | PartType::InlineBinary(b) => {
                        out.push(String::from_utf8_lossy(b).into_owned())
                    }
                    PartType::Multipart(_) => {}
                }
            }
        }
        let mut out = Vec::new();
        if let Some(m) = MessageParser::default().parse(raw) {
            walk(&m, &mut out);
        }
        out.iter().map(|t| t.to_ascii_lowercase()).collect()
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

    /// The red team's mails (`tests/data/sealing/`), each sealed with the
    /// string known, then read as every reader reads the kept mail: its
    /// bytes and the server's parse of it, as written and with line
    /// splices removed. Neither the string nor 13 of its letters in a row
    /// may show; nor in what a mail client shows (`mail-parser`'s parse:
    /// every header decoded, every part, at every depth). Built here too: a
    /// subject in RFC 2047 with the string over
    /// messages nested too deep to look at (`a2`: the look stopped before
    /// it learnt the string, and the headers were kept with it).
    ///
    /// The ways past the sealing they took, each mended: a near miss
    /// ending in the string's first letter just before it (`p1`: the
    /// leftmost match hid the string's); a dropped body's headers kept
    /// unjudged (`a1`, `a2`); headers ended by a line `mail-parser` takes
    /// for the blank line (`a3*`: a body's base64 kept as headers);
    /// decoded names (`a4*`: a display name, an RFC 2231 file name);
    /// masking that made a near miss a boundary (`m1`); a line splice in
    /// the source's header (`a5`). A second red team's: a string masked in
    /// a parameter's name made a parameter of the same name come first,
    /// and the charset or `format=flowed` the text was read by changed
    /// (`f1`, `f2`, `f3`); strings in headers `mail-parser` decodes that
    /// nobody looked at (`h1`: `To`, `Cc`, `Comments`, `Keywords`, a
    /// mailbox without an address; `h2`: a body part's RFC 2231 name, a
    /// nested message's names). A third's: masking a piece of the string
    /// that was a word of its own, before a quoted-printable soft break, a
    /// flowed line's end or a splice, broke the join and hid the rest of
    /// the string from a search for the whole (`q1`, `q2`, `q3`); a near
    /// miss after an ideographic space, a blank to the server's readers
    /// and none to the sealing's (`u1`); a copy of the source in UTF-16,
    /// its letters between NULs (`n1`).
    #[test]
    fn the_red_teams_mails_keep_no_string_anywhere_a_reader_looks() {
        let auth = "k3mnpqrstuvwxyz23456789_ab";
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/sealing");
        let mut mails: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| {
                let path = e.unwrap().path();
                (path.display().to_string(), std::fs::read(&path).unwrap())
            })
            .collect();
        mails.sort();
        assert!(mails.len() >= 11, "{mails:?}");
        let mut a2 = format!(
            "From: c@d.example\r\nSubject: inner\r\n\r\n{}",
            "x\r\n".repeat(4000)
        );
        for _ in 0..MAX_DEPTH + 2 {
            a2 = forwarded(&a2);
        }
        let subject = format!("Subject: =?utf-8?q?status=20{}?=", auth.replace('_', "=5F"));
        mails.push((
            "a2 (built)".into(),
            a2.replacen("Subject: fwd", &subject, 1).into_bytes(),
        ));
        assert!(matches!(
            decoded_texts(&mails.last().unwrap().1),
            Decoded::TooMuch
        ));
        let max = Limits::default().max_mail_bytes;
        let mut leaks = Vec::new();
        for (name, raw) in &mails {
            let s = seal(raw, &known(auth), Look::Inbound, max);
            assert!(s.changed(), "{name}");
            let mut readers = vec![String::from_utf8_lossy(&s.raw).to_ascii_lowercase()];
            readers.extend(as_the_server_reads(&s.raw));
            readers.extend(as_mail_parser_reads(&s.raw));
            for shown in &readers {
                let shown = shown.replace('\0', "");
                let unspliced = crate::toolchain::lex::remove_splices(&shown);
                let piece = auth.as_bytes().windows(13).find(|piece| {
                    let piece = std::str::from_utf8(piece).unwrap();
                    shown.contains(piece) || unspliced.contains(piece)
                });
                if let Some(piece) = piece {
                    let piece = String::from_utf8_lossy(piece);
                    leaks.push(format!("{name}: the kept mail shows {piece}:\n{shown}"));
                }
            }
        }
        assert!(leaks.is_empty(), "{}", leaks.join("\n\n"));
    }

    /// A string split by a line splice in a source's header (the header's
    /// reader removes the splice, as C does, and authenticates with the
    /// whole string; neither half is a credential word nor of a string's
    /// shape) is masked letter by letter where each stands: in the stored
    /// source (`mask_text`) and in the kept mail, whose body stays.
    #[test]
    fn a_string_split_by_a_line_splice_is_masked_where_each_letter_stands() {
        let auth = "k3mnpqrstuvwxyz23456789_ab";
        let source = format!(
            "/* <<FROM>> team {}\\ \r\n{} */\nint main(void) {{ return 0; }}\n",
            &auth[..10],
            &auth[10..]
        );
        let header = crate::toolchain::source::parse_header(&source).unwrap();
        assert_eq!(header.auth, auth);
        let masked = mask_text(&source, auth);
        assert_eq!(masked.len(), source.len());
        assert_eq!(
            crate::toolchain::source::parse_header(&masked)
                .unwrap()
                .auth,
            "*".repeat(26)
        );
        assert!(masked.contains("\\ \r\n"), "{masked}");
        let raw = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/sealing/a5.eml"
        ))
        .unwrap();
        let s = seal(&raw, &known(auth), Look::Inbound, usize::MAX);
        assert!(s.changed() && !s.body_dropped, "{s:?}");
        assert_eq!(s.raw.len(), raw.len());
        let kept = String::from_utf8(s.raw).unwrap();
        let body = as_the_server_reads(kept.as_bytes()).pop().unwrap();
        let body = crate::toolchain::lex::remove_splices(&body).into_owned();
        assert!(
            body.contains(&format!("<<from>> team {} */", "*".repeat(26))),
            "{body}"
        );
    }

    /// Overlapping occurrences are all masked: a near miss that ends in a
    /// string's first letter, just before the string, hid the string from
    /// a leftmost search.
    #[test]
    fn overlapping_occurrences_are_all_masked() {
        let secrets = BTreeSet::from([b"zzzzk".to_vec(), b"k3mnp".to_vec(), b"3mnpq".to_vec()]);
        let mut bytes = b"..zzzzk3mnpq.. K3MNP zzzzk".to_vec();
        assert_eq!(mask(&mut bytes, &secrets), 5);
        assert_eq!(bytes, b"..**********.. ***** *****");
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
            let Decoded::Texts { texts, .. } = decoded_texts(mail.as_bytes()) else {
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

    /// Parts nested deeper than [`MAX_DEPTH`] are not looked at decoded:
    /// a string in base64 there, beside the same string in the `<<FROM>>`
    /// line (masked), was kept in a mail that nests little else (its
    /// decoded texts well within [`MAX_SCAN_FACTOR`]). Such a mail keeps
    /// only its headers.
    #[test]
    fn a_string_in_a_message_nested_deeper_than_looked_at_drops_the_body() {
        let auth = "k3mnpqrstuvwxyz23456789_ab";
        let encoded = base64(format!("my string is {auth}").as_bytes());
        let mut inner = format!(
            "From: c@d.example\r\nSubject: inner\r\nContent-Transfer-Encoding: base64\r\n\r\n{encoded}\r\n"
        );
        for _ in 0..=MAX_DEPTH {
            inner = forwarded(&inner);
        }
        let raw = inner.replacen(
            "see below",
            &format!("<<FROM>> team {auth}\r\n{}", "padding\r\n".repeat(2000)),
            1,
        );
        let s = seal(raw.as_bytes(), &known(auth), Look::Inbound, usize::MAX);
        assert!(s.body_dropped, "{}", String::from_utf8_lossy(&s.raw));
        assert!(!String::from_utf8_lossy(&s.raw).contains(&encoded));
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
