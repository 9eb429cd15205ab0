//! Reading one incoming mail from a stranger: raw bytes in, plain data out.
//!
//! [`parse`] checks the size cap *before* looking at a single byte, hands
//! the mail to `mail-parser` (MIME, quoted-printable, base64, charsets,
//! RFC 2047 headers), and returns an [`Inbound`]: who wrote it and where a
//! reply goes, the decoded subject, the text body (or the fact that there is
//! only HTML, or nothing), the attachments, and whether the mail was sent by
//! a machine ([`Automatic`]) and so must never be answered.
//! [`strategy_source`] then finds the C source of a "please compile" mail.
//!
//! Deliberately not here: deciding what a mail *is* (registration, compile
//! request, ...) or what to answer, any I/O, any clock, and any trust in the
//! sender (a `From` is a claim; the authentication string decides). Bodies
//! are never rendered: HTML is recognised only to tell its sender to send
//! plain text. Nothing in this module panics on any input: a panic inside
//! the MIME parser is caught and reported as [`Unreadable::NotAMail`].

use std::panic::{catch_unwind, AssertUnwindSafe};

use mail_parser::{
    Address, HeaderName, HeaderValue, Message, MessageParser, MessagePart, MimeHeaders, PartType,
};
use serde::Serialize;

/// Size caps applied to an incoming mail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// A larger raw mail is not parsed at all ([`Unreadable::TooLarge`]).
    pub max_mail_bytes: usize,
    /// A larger (decoded) attachment is kept in the list with its size, but
    /// its bytes are dropped ([`Attachment::over_limit`]).
    pub max_attachment_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_mail_bytes: 512 * 1024,
            max_attachment_bytes: 256 * 1024,
        }
    }
}

/// One address of a `From`, `Sender` or `Reply-To` header.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Mailbox {
    /// The display name, decoded, `None` when absent or blank.
    pub name: Option<String>,
    /// `local@domain`: the local part as given, the domain lowercased.
    pub address: String,
}

impl Mailbox {
    /// The local part (before the last `@`).
    pub fn local_part(&self) -> &str {
        self.address
            .rsplit_once('@')
            .map_or(self.address.as_str(), |(l, _)| l)
    }
}

/// Why a mail was sent by a machine. Such mail is never answered: answering
/// it is how mail loops and backscatter start.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "value", rename_all = "snake_case")]
pub enum Automatic {
    /// Our own `X-Loop` header came back.
    OurLoop,
    /// `Content-Type: multipart/report` (a bounce or delivery notification).
    Report,
    /// `Return-Path: <>` (the null sender of bounces).
    NullReturnPath,
    /// `Auto-Submitted` with a value other than `no` (the value, lowercased).
    AutoSubmitted(String),
    /// The local part of `From` or `Sender` is one of [`DAEMON_LOCAL_PARTS`]
    /// (the local part as written).
    DaemonSender(String),
    /// `Precedence: bulk`, `junk`, `list` or `auto_reply` (the value,
    /// lowercased).
    Precedence(String),
    /// A `List-Id` header: the mail came through a mailing list.
    ListId,
    /// Another `List-*` header (`List-Unsubscribe`, `List-Post`, ...; the
    /// header's name, lowercased): a mailing list.
    ListHeader(String),
    /// `X-Autoreply` or `X-Autorespond` (any value but `no`; the header's
    /// name, lowercased): a vacation or auto-responder.
    AutoReplyHeader(String),
    /// A bounce address as sender (`From`, `Sender` or `Return-Path`):
    /// `bounce…`/`bounces+…` or a VERP address (`list-bounces+joe=x.example`
    /// style); the local part as written.
    BounceSender(String),
}

impl Automatic {
    /// A stable snake_case name of the variant (for logs and tests).
    pub fn kind(&self) -> &'static str {
        match self {
            Automatic::OurLoop => "our_loop",
            Automatic::Report => "report",
            Automatic::NullReturnPath => "null_return_path",
            Automatic::AutoSubmitted(_) => "auto_submitted",
            Automatic::DaemonSender(_) => "daemon_sender",
            Automatic::Precedence(_) => "precedence",
            Automatic::ListId => "list_id",
            Automatic::ListHeader(_) => "list_header",
            Automatic::AutoReplyHeader(_) => "auto_reply_header",
            Automatic::BounceSender(_) => "bounce_sender",
        }
    }
}

/// Local parts (compared case-insensitively) that mark a sender as a
/// machine.
pub const DAEMON_LOCAL_PARTS: &[&str] = &[
    "mailer-daemon",
    "mailer_daemon",
    "mail-daemon",
    "postmaster",
    "mailer",
    "listserv",
    "majordomo",
];

/// Prefixes of local parts (compared case-insensitively) that mark a
/// sender as a machine: `noreply`, `no-reply+abc`, `no_reply.shop`,
/// `donotreply-x`, ...
pub const DAEMON_LOCAL_PREFIXES: &[&str] = &[
    "noreply",
    "no-reply",
    "no_reply",
    "do-not-reply",
    "do_not_reply",
    "donotreply",
];

/// Whether a local part is a machine's (see [`DAEMON_LOCAL_PARTS`],
/// [`DAEMON_LOCAL_PREFIXES`]).
pub fn is_daemon_local_part(local: &str) -> bool {
    let low = local.to_ascii_lowercase();
    DAEMON_LOCAL_PARTS.contains(&low.as_str())
        || DAEMON_LOCAL_PREFIXES.iter().any(|p| low.starts_with(p))
}

/// Whether a local part is a bounce address: `bounce`, `bounces`,
/// `bounce-…`, `bounces+…`, `…-bounces+…`, `…-bounce-…` (VERP addresses
/// such as `list-bounces+joe=x.example` included), and `owner-…` (the list
/// owner's address, majordomo style).
pub fn is_bounce_local_part(local: &str) -> bool {
    let low = local.to_ascii_lowercase();
    let base = low.split(['+', '=']).next().unwrap_or("");
    let words: Vec<&str> = base.split(['-', '.', '_']).collect();
    words.iter().any(|w| *w == "bounce" || *w == "bounces") || low.starts_with("owner-")
}

/// The readable text of a mail.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Body {
    /// The text/plain body (several inline text parts joined by a newline),
    /// decoded to UTF-8, with LF line ends.
    Text(String),
    /// There is no text/plain part with anything in it, but there is HTML.
    HtmlOnly,
    /// No text at all (or only white space).
    Empty,
}

impl Body {
    /// `"text"`, `"html_only"` or `"empty"`.
    pub fn kind(&self) -> &'static str {
        match self {
            Body::Text(_) => "text",
            Body::HtmlOnly => "html_only",
            Body::Empty => "empty",
        }
    }

    /// The text, if any.
    pub fn text(&self) -> Option<&str> {
        match self {
            Body::Text(t) => Some(t),
            _ => None,
        }
    }
}

/// One attachment (a MIME part that is not part of the text body).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attachment {
    /// From `Content-Disposition: filename` or `Content-Type: name`, decoded.
    pub filename: Option<String>,
    /// `type/subtype`, lowercased (`text/plain` when the part has none).
    pub content_type: String,
    /// The decoded size in bytes.
    pub size: usize,
    /// The decoded content; text parts are converted to UTF-8 from their
    /// charset. Empty when [`Attachment::over_limit`].
    pub bytes: Vec<u8>,
    /// `size` is above [`Limits::max_attachment_bytes`]: `bytes` was dropped.
    pub over_limit: bool,
    /// The part could not be decoded (bad base64, or a mail cut off inside
    /// it): `bytes` is the raw, undecoded content.
    pub damaged: bool,
}

impl Attachment {
    /// Whether this attachment is a C source: named `*.c` (any case), or
    /// typed `text/x-csrc`, `text/x-c` or `text/x-csource`.
    pub fn is_c_source(&self) -> bool {
        let named_c = self.filename.as_deref().is_some_and(|f| {
            let f = f.trim();
            f.len() > 2 && f.to_ascii_lowercase().ends_with(".c")
        });
        named_c
            || matches!(
                self.content_type.as_str(),
                "text/x-csrc" | "text/x-c" | "text/x-csource"
            )
    }
}

/// A parsed incoming mail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inbound {
    /// Without the angle brackets.
    pub message_id: Option<String>,
    /// The first address of `From` that is an address (`local@domain`).
    pub from: Option<Mailbox>,
    /// The first address of `Reply-To` that is an address.
    pub reply_to: Option<Mailbox>,
    /// The address of `Return-Path`, when there is one (not `<>`).
    pub return_path: Option<String>,
    /// Decoded (RFC 2047), trimmed; empty when there is none.
    pub subject: String,
    /// The message ids of `References`, without angle brackets, in order.
    pub references: Vec<String>,
    /// The (first) message id of `In-Reply-To`.
    pub in_reply_to: Option<String>,
    /// `Some` when the mail was sent by a machine: never answer it.
    pub automatic: Option<Automatic>,
    pub body: Body,
    pub attachments: Vec<Attachment>,
}

impl Inbound {
    /// Where a reply goes: `Reply-To`, else `From`.
    pub fn reply_address(&self) -> Option<&Mailbox> {
        self.reply_to.as_ref().or(self.from.as_ref())
    }

    /// Where a reply goes, if a reply can go there at all
    /// ([`check_answerable`]).
    pub fn answerable_address(&self) -> Result<&Mailbox, Unanswerable> {
        let mb = self.reply_address().ok_or(Unanswerable::NoAddress)?;
        check_answerable(&mb.address)?;
        Ok(mb)
    }
}

/// Why a mail's sender cannot be answered: its address is malformed, or
/// there is none. Such a mail is kept and dropped, never retried.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unanswerable {
    #[error("no From or Reply-To address")]
    NoAddress,
    #[error("the address has {0} characters, more than 254")]
    AddressTooLong(usize),
    #[error("the local part has {0} characters, more than 64")]
    LocalPartTooLong(usize),
    #[error("the local part is not a dot-atom (empty, a dot at an end, two dots, or a character outside RFC 5322's atext)")]
    BadLocalPart,
    #[error("the domain is an address literal ([...]), not a name")]
    DomainLiteral,
    #[error("the domain is not a host name (labels of letters, digits and hyphens, at least two)")]
    BadDomain,
}

impl Unanswerable {
    /// A stable snake_case name (for tests and the corpus).
    pub fn kind(&self) -> &'static str {
        match self {
            Unanswerable::NoAddress => "no_address",
            Unanswerable::AddressTooLong(_) => "address_too_long",
            Unanswerable::LocalPartTooLong(_) => "local_part_too_long",
            Unanswerable::BadLocalPart => "bad_local_part",
            Unanswerable::DomainLiteral => "domain_literal",
            Unanswerable::BadDomain => "bad_domain",
        }
    }
}

/// Whether a reply can be sent to `local@domain`: the address and its local
/// part within RFC 5321's lengths (254, 64), the local part an ASCII
/// dot-atom, the domain a host name of at least two labels (letters,
/// digits, inner hyphens, 63 characters each). Quoted local parts, address
/// literals (`joe@[127.0.0.1]`) and non-ASCII addresses are refused: a
/// contest robot answers ordinary addresses only.
pub fn check_answerable(address: &str) -> Result<(), Unanswerable> {
    let (local, domain) = address.rsplit_once('@').ok_or(Unanswerable::BadLocalPart)?;
    let n_local = local.chars().count();
    if n_local > 64 {
        return Err(Unanswerable::LocalPartTooLong(n_local));
    }
    let n = address.chars().count();
    if n > 254 {
        return Err(Unanswerable::AddressTooLong(n));
    }
    let atext = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-/=?^_`{|}~".contains(c);
    if local.is_empty()
        || local
            .split('.')
            .any(|w| w.is_empty() || !w.chars().all(atext))
    {
        return Err(Unanswerable::BadLocalPart);
    }
    if domain.starts_with('[') {
        return Err(Unanswerable::DomainLiteral);
    }
    let label_ok = |l: &str| {
        !l.is_empty()
            && l.len() <= 63
            && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    };
    let labels: Vec<&str> = domain.split('.').collect();
    if labels.len() < 2 || !labels.iter().all(|l| label_ok(l)) {
        return Err(Unanswerable::BadDomain);
    }
    // The mail builder's own grammar (lettre, through the `email_address`
    // crate), so that no address passes here that a reply cannot go to.
    if address.parse::<lettre::Address>().is_err() {
        return Err(Unanswerable::BadLocalPart);
    }
    Ok(())
}

/// A mail that cannot be read at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unreadable {
    #[error("the mail has {size} bytes, more than the {limit} accepted")]
    TooLarge { size: usize, limit: usize },
    #[error("this is not a mail: no header fields could be read")]
    NotAMail,
}

/// Why a "please compile" mail holds no usable C source.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SourceProblem {
    #[error("the mail has only an HTML body; send the C source as plain text")]
    HtmlOnly,
    #[error("the mail holds no source: its body is empty")]
    Empty,
    #[error("the mail has {0} C source attachments; send exactly one file")]
    SeveralCAttachments(usize),
    #[error("the C source attachment has {size} bytes, more than this server accepts")]
    TooLarge {
        filename: Option<String>,
        size: usize,
    },
    #[error("the C source attachment could not be decoded (was the mail cut off?)")]
    Undecodable { filename: Option<String> },
}

/// The sender's address and the subject of a stored mail, for lists the
/// organizer reads ("(no sender)", "(unreadable)" where there is none).
pub fn sender_and_subject(raw: &[u8], our_loop_id: &str) -> (String, String) {
    match parse(raw, our_loop_id, &Limits::default()) {
        Ok(mail) => (
            mail.from
                .map(|f| f.address)
                .unwrap_or_else(|| "(no sender)".into()),
            mail.subject,
        ),
        Err(_) => ("(unreadable)".into(), String::new()),
    }
}

/// Parses a raw mail (RFC 5322, CRLF or LF line ends).
///
/// `our_loop_id` is the value of the `X-Loop` header the server puts on its
/// own mail (empty: no loop check). The size cap is checked before parsing.
pub fn parse(raw: &[u8], our_loop_id: &str, limits: &Limits) -> Result<Inbound, Unreadable> {
    if raw.len() > limits.max_mail_bytes {
        return Err(Unreadable::TooLarge {
            size: raw.len(),
            limit: limits.max_mail_bytes,
        });
    }
    // mail-parser promises not to panic; this makes it our promise too,
    // whatever its debug assertions think of a hostile mail.
    catch_unwind(AssertUnwindSafe(|| {
        parse_unchecked(raw, our_loop_id, limits)
    }))
    .unwrap_or(Err(Unreadable::NotAMail))
}

fn parse_unchecked(raw: &[u8], our_loop_id: &str, limits: &Limits) -> Result<Inbound, Unreadable> {
    let msg = MessageParser::default()
        .parse(raw)
        .ok_or(Unreadable::NotAMail)?;
    if !looks_like_mail(&msg) {
        return Err(Unreadable::NotAMail);
    }

    let from = first_mailbox(msg.from());
    let sender = first_mailbox(msg.sender());
    let reply_to = first_mailbox(msg.reply_to());
    let subject = msg.subject().map(clean_line).unwrap_or_default();
    let message_id = msg.message_id().map(strip_id).filter(|id| !id.is_empty());
    let references = ids(msg.references());
    let in_reply_to = ids(msg.in_reply_to()).into_iter().next();

    let return_path = raw_values(&msg, "Return-Path")
        .into_iter()
        .map(|v| strip_id(&v))
        .find(|v| !v.is_empty());
    let automatic = automatic(
        &msg,
        our_loop_id,
        [from.as_ref(), sender.as_ref(), reply_to.as_ref()],
        return_path.as_deref(),
    );
    let body = body(&msg);
    let attachments = msg
        .attachments()
        .map(|part| attachment(part, limits))
        .collect();

    Ok(Inbound {
        message_id,
        from,
        reply_to,
        return_path,
        subject,
        references,
        in_reply_to,
        automatic,
        body,
        attachments,
    })
}

/// mail-parser takes any `word:` line for a header. A mail has at least one
/// header field that RFC 5322 or MIME knows, and its first line is one.
fn looks_like_mail(msg: &Message<'_>) -> bool {
    let headers = msg.headers();
    let Some(first) = headers.first() else {
        return false;
    };
    let known = |n: &HeaderName<'_>| {
        matches!(
            n,
            HeaderName::From
                | HeaderName::Sender
                | HeaderName::ReplyTo
                | HeaderName::To
                | HeaderName::Cc
                | HeaderName::Subject
                | HeaderName::Date
                | HeaderName::MessageId
                | HeaderName::ReturnPath
                | HeaderName::Received
                | HeaderName::MimeVersion
                | HeaderName::ContentType
        )
    };
    // The header block starts at the first byte. (mail-parser reads an mbox
    // `From ` separator line as a header field of its own, so such a line
    // passes.)
    first.offset_field == 0 && headers.iter().any(|h| known(&h.name))
}

/// The first address of a header that is a plausible `local@domain`.
fn first_mailbox(addr: Option<&Address<'_>>) -> Option<Mailbox> {
    addr?.iter().find_map(|a| {
        let address = a.address.as_deref()?.trim();
        let (local, domain) = address.rsplit_once('@')?;
        let ok = |s: &str| !s.is_empty() && !s.chars().any(|c| c.is_whitespace() || c.is_control());
        if !ok(local) || !ok(domain) || domain.contains('@') {
            return None;
        }
        Some(Mailbox {
            name: a.name.as_deref().map(clean_line).filter(|n| !n.is_empty()),
            address: format!("{local}@{}", domain.to_ascii_lowercase()),
        })
    })
}

/// One header line: white space runs (folding included) become one space.
fn clean_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn strip_id(id: &str) -> String {
    id.trim()
        .trim_start_matches('<')
        .trim_end_matches('>')
        .trim()
        .to_string()
}

fn ids(v: &HeaderValue<'_>) -> Vec<String> {
    let list: Vec<&str> = match v {
        HeaderValue::Text(t) => vec![t.as_ref()],
        HeaderValue::TextList(l) => l.iter().map(|t| t.as_ref()).collect(),
        _ => Vec::new(),
    };
    list.into_iter()
        .map(strip_id)
        .filter(|id| !id.is_empty())
        .collect()
}

/// The raw values of every root header called `name` (any case), unfolded
/// and trimmed.
fn raw_values(msg: &Message<'_>, name: &str) -> Vec<String> {
    msg.headers()
        .iter()
        .filter(|h| h.name.as_str().eq_ignore_ascii_case(name))
        .filter_map(|h| {
            msg.raw_message
                .get(h.offset_start as usize..h.offset_end as usize)
                .map(|b| clean_line(&String::from_utf8_lossy(b)))
        })
        .collect()
}

/// Whether a part (or a part nested anywhere below it, in a multipart or a
/// forwarded `message/rfc822`) is a delivery report: `multipart/report`,
/// `message/delivery-status`, `message/disposition-notification` or
/// `message/feedback-report`.
fn has_report_part(msg: &Message<'_>, depth: usize) -> bool {
    msg.parts.iter().any(|part| {
        let is_report = part.content_type().is_some_and(|ct| {
            let sub = ct.subtype().unwrap_or("").to_ascii_lowercase();
            let ty = ct.ctype().to_ascii_lowercase();
            (ty == "multipart" && sub == "report")
                || (ty == "message"
                    && matches!(
                        sub.as_str(),
                        "delivery-status"
                            | "global-delivery-status"
                            | "disposition-notification"
                            | "feedback-report"
                    ))
        });
        is_report
            || match &part.body {
                PartType::Message(inner) if depth < 8 => has_report_part(inner, depth + 1),
                _ => false,
            }
    })
}

/// The first of the [`Automatic`] reasons that applies, in the order of the
/// enum.
fn automatic(
    msg: &Message<'_>,
    our_loop_id: &str,
    senders: [Option<&Mailbox>; 3],
    return_path: Option<&str>,
) -> Option<Automatic> {
    let loop_id = our_loop_id.trim();
    if !loop_id.is_empty()
        && raw_values(msg, "X-Loop")
            .iter()
            .any(|v| v.eq_ignore_ascii_case(loop_id))
    {
        return Some(Automatic::OurLoop);
    }
    if has_report_part(msg, 0) {
        return Some(Automatic::Report);
    }
    if raw_values(msg, "Return-Path")
        .iter()
        .any(|v| v.split_whitespace().collect::<String>() == "<>")
    {
        return Some(Automatic::NullReturnPath);
    }
    for v in raw_values(msg, "Auto-Submitted") {
        // `auto-replied; owner-email="..."` or `auto-generated (comment)`.
        let token = v
            .split([';', '(', ' '])
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        if token != "no" {
            return Some(Automatic::AutoSubmitted(token));
        }
    }
    let return_local = return_path.and_then(|a| a.rsplit_once('@')).map(|(l, _)| l);
    let locals = senders
        .into_iter()
        .flatten()
        .map(|mb| mb.local_part())
        .chain(return_local);
    for local in locals.clone() {
        if is_daemon_local_part(local) {
            return Some(Automatic::DaemonSender(local.to_string()));
        }
    }
    for v in raw_values(msg, "Precedence") {
        let v = v.to_ascii_lowercase();
        if matches!(
            v.as_str(),
            "bulk" | "junk" | "list" | "auto_reply" | "auto-reply"
        ) {
            return Some(Automatic::Precedence(v));
        }
    }
    if !raw_values(msg, "List-Id").is_empty() {
        return Some(Automatic::ListId);
    }
    if let Some(h) = msg.headers().iter().find(|h| {
        // As bytes: a hostile header name with a multibyte character
        // across byte 5 once panicked here (fuzz corpus, from_line).
        let n = h.name.as_str().as_bytes();
        n.len() > 5 && n[..5].eq_ignore_ascii_case(b"list-")
    }) {
        return Some(Automatic::ListHeader(h.name.as_str().to_ascii_lowercase()));
    }
    for name in ["X-Autoreply", "X-Autorespond", "X-Autoresponder"] {
        if raw_values(msg, name)
            .iter()
            .any(|v| !v.eq_ignore_ascii_case("no"))
        {
            return Some(Automatic::AutoReplyHeader(name.to_ascii_lowercase()));
        }
    }
    for local in locals {
        if is_bounce_local_part(local) {
            return Some(Automatic::BounceSender(local.to_string()));
        }
    }
    None
}

/// LF line ends (CRLF and lone CR become LF), no byte order mark.
fn normalize_newlines(s: &str) -> String {
    let s = s.strip_prefix('\u{feff}').unwrap_or(s);
    s.replace("\r\n", "\n").replace('\r', "\n")
}

/// A `format=flowed` text (RFC 3676, what Thunderbird and Apple Mail send
/// by default) as its writer wrote it: a line ending in a space is
/// joined with the next (without that space with `delsp=yes`), a line's
/// stuffed leading space is removed; quoted lines and the signature line
/// stay as they are. A long registration line or source line the client
/// wrapped reaches the checks whole (issue 36). `text` has LF line ends.
pub fn unflow(text: &str, delsp: bool) -> String {
    let mut out = String::with_capacity(text.len());
    let mut lines = text.split('\n').peekable();
    while let Some(raw) = lines.next() {
        if raw.starts_with('>') {
            out.push_str(raw);
        } else {
            let line = raw.strip_prefix(' ').unwrap_or(raw);
            let soft = line.ends_with(' ') && line != "-- " && lines.peek().is_some();
            if soft {
                out.push_str(if delsp { &line[..line.len() - 1] } else { line });
                continue;
            }
            out.push_str(line);
        }
        if lines.peek().is_some() {
            out.push('\n');
        }
    }
    out
}

fn body(msg: &Message<'_>) -> Body {
    let mut texts: Vec<String> = Vec::new();
    let mut html = false;
    for part in msg.text_bodies() {
        match &part.body {
            PartType::Text(t) => {
                let param = |name: &str, value: &str| {
                    part.content_type()
                        .and_then(|c| c.attribute(name))
                        .is_some_and(|v| v.eq_ignore_ascii_case(value))
                };
                texts.push(if param("format", "flowed") {
                    unflow(&normalize_newlines(t), param("delsp", "yes"))
                } else {
                    t.to_string()
                });
            }
            PartType::Html(_) => html = true,
            _ => {}
        }
    }
    html |= msg
        .html_bodies()
        .any(|p| matches!(p.body, PartType::Html(_)));
    // Gmail and Outlook write the blanks a writer typed or pasted as
    // indentation as no-break spaces (U+00A0) in the text part: a pasted
    // Python bot would not compile. In a body they are blanks, as the
    // writer meant them (issue 36); attachments are kept byte for byte.
    let text = normalize_newlines(&texts.join("\n")).replace('\u{a0}', " ");
    if !text.trim().is_empty() {
        Body::Text(text)
    } else if html {
        Body::HtmlOnly
    } else {
        Body::Empty
    }
}

fn attachment(part: &MessagePart<'_>, limits: &Limits) -> Attachment {
    let content_type = part
        .content_type()
        .map(|ct| match ct.subtype() {
            Some(sub) => format!("{}/{}", ct.ctype(), sub),
            None => ct.ctype().to_string(),
        })
        .unwrap_or_else(|| "text/plain".to_string())
        .to_ascii_lowercase();
    let filename = part
        .attachment_name()
        .map(|f| f.trim().to_string())
        .filter(|f| !f.is_empty());
    let contents = part.contents();
    let over_limit = contents.len() > limits.max_attachment_bytes;
    Attachment {
        filename,
        content_type,
        size: contents.len(),
        bytes: if over_limit {
            Vec::new()
        } else {
            contents.to_vec()
        },
        over_limit,
        damaged: part.is_encoding_problem,
    }
}

/// The C source of a "please compile" mail.
///
/// A single C attachment ([`Attachment::is_c_source`]) wins; otherwise the
/// text body, from which a signature (a line exactly `-- ` or `--` and
/// everything after it) is cut. Line ends become LF. Several C attachments,
/// an HTML-only or empty mail, a C attachment over the size limit or one
/// that cannot be decoded are problems to tell the sender about.
pub fn strategy_source(m: &Inbound) -> Result<String, SourceProblem> {
    let c: Vec<&Attachment> = m.attachments.iter().filter(|a| a.is_c_source()).collect();
    match c.as_slice() {
        [a] => {
            if a.over_limit {
                return Err(SourceProblem::TooLarge {
                    filename: a.filename.clone(),
                    size: a.size,
                });
            }
            if a.damaged {
                return Err(SourceProblem::Undecodable {
                    filename: a.filename.clone(),
                });
            }
            let text = match std::str::from_utf8(&a.bytes) {
                Ok(s) => s.to_string(),
                // An untyped binary attachment in an 8-bit charset: Latin-1.
                Err(_) => a.bytes.iter().map(|&b| b as char).collect(),
            };
            let text = normalize_newlines(&text);
            if text.trim().is_empty() {
                Err(SourceProblem::Empty)
            } else {
                Ok(text)
            }
        }
        [] => match &m.body {
            Body::Text(t) => {
                let t = cut_signature(&normalize_newlines(t));
                if t.trim().is_empty() {
                    Err(SourceProblem::Empty)
                } else {
                    Ok(t)
                }
            }
            Body::HtmlOnly => Err(SourceProblem::HtmlOnly),
            Body::Empty => Err(SourceProblem::Empty),
        },
        several => Err(SourceProblem::SeveralCAttachments(several.len())),
    }
}

/// Everything before the first line that is exactly `-- ` or `--` (the
/// signature delimiter). Expects LF line ends.
pub fn cut_signature(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let bare = line.strip_suffix('\n').unwrap_or(line);
        if bare == "-- " || bare == "--" {
            break;
        }
        out.push_str(line);
    }
    out
}

#[cfg(test)]
mod tests;
