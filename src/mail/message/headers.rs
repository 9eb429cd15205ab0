//! Reading header fields: whether the bytes look like a mail at all, the
//! first plausible mailbox of an address header, message ids, and a
//! header's raw values unfolded.
//!
//! Not here: what the headers mean for the mail (`parse.rs`,
//! `automatic.rs`).

use mail_parser::{Address, HeaderName, HeaderValue, Message};

use super::model::Mailbox;

/// mail-parser takes any `word:` line for a header. A mail has at least one
/// header field that RFC 5322 or MIME knows, and its first line is one.
pub(super) fn looks_like_mail(msg: &Message<'_>) -> bool {
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
pub(super) fn first_mailbox(addr: Option<&Address<'_>>) -> Option<Mailbox> {
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
pub(super) fn clean_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

pub(super) fn strip_id(id: &str) -> String {
    id.trim()
        .trim_start_matches('<')
        .trim_end_matches('>')
        .trim()
        .to_string()
}

pub(super) fn ids(v: &HeaderValue<'_>) -> Vec<String> {
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
pub(super) fn raw_values(msg: &Message<'_>, name: &str) -> Vec<String> {
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
