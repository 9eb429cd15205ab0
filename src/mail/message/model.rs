//! What a read mail is, as data: [`Inbound`] (who wrote it, where a reply
//! goes, subject, body, attachments, whether a machine sent it), its parts,
//! the size caps ([`Limits`]) and why a mail cannot be read at all
//! ([`Unreadable`]).
//!
//! Not here: reading the bytes (`parse.rs`), telling a machine's mail
//! (`automatic.rs`) or checking an address (`address.rs`).

use serde::Serialize;

use super::address::{check_answerable, Unanswerable};

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
    /// The local part of `From` or `Sender` is one of
    /// [`DAEMON_LOCAL_PARTS`](super::DAEMON_LOCAL_PARTS) (the local part as
    /// written).
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

/// The value of `Auto-Submitted` a program gives its own mail, one that
/// answers no mail (RFC 3834 section 5).
pub const AUTO_GENERATED: &str = "auto-generated";

impl Automatic {
    /// Whether a team's authentification string can make this mail the
    /// team's: only a program's own mail (`Auto-Submitted:
    /// auto-generated`, say a team's script sending its strategy) that
    /// nothing else marks as a machine's. An answer to a mail
    /// (`auto-replied`: an auto-responder, which may quote the string
    /// back), a report, a list's mail or our own coming back never is.
    pub fn provable(&self) -> bool {
        matches!(self, Automatic::AutoSubmitted(v) if v == AUTO_GENERATED)
    }

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

/// A mail that cannot be read at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unreadable {
    #[error("the mail has {size} bytes, more than the {limit} accepted")]
    TooLarge { size: usize, limit: usize },
    #[error("this is not a mail: no header fields could be read")]
    NotAMail,
}
