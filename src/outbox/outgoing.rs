//! Building outgoing mails: RFC 5322 bytes, ready to be queued in the outbox
//! and later written to the spool or sent over SMTP unchanged.
//!
//! Every mail carries `Auto-Submitted` (`auto-replied` for replies,
//! `auto-generated` otherwise), our `X-Loop`, a unique `Message-ID`, a
//! `Date`, `In-Reply-To`/`References` on replies, and UTF-8 `text/plain`
//! with CRLF line ends; attachments make it `multipart/mixed`. This module
//! only builds bytes (and says which of them, the text and attachments as
//! encoded, the outbox may store once for many mails); it queues and sends
//! nothing. A mail of one recipient and no attachment is written here with
//! lettre's header types (not its message builder, which parses back what
//! it was given), byte for byte the builder's mail; the rest by the builder.
//!
//! The ids a reply threads to come from a stranger's mail, so no header
//! line may grow with them beyond RFC 5322's 998 characters: an id that is
//! not printable ASCII, or longer than [`MAX_ID_CHARS`], is left out (an
//! over-long `In-Reply-To` is dropped), and `References` keeps the *last*
//! ids that fit on one line of [`MAX_HEADER_LINE`] characters.

use chrono::{DateTime, Utc};
use lettre::message::header::{ContentTransferEncoding, ContentType, HeaderName, HeaderValue};
use lettre::message::{Attachment, Body, Mailbox, MultiPart, SinglePart};
use lettre::Message;

use crate::config::ContestConfig;
use crate::store::mail::{SharedPart, MIN_SHARED_BYTES};

/// An attachment of an outgoing mail.
#[derive(Debug, Clone)]
pub struct OutAttachment {
    pub filename: String,
    pub content_type: String,
    pub bytes: Vec<u8>,
}

/// A mail to build.
#[derive(Debug, Clone)]
pub struct Outgoing {
    /// What kind of mail this is (for the outbox and logs), e.g. `compile_report`.
    pub kind: &'static str,
    pub to: Vec<String>,
    pub subject: String,
    pub body: String,
    /// The Message-ID of the mail this answers, if it is a reply.
    pub in_reply_to: Option<String>,
    /// The References of the mail this answers.
    pub references: Vec<String>,
    pub attachments: Vec<OutAttachment>,
}

/// Build faults (a bad address is the caller's bug: addresses are validated
/// before a mail is built).
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error("bad address {0:?}: {1}")]
    Address(String, String),
    #[error("cannot build the mail: {0}")]
    Build(String),
}

/// A fresh Message-ID in our domain, from the OS random source (drawn
/// for many ids at once: a group's mails are queued by the dozen, and one
/// system call each cost more than the rest of the id).
///
/// The random part follows the milliseconds since 1970 (12 hex digits).
/// The random part alone keeps ids unique: no index of the outbox holds
/// them (schema 0035 dropped the unique one, which nothing read and every
/// mail queued paid a look-up and an entry for).
pub fn new_message_id(contest: &ContestConfig) -> String {
    const ID_BYTES: usize = 12;
    thread_local! {
        static POOL: std::cell::RefCell<(Vec<u8>, usize)> = const {
            std::cell::RefCell::new((Vec::new(), 0))
        };
    }
    let mut b = [0u8; ID_BYTES];
    POOL.with_borrow_mut(|(pool, used)| {
        if *used + ID_BYTES > pool.len() {
            pool.resize(ID_BYTES * 256, 0);
            getrandom::fill(pool).expect("OS random source");
            *used = 0;
        }
        b.copy_from_slice(&pool[*used..*used + ID_BYTES]);
        // Each byte is used once.
        pool[*used..*used + ID_BYTES].fill(0);
        *used += ID_BYTES;
    });
    let domain = contest
        .address
        .rsplit('@')
        .next()
        .unwrap_or("knobeln.invalid");
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    let mut id = String::with_capacity(9 + 12 + 2 * ID_BYTES + 2 + domain.len());
    id.push_str("<knobeln.");
    // (Cannot fail: writing to a String.)
    let _ = std::fmt::Write::write_fmt(&mut id, format_args!("{:012x}", ms & 0xffff_ffff_ffff));
    for x in b {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        id.push(char::from(HEX[usize::from(x >> 4)]));
        id.push(char::from(HEX[usize::from(x & 15)]));
    }
    id.push('@');
    id.push_str(domain);
    id.push('>');
    id
}

/// RFC 5322's limit on a line, without its CRLF.
pub const MAX_HEADER_LINE: usize = 998;

/// The most characters of a subject a mail carries: a subject that
/// echoes a stranger's (an RSM refusal names the subject it refuses) is
/// cut here, so that a word of it stays within a line of
/// [`MAX_HEADER_LINE`] characters and the header within a few kB.
pub const MAX_SUBJECT_CHARS: usize = 500;

/// `subject` fit for a header: every control character (a line end, a
/// tab, DEL, C1) and Unicode's line and paragraph separators made a blank,
/// so none stands in the header raw or inside an encoded word that a
/// reader decodes to a line end; at most [`MAX_SUBJECT_CHARS`] characters.
/// Both writers ([`format_single`], [`format_built`]) take the subject
/// through here, so they write the same bytes.
fn fit_subject(subject: &str) -> String {
    let unfit = |c: char| c.is_control() || c == '\u{2028}' || c == '\u{2029}';
    if subject.len() <= MAX_SUBJECT_CHARS && !subject.contains(unfit) {
        return subject.to_string();
    }
    subject
        .chars()
        .map(|c| if unfit(c) { ' ' } else { c })
        .take(MAX_SUBJECT_CHARS)
        .collect()
}

/// A message id longer than this (without its angle brackets) is not
/// echoed in a reply.
pub const MAX_ID_CHARS: usize = 250;

/// `<id>` for an id fit to be echoed: printable ASCII without blanks or
/// angle brackets inside, at most [`MAX_ID_CHARS`] long; else `None`.
fn angle(id: &str) -> Option<String> {
    let id = id.trim();
    let id = id.strip_prefix('<').unwrap_or(id);
    let id = id.strip_suffix('>').unwrap_or(id);
    let ok = !id.is_empty()
        && id.len() <= MAX_ID_CHARS
        && id
            .bytes()
            .all(|b| b.is_ascii_graphic() && b != b'<' && b != b'>');
    ok.then(|| format!("<{id}>"))
}

/// The `References` of a reply: the incoming references and the id it
/// answers, those unfit to echo left out, and of the rest the last ones
/// that fit on one header line (the first of a long thread goes first).
pub fn reply_references(references: &[String], in_reply_to: Option<&str>) -> Vec<String> {
    let mut refs: Vec<String> = references.iter().filter_map(|r| angle(r)).collect();
    if let Some(id) = in_reply_to.and_then(angle) {
        if refs.last() != Some(&id) {
            refs.retain(|r| r != &id);
            refs.push(id);
        }
    }
    let mut room = MAX_HEADER_LINE - "References: ".len();
    let mut kept = Vec::new();
    for r in refs.into_iter().rev() {
        let need = r.len() + usize::from(!kept.is_empty());
        if need > room {
            break;
        }
        room -= need;
        kept.push(r);
    }
    kept.reverse();
    kept
}

/// `text` with every line ended by CRLF (a bare CR or LF, or CRLF, each
/// one line end), in one pass: the line ends found by `memchr`, the text
/// between them copied whole.
pub fn crlf_lines(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 16 + 2);
    let bytes = text.as_bytes();
    // CR and LF are ASCII, so every cut is at a character boundary.
    let mut start = 0;
    for i in memchr::memchr2_iter(b'\r', b'\n', bytes) {
        if i < start {
            // The LF of a CRLF, written with its CR.
            continue;
        }
        out.push_str(&text[start..i]);
        out.push_str("\r\n");
        start = if bytes[i] == b'\r' && bytes.get(i + 1) == Some(&b'\n') {
            i + 2
        } else {
            i + 1
        };
    }
    out.push_str(&text[start..]);
    out
}

/// A mail's text encoded for its body (CRLF line ends, the transfer
/// encoding chosen), made once for a text that several mails carry (a
/// group's games to each of its members): [`build_with`] copies it. A body
/// of at least [`MIN_SHARED_BYTES`] offered for sharing carries its SHA-256
/// too (computed once, when first asked), for the outbox to store it once
/// however many mails carry it.
#[derive(Debug, Clone)]
pub struct PreparedBody {
    body: Body,
    sha256: std::sync::OnceLock<[u8; 32]>,
}

impl PreparedBody {
    fn new(body: Body) -> Self {
        PreparedBody {
            body,
            sha256: std::sync::OnceLock::new(),
        }
    }

    /// Its bytes as they stand in the mail, for the outbox to store once
    /// (`None`: too small to be worth it).
    pub fn shared(&self) -> Option<SharedPart<'_>> {
        use sha2::Digest;
        (self.body.len() >= MIN_SHARED_BYTES).then(|| SharedPart {
            bytes: self.body.as_ref(),
            sha256: self
                .sha256
                .get_or_init(|| sha2::Sha256::digest(&self.body).into()),
        })
    }
}

/// The body of a mail whose text is `text`.
pub fn prepare_body(text: &str) -> PreparedBody {
    // CRLF line ends made here, in one pass: lettre inserts a CR before
    // each bare LF one at a time (a copy of the rest of the body per line:
    // quadratic in a large mail), and finds none left to insert.
    let body = crlf_lines(text);
    // Plain 7/8bit text stays readable in any mail reader and in the raw
    // spool file; lettre falls back to quoted-printable for long lines.
    // The text is not copied for the fallback: lettre hands it back.
    // An ASCII text (every contest mail's protocols and tables) goes to
    // lettre as bytes: it chooses the same encoding for ASCII bytes as for
    // the string, and does not look for bare line ends again (there are
    // none left: a string's search went character by character, about
    // half of preparing a DGP mail's 9 kB). The same body either way
    // (`a_prepared_body_is_lettres_body_of_the_text`).
    let body = if body.is_ascii() {
        Body::new_with_encoding(body.into_bytes(), ContentTransferEncoding::EightBit)
    } else {
        Body::new_with_encoding(body, ContentTransferEncoding::EightBit)
    };
    PreparedBody::new(match body {
        Ok(b) => b,
        Err(bytes) => Body::new(String::from_utf8(bytes).expect("the text handed back")),
    })
}

/// A built mail: its raw bytes, and its parts (text, attachments) as they
/// stand in them, for the outbox to store a part many mails carry once.
pub struct Built {
    /// The mail's bytes: whole, or without its text when `text_at` says
    /// where it goes back in.
    pub raw: Vec<u8>,
    /// Where the text goes back in `raw`, left out when the mail was built
    /// ([`build_around`]; `None`: `raw` is whole).
    pub text_at: Option<usize>,
    /// The attachments' bodies as encoded in `raw`.
    pub attachments: Vec<PreparedBody>,
}

impl Built {
    /// The parts worth storing apart, in the order they stand: the text,
    /// when it is `shared` (the body the mail was built with, prepared for
    /// many mails), and each attachment.
    pub fn shared<'a>(&'a self, shared: Option<&'a PreparedBody>) -> Vec<SharedPart<'a>> {
        shared
            .into_iter()
            .chain(&self.attachments)
            .filter_map(PreparedBody::shared)
            .collect()
    }
}

/// Builds the mail. Returns the raw bytes.
pub fn build(
    m: &Outgoing,
    contest: &ContestConfig,
    message_id: &str,
    now: DateTime<Utc>,
) -> Result<Vec<u8>, BuildError> {
    build_with(m, None, contest, message_id, now)
}

/// Builds the mail with its body `prepared` from its text already
/// ([`prepare_body`] of `m.body`; `None`: prepared here). Returns the raw
/// bytes, the same as [`build`]'s.
pub fn build_with(
    m: &Outgoing,
    prepared: Option<&PreparedBody>,
    contest: &ContestConfig,
    message_id: &str,
    now: DateTime<Utc>,
) -> Result<Vec<u8>, BuildError> {
    let own;
    let body = match prepared {
        Some(body) => body,
        None => {
            own = prepare_body(&m.body);
            &own
        }
    };
    Ok(build_parts(m, body, contest, message_id, now)?.raw)
}

/// Builds the mail with its text as `body` ([`prepare_body`] of `m.body`):
/// the raw bytes, the same as [`build`]'s, and its parts as they stand in
/// them.
pub fn build_parts(
    m: &Outgoing,
    body: &PreparedBody,
    contest: &ContestConfig,
    message_id: &str,
    now: DateTime<Utc>,
) -> Result<Built, BuildError> {
    build_parts_of(m, body.body.clone(), contest, message_id, now)
}

/// [`build_parts`] with a body made for this mail alone ([`prepare_body`]
/// of `m.body`), taken: its text is copied once, into the mail, not first
/// into a copy of the body (a group's DGP and GRP mails, each its own).
pub fn build_parts_owned(
    m: &Outgoing,
    body: PreparedBody,
    contest: &ContestConfig,
    message_id: &str,
    now: DateTime<Utc>,
) -> Result<Built, BuildError> {
    build_parts_of(m, body.body, contest, message_id, now)
}

fn build_parts_of(
    m: &Outgoing,
    text: Body,
    contest: &ContestConfig,
    message_id: &str,
    now: DateTime<Utc>,
) -> Result<Built, BuildError> {
    let (raw, attachments) = format(m, text, contest, message_id, now)?;
    Ok(Built {
        raw,
        text_at: None,
        attachments,
    })
}

/// Stands for the text in a mail built around it ([`build_around`]): found
/// in the few bytes of headers and boundaries, never in the text itself.
const TEXT_MARK: &[u8] = b"KNOBELN-TEXT-LEFT-OUT-5c0f9e27a3d1b846";

/// [`build_parts`] for a text `body` shared by many mails (of at least
/// [`MIN_SHARED_BYTES`]: [`PreparedBody::shared`]): the mail is built
/// around it, the text left out of `raw` and `text_at` saying where it goes
/// back in, so building costs the headers', not the text's, bytes (LAP's
/// 541 kB to each of 10,000 teams). Joined with the text, `raw` is
/// [`build_parts`]'s byte for byte: the builder gets a mark of the same
/// transfer encoding in the text's place (the text's bytes are copied into
/// the mail as they stand, its encoding only names the header), cut out
/// again where it stands. A smaller text, or a mail whose headers happen
/// to hold the mark, is built whole.
pub fn build_around(
    m: &Outgoing,
    body: &PreparedBody,
    contest: &ContestConfig,
    message_id: &str,
    now: DateTime<Utc>,
) -> Result<Built, BuildError> {
    if body.shared().is_none() {
        return build_parts(m, body, contest, message_id, now);
    }
    // The mark's searchers, built once (not per mail).
    static FORWARD: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(TEXT_MARK));
    static BACKWARD: std::sync::LazyLock<memchr::memmem::FinderRev<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::FinderRev::new(TEXT_MARK));
    let mark = Body::dangerous_pre_encoded(TEXT_MARK.to_vec(), body.body.encoding());
    let (mut raw, attachments) = format(m, mark, contest, message_id, now)?;
    let first = FORWARD.find(&raw);
    match first {
        Some(at) if BACKWARD.rfind(&raw) == Some(at) => {
            raw.drain(at..at + TEXT_MARK.len());
            Ok(Built {
                raw,
                text_at: Some(at),
                attachments,
            })
        }
        _ => build_parts(m, body, contest, message_id, now),
    }
}

/// The contest's own mailbox (`Name <address>`, else the address alone),
/// parsed once per thread for the same name and address (every mail
/// carries it).
fn contest_mailbox(contest: &ContestConfig) -> Result<Mailbox, BuildError> {
    thread_local! {
        static LAST: std::cell::RefCell<Option<(String, String, Mailbox)>> =
            const { std::cell::RefCell::new(None) };
    }
    if let Some(m) = LAST.with_borrow(|last| {
        last.as_ref()
            .filter(|(n, a, _)| *n == contest.name && *a == contest.address)
            .map(|(_, _, m)| m.clone())
    }) {
        return Ok(m);
    }
    let from: Mailbox = format!("{} <{}>", contest.name, contest.address)
        .parse()
        .or_else(|_| contest.address.parse())
        .map_err(|e: lettre::address::AddressError| {
            BuildError::Address(contest.address.clone(), e.to_string())
        })?;
    LAST.set(Some((
        contest.name.clone(),
        contest.address.clone(),
        from.clone(),
    )));
    Ok(from)
}

/// An attachment's body as encoded in a mail (base64), with its SHA-256
/// when it is large enough to be stored apart. The same attachment in mail
/// after mail (the final results' `evolution.svg` to every team) is
/// encoded and hashed once: the last large one is kept per thread and
/// copied while the next mail's attachment has the same bytes (compared
/// whole; the encoding depends on the bytes alone).
fn encoded(a: &OutAttachment) -> PreparedBody {
    if a.bytes.len() < MIN_SHARED_BYTES {
        return PreparedBody::new(Body::new(a.bytes.clone()));
    }
    thread_local! {
        static LAST: std::cell::RefCell<Option<(Vec<u8>, PreparedBody)>> =
            const { std::cell::RefCell::new(None) };
    }
    LAST.with_borrow_mut(|last| {
        if let Some((bytes, body)) = last.as_ref() {
            if *bytes == a.bytes {
                return body.clone();
            }
        }
        let body = PreparedBody::new(Body::new(a.bytes.clone()));
        // Hashed now, so that every copy carries the hash.
        let _ = body.shared();
        *last = Some((a.bytes.clone(), body.clone()));
        body
    })
}

/// The mail with `text` as its text's body: its raw bytes and its
/// attachments as encoded in them. A mail of one recipient and no
/// attachment (every contest mail, every reply) is written by
/// [`format_single`], the rest by lettre's builder ([`format_built`]); the
/// same bytes either way (`the_direct_writer_writes_lettres_bytes`).
fn format(
    m: &Outgoing,
    text: Body,
    contest: &ContestConfig,
    message_id: &str,
    now: DateTime<Utc>,
) -> Result<(Vec<u8>, Vec<PreparedBody>), BuildError> {
    if m.attachments.is_empty() && m.to.len() == 1 {
        return Ok((
            format_single(m, &text, contest, message_id, now)?,
            Vec::new(),
        ));
    }
    format_built(m, text, contest, message_id, now)
}

/// The `To` header of one address, encoded as lettre encodes it, parsed
/// and encoded once per address and thread (a contest mails the same
/// teams event after event; the map is emptied when it holds
/// [`TO_CACHE`] addresses, so it never grows with the mails).
fn to_header(to: &str) -> Result<HeaderValue, BuildError> {
    use lettre::message::header::{Header, To};
    thread_local! {
        static TO: std::cell::RefCell<std::collections::HashMap<String, HeaderValue>> =
            std::cell::RefCell::new(std::collections::HashMap::new());
    }
    if let Some(h) = TO.with_borrow(|m| m.get(to).cloned()) {
        return Ok(h);
    }
    let mb: Mailbox = to.parse().map_err(|e: lettre::address::AddressError| {
        BuildError::Address(to.to_string(), e.to_string())
    })?;
    let h = To::from(lettre::message::Mailboxes::from(mb)).display();
    TO.with_borrow_mut(|m| {
        if m.len() >= TO_CACHE {
            m.clear();
        }
        m.insert(to.to_string(), h.clone());
    });
    Ok(h)
}

/// The most addresses [`to_header`] keeps per thread.
const TO_CACHE: usize = 1 << 14;

/// The contest's `From` header, encoded once per thread for the same name
/// and address ([`contest_mailbox`]).
fn from_header(contest: &ContestConfig) -> Result<HeaderValue, BuildError> {
    use lettre::message::header::{From, Header};
    thread_local! {
        static LAST: std::cell::RefCell<Option<(String, String, HeaderValue)>> =
            const { std::cell::RefCell::new(None) };
    }
    if let Some(h) = LAST.with_borrow(|last| {
        last.as_ref()
            .filter(|(n, a, _)| *n == contest.name && *a == contest.address)
            .map(|(_, _, h)| h.clone())
    }) {
        return Ok(h);
    }
    let h = From::from(lettre::message::Mailboxes::from(contest_mailbox(contest)?)).display();
    LAST.set(Some((
        contest.name.clone(),
        contest.address.clone(),
        h.clone(),
    )));
    Ok(h)
}

/// [`format_built`]'s bytes for a mail of one recipient and no attachment,
/// written here: the same headers, in the same order, each encoded by
/// lettre's own header types, and the text's part after them; without
/// the builder's work that gives nothing to the bytes (it parses the
/// headers it was just given back: the `Date`, the `From` twice and the
/// `To` for an envelope this mail never uses) and without copying the
/// text into a part first. The addresses' headers are made once
/// ([`to_header`], [`from_header`]).
fn format_single(
    m: &Outgoing,
    text: &Body,
    contest: &ContestConfig,
    message_id: &str,
    now: DateTime<Utc>,
) -> Result<Vec<u8>, BuildError> {
    use lettre::message::header::{self, Headers};
    let [to] = m.to.as_slice() else {
        return Err(BuildError::Build("not one recipient".into()));
    };
    // The builder's order: From, Subject, Date, Message-ID, To, the
    // reply's ids, the three raw headers, MIME-Version.
    let mut h = Headers::with_capacity(12);
    h.insert_raw(from_header(contest)?);
    h.set(header::Subject::from(fit_subject(&m.subject)));
    h.set(header::Date::from(std::time::SystemTime::from(now)));
    h.set(header::MessageId::from(message_id.to_string()));
    h.insert_raw(to_header(to)?);
    if let Some(id) = m.in_reply_to.as_deref().and_then(angle) {
        h.set(header::InReplyTo::from(id));
    }
    if m.in_reply_to.is_some() {
        let refs = reply_references(&m.references, m.in_reply_to.as_deref());
        if !refs.is_empty() {
            h.set(header::References::from(refs.join(" ")));
        }
    }
    let auto = if m.in_reply_to.is_some() {
        "auto-replied"
    } else {
        "auto-generated"
    };
    h.insert_raw(HeaderValue::new(
        HeaderName::new_from_ascii_str("Auto-Submitted"),
        auto.to_string(),
    ));
    h.insert_raw(HeaderValue::new(
        HeaderName::new_from_ascii_str("X-Loop"),
        contest.loop_id.clone(),
    ));
    h.insert_raw(HeaderValue::new(
        HeaderName::new_from_ascii_str("Precedence"),
        "bulk".to_string(),
    ));
    h.set(header::MIME_VERSION_1_0);
    // The text's part: its headers as `SinglePart` writes them, a blank
    // line, the text, a line end.
    let mut part = Headers::with_capacity(2);
    part.set(ContentType::TEXT_PLAIN);
    part.set(text.encoding());
    let head = format!("{h}{part}\r\n");
    let mut raw = Vec::with_capacity(head.len() + text.len() + 2);
    raw.extend_from_slice(head.as_bytes());
    raw.extend_from_slice(text.as_ref());
    raw.extend_from_slice(b"\r\n");
    Ok(raw)
}

/// [`format`] by lettre's builder (a mail with attachments, or to other
/// than one recipient).
fn format_built(
    m: &Outgoing,
    text: Body,
    contest: &ContestConfig,
    message_id: &str,
    now: DateTime<Utc>,
) -> Result<(Vec<u8>, Vec<PreparedBody>), BuildError> {
    let from = contest_mailbox(contest)?;
    let mut b = Message::builder()
        .from(from)
        .subject(fit_subject(&m.subject))
        .date(now.into())
        .message_id(Some(message_id.to_string()));
    for to in &m.to {
        let mb: Mailbox = to.parse().map_err(|e: lettre::address::AddressError| {
            BuildError::Address(to.clone(), e.to_string())
        })?;
        b = b.to(mb);
    }
    if let Some(id) = m.in_reply_to.as_deref().and_then(angle) {
        b = b.in_reply_to(id);
    }
    if m.in_reply_to.is_some() {
        let refs = reply_references(&m.references, m.in_reply_to.as_deref());
        if !refs.is_empty() {
            b = b.references(refs.join(" "));
        }
    }
    let auto = if m.in_reply_to.is_some() {
        "auto-replied"
    } else {
        "auto-generated"
    };
    b = b
        .raw_header(HeaderValue::new(
            HeaderName::new_from_ascii_str("Auto-Submitted"),
            auto.to_string(),
        ))
        .raw_header(HeaderValue::new(
            HeaderName::new_from_ascii_str("X-Loop"),
            contest.loop_id.clone(),
        ))
        .raw_header(HeaderValue::new(
            HeaderName::new_from_ascii_str("Precedence"),
            "bulk".to_string(),
        ));
    let text = SinglePart::builder()
        .header(ContentType::TEXT_PLAIN)
        .body(text);
    // An attachment's bytes encoded as lettre encodes them (base64), kept
    // to find them in the mail.
    let attachments: Vec<PreparedBody> = m.attachments.iter().map(encoded).collect();
    let msg = if m.attachments.is_empty() {
        b.singlepart(text)
    } else {
        let mut mp = MultiPart::mixed().singlepart(text);
        for (a, encoded) in m.attachments.iter().zip(&attachments) {
            let ct = ContentType::parse(&a.content_type).unwrap_or(ContentType::TEXT_PLAIN);
            mp = mp.singlepart(Attachment::new(a.filename.clone()).body(encoded.body.clone(), ct));
        }
        b.multipart(mp)
    }
    .map_err(|e| BuildError::Build(e.to_string()))?;
    Ok((msg.formatted(), attachments))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mail(in_reply_to: Option<&str>) -> Vec<u8> {
        let c = ContestConfig::default();
        let m = Outgoing {
            kind: "help",
            to: vec!["joe@lords.example".into()],
            subject: "KNOBELN: help".into(),
            body: "Hello\nÜmlaut line\n".into(),
            in_reply_to: in_reply_to.map(String::from),
            references: vec![],
            attachments: vec![],
        };
        build(&m, &c, "<knobeln.1@contest.example>", Utc::now()).unwrap()
    }

    /// A prepared body is the body lettre makes of the text with its line
    /// ends made CRLF, handed over as a string (as it was before ASCII
    /// texts went as bytes): ASCII and not, short lines and lines too long
    /// for 8bit, every kind of line end.
    #[test]
    fn a_prepared_body_is_lettres_body_of_the_text() {
        let lettres = |text: &str| {
            let crlf = text
                .replace("\r\n", "\n")
                .replace('\r', "\n")
                .replace('\n', "\r\n");
            assert_eq!(crlf_lines(text), crlf, "{text:?}");
            match Body::new_with_encoding(crlf, ContentTransferEncoding::EightBit) {
                Ok(b) => b,
                Err(bytes) => Body::new(String::from_utf8(bytes).unwrap()),
            }
        };
        let long = "x".repeat(200);
        let mut g = crate::seed::SplitMix64::new(38);
        let mut texts: Vec<String> = vec![
            String::new(),
            "a\nb\r\nc\rd".into(),
            "Hello\nÜmlaut line\n".into(),
            format!("short\n{long}\nend"),
            format!("Ümlaut {long}\r\n"),
            "\r\r\n\n\r".into(),
            "=\t trailing \n".into(),
        ];
        let pieces = [
            "a", "line", " ", "\n", "\r", "\r\n", "ä", "\t", "=", &long, "\u{1}",
        ];
        for _ in 0..300 {
            let n = g.below(30);
            texts.push(
                (0..n)
                    .map(|_| pieces[g.below(pieces.len() as u64) as usize])
                    .collect(),
            );
        }
        for t in &texts {
            let (ours, theirs) = (prepare_body(t).body, lettres(t));
            assert_eq!(ours.encoding(), theirs.encoding(), "{t:?}");
            assert_eq!(ours.into_vec(), theirs.into_vec(), "{t:?}");
        }
    }

    /// Issue 35: a mail is built in linear time. The body reaches lettre
    /// with CRLF line ends already (lettre would insert each CR by moving
    /// the rest of the body: quadratic), every line end one CRLF whatever
    /// it was (LF, CRLF, a lone CR).
    #[test]
    fn the_body_reaches_the_builder_with_crlf_already() {
        assert_eq!(crlf_lines("a\nb\r\nc\rd"), "a\r\nb\r\nc\r\nd");
        assert_eq!(crlf_lines("\n\n"), "\r\n\r\n");
        assert_eq!(crlf_lines("Ümlaut\r\n"), "Ümlaut\r\n");
        assert_eq!(crlf_lines(""), "");
        assert_eq!(crlf_lines("no end"), "no end");
        assert_eq!(crlf_lines("\r\r\nä\r"), "\r\n\r\nä\r\n");
        let lines: Vec<String> = (0..50_000).map(|i| format!("line {i}")).collect();
        let c = ContestConfig::default();
        let m = Outgoing {
            kind: "lap",
            to: vec!["joe@lords.example".into()],
            subject: "KNOBELN: a large mail".into(),
            body: lines.join("\n"),
            in_reply_to: None,
            references: vec![],
            attachments: vec![],
        };
        let raw =
            String::from_utf8(build(&m, &c, "<x@contest.example>", Utc::now()).unwrap()).unwrap();
        assert!(raw.contains("\r\nline 0\r\nline 1\r\n"), "{}", &raw[..400]);
        assert!(raw.contains("line 49999"));
        assert!(!raw.replace("\r\n", "").contains('\n'));
    }

    #[test]
    fn replies_carry_the_headers_that_stop_mail_loops() {
        let raw = String::from_utf8(mail(Some("abc@x.example"))).unwrap();
        assert!(raw.contains("Auto-Submitted: auto-replied\r\n"), "{raw}");
        assert!(raw.contains("X-Loop: knobeln@contest.example\r\n"));
        assert!(raw.contains("In-Reply-To: <abc@x.example>\r\n"));
        assert!(raw.contains("References: <abc@x.example>\r\n"));
        assert!(raw.contains("Message-ID: <knobeln.1@contest.example>\r\n"));
        assert!(raw.contains("Date: "));
        assert!(raw.contains("charset=utf-8"));
        // CRLF everywhere.
        assert!(!raw.replace("\r\n", "").contains('\n'));
    }

    #[test]
    fn references_keep_the_last_ids_that_fit_on_one_line() {
        let many: Vec<String> = (0..200).map(|i| format!("id{i:03}@x.example")).collect();
        let refs = reply_references(&many, Some("last@x.example"));
        let line = format!("References: {}", refs.join(" "));
        assert!(line.len() <= MAX_HEADER_LINE, "{}", line.len());
        assert_eq!(refs.last().unwrap(), "<last@x.example>");
        assert_eq!(refs[refs.len() - 2], "<id199@x.example>");
        assert!(!refs.contains(&"<id000@x.example>".to_string()));
        // Unfit ids are left out; an over-long In-Reply-To is not echoed.
        let long = "a".repeat(MAX_ID_CHARS + 1);
        let refs = reply_references(
            &["ok@x".into(), "bad id@x".into(), long.clone()],
            Some(&long),
        );
        assert_eq!(refs, vec!["<ok@x>"]);
        assert_eq!(angle(&long), None);
        assert_eq!(angle("<a@b>").as_deref(), Some("<a@b>"));
    }

    /// The mails of one recipient and no attachment are written without
    /// lettre's builder ([`format_single`]): byte for byte what the builder
    /// writes ([`format_built`]), for plain and odd subjects (non-ASCII,
    /// long enough to fold, quotes, encoded words), addresses with and
    /// without names (non-ASCII too), replies with and without ids, texts
    /// in 8bit and those falling back to quoted-printable, large shared
    /// texts (the mark in their place), contest names that need quoting.
    #[test]
    fn the_direct_writer_writes_lettres_bytes() {
        let subjects = [
            "KNOBELN GRP: your game results, round 3, group 17".to_string(),
            "Re: Ümläute und ß im Betreff".to_string(),
            "x".repeat(200),
            format!("{} {}", "word ".repeat(40), "ä".repeat(30)),
            "=?utf-8?q?looks_encoded?= \"quoted\" (comment) <angle>".to_string(),
            String::new(),
            "   leading and trailing blanks   ".to_string(),
            // A stranger's subject echoed (an RSM refusal): one word over
            // a line's 998 characters, control characters, line ends.
            format!("RSM round {}", "x".repeat(1200)),
            "a\u{b}b\u{7f}c\u{c}d\u{85}e\u{2028}f\0g".to_string(),
            "line\r\nBcc: injected@evil.example\r\n\r\nbody".to_string(),
            format!("{}\n{}", "ä".repeat(300), "w ".repeat(400)),
        ];
        let addresses = [
            "joe@lords.example",
            "Joe Lord <joe@lords.example>",
            "\"Lord, Joe\" <joe@lords.example>",
            "Jürgen Müller <jm@example.org>",
            "very.long.local.part.of.an.address.that.goes.on.and.on@a-rather-long-domain-name.example",
            "\"\" <joe@lords.example>",
            "\"a\\\"b\" <joe@lords.example>",
            "a\t<joe@lords.example>",
            "<joe@lords.example>",
        ];
        let bodies = [
            "Hello\nÜmlaut line\n".to_string(),
            String::new(),
            format!("{}\n", "y".repeat(2000)),
            (0..300).map(|i| format!("line {i}\n")).collect(),
        ];
        let replies: [(Option<&str>, Vec<String>); 4] = [
            (None, vec![]),
            (Some("abc@x.example"), vec![]),
            (
                Some("<last@x.example>"),
                (0..80).map(|i| format!("<id{i}@x.example>")).collect(),
            ),
            // Ids unfit to echo: blanks, a line end, too long, not ASCII.
            (
                Some("a b@x\r\nBcc: e@evil.example"),
                vec![
                    format!("<{}@x>", "r".repeat(MAX_ID_CHARS)),
                    "<ä@x>".into(),
                    "<ok@x.example>".into(),
                ],
            ),
        ];
        let contests = [
            ContestConfig::default(),
            ContestConfig {
                name: "Knobeln, the \"contest\" ä".into(),
                ..ContestConfig::default()
            },
            ContestConfig {
                name: "Knobeln\r\nBcc: e@evil.example".into(),
                ..ContestConfig::default()
            },
        ];
        let now = DateTime::parse_from_rfc3339("2026-11-29T23:59:58Z")
            .unwrap()
            .with_timezone(&Utc);
        let mut n = 0;
        for c in &contests {
            for subject in &subjects {
                for to in addresses {
                    for body in &bodies {
                        for (in_reply_to, references) in &replies {
                            let m = Outgoing {
                                kind: "grp",
                                to: vec![to.to_string()],
                                subject: subject.clone(),
                                body: body.clone(),
                                in_reply_to: in_reply_to.map(String::from),
                                references: references.clone(),
                                attachments: vec![],
                            };
                            let id = "<knobeln.0123456789ab@contest.example>";
                            let prepared = prepare_body(body);
                            let direct = format_single(&m, &prepared.body, c, id, now).unwrap();
                            let (built, _) =
                                format_built(&m, prepared.body.clone(), c, id, now).unwrap();
                            assert_eq!(
                                String::from_utf8_lossy(&direct),
                                String::from_utf8_lossy(&built)
                            );
                            // Built around a shared text: the same as whole.
                            let around = build_around(&m, &prepared, c, id, now).unwrap();
                            let mut whole = around.raw.clone();
                            if let Some(at) = around.text_at {
                                whole.splice(at..at, prepared.body.as_ref().iter().copied());
                            }
                            assert_eq!(whole, built);
                            fits_rfc_5322(&built);
                            n += 1;
                        }
                    }
                }
            }
        }
        assert_eq!(n, 3 * 11 * 9 * 4 * 4);
        // A bad address is the same error either way.
        let m = Outgoing {
            kind: "grp",
            to: vec!["not an address".into()],
            subject: "s".into(),
            body: "b".into(),
            in_reply_to: None,
            references: vec![],
            attachments: vec![],
        };
        let c = ContestConfig::default();
        let text = prepare_body("b").body;
        assert!(matches!(
            format_single(&m, &text, &c, "<a@b>", now),
            Err(BuildError::Address(..))
        ));
    }

    /// RFC 5322 of a mail's header: every line at most 998 characters,
    /// printable ASCII or a tab (a name or subject beyond is an encoded
    /// word), no line end but CRLF, and no encoded word of the subject
    /// that decodes to a control character (a line end in a reader).
    fn fits_rfc_5322(raw: &[u8]) {
        let end = memchr::memmem::find(raw, b"\r\n\r\n").expect("a header") + 2;
        let head = std::str::from_utf8(&raw[..end]).expect("ASCII header");
        for line in head.split_terminator("\r\n") {
            assert!(line.len() <= MAX_HEADER_LINE, "{} characters", line.len());
            assert!(
                line.bytes()
                    .all(|b| b == b'\t' || (b' '..=b'~').contains(&b)),
                "{line:?}"
            );
        }
        assert!(!head.replace("\r\n", "").contains(['\r', '\n']));
        let subject = head
            .split("\r\n")
            .skip_while(|l| !l.starts_with("Subject:"))
            .take_while(|l| l.starts_with("Subject:") || l.starts_with(' '))
            .collect::<String>();
        for word in subject.split(' ').filter(|w| w.starts_with("=?utf-8?b?")) {
            use base64::Engine;
            let b64 = &word["=?utf-8?b?".len()..word.len() - 2];
            let text = base64::engine::general_purpose::STANDARD
                .decode(b64)
                .unwrap();
            let text = String::from_utf8_lossy(&text);
            assert!(!text.contains(char::is_control), "{text:?} in {subject:?}");
        }
    }

    /// A stranger's subject echoed in a reply (an RSM refusal says the
    /// subject it refuses) cannot break our header: no line over 998
    /// characters, no control character raw or encoded, at most
    /// [`MAX_SUBJECT_CHARS`] of it.
    #[test]
    fn a_strangers_subject_cannot_break_the_header() {
        let c = ContestConfig::default();
        for subject in [
            format!("KNOBELN RSM round {}: not carried out", "x".repeat(5000)),
            format!(
                "RSM round 1\r\nBcc: e@evil.example\u{b}\u{7f}{}",
                "y ".repeat(3000)
            ),
        ] {
            let m = Outgoing {
                kind: "rsm_refused",
                to: vec!["joe@lords.example".into()],
                subject,
                body: "b".into(),
                in_reply_to: Some("<a@b.example>".into()),
                references: vec![],
                attachments: vec![],
            };
            let raw = build(&m, &c, "<knobeln.1@contest.example>", Utc::now()).unwrap();
            fits_rfc_5322(&raw);
            let head = String::from_utf8_lossy(&raw);
            let subject: String = head
                .split("\r\n")
                .skip_while(|l| !l.starts_with("Subject:"))
                .take_while(|l| l.starts_with("Subject:") || l.starts_with(' '))
                .collect();
            assert!(subject.len() < 2 * MAX_SUBJECT_CHARS, "{}", subject.len());
        }
    }

    #[test]
    fn unsolicited_mails_are_auto_generated() {
        let raw = String::from_utf8(mail(None)).unwrap();
        assert!(raw.contains("Auto-Submitted: auto-generated\r\n"));
        assert!(!raw.contains("In-Reply-To"));
    }

    #[test]
    fn message_ids_are_unique() {
        let c = ContestConfig::default();
        assert_ne!(new_message_id(&c), new_message_id(&c));
        assert!(new_message_id(&c).ends_with("@contest.example>"));
        // No index checks them (schema 0035): many drawn in the same
        // milliseconds are all different by their random part.
        let ids: std::collections::HashSet<String> =
            (0..100_000).map(|_| new_message_id(&c)).collect();
        assert_eq!(ids.len(), 100_000);
        // Ids grow with time.
        let (a, b) = (new_message_id(&c), new_message_id(&c));
        assert!(a[..21] <= b[..21], "{a} {b}");
        assert_eq!(
            a.len(),
            "<knobeln.".len() + 12 + 24 + "@contest.example>".len()
        );
    }
}
