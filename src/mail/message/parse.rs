//! Reading a mail: [`parse`] checks the size cap first, hands the bytes
//! to `mail-parser` (catching any panic) and builds the [`Inbound`]: its
//! addresses, subject and ids, whether a machine sent it, its text body
//! and its attachments; [`sender_and_subject`] for the organizer's lists.
//!
//! Not here: what the mail asks for (`commands`) and the C source of a
//! "please compile" mail (`source.rs`).

use mail_parser::{Message, MessageParser, MessagePart, MimeHeaders, PartType};

use super::automatic::automatic;
use super::headers::{clean_line, first_mailbox, ids, looks_like_mail, raw_values, strip_id};
use super::model::{Attachment, Body, Inbound, Limits, Unreadable};
use super::text::{normalize_newlines, unflow};

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
    on_a_deep_stack(|| parse_unchecked(raw, our_loop_id, limits))
        .unwrap_or(Err(Unreadable::NotAMail))
}

/// The stack a whole mail is parsed on: 256 MiB, reserved, touched only as
/// deep as the mail goes.
const DEEP_STACK: usize = 256 << 20;

/// Runs `f`, a parse of a whole mail (and the freeing of what it built), on
/// a thread of its own with a stack of [`DEEP_STACK`] bytes; `Err` if `f`
/// panicked. `mail-parser` reads messages nested inline to any depth and
/// frees them by recursion: 16,000 levels (464 kB, within the size cap)
/// overflowed a 2 MiB stack and ended the process, past any
/// `catch_unwind`. A level takes at least 29 bytes of mail and about
/// 14 KiB of stack (measured in a debug build), so a mail within the size
/// cap ([`Limits`], 512 kB: about 18,000 levels) fits whatever thread
/// the server reads it on.
///
/// # Panics
/// Where the kernel refuses a thread (the processes' limit): the parse
/// cannot run without one.
pub fn on_a_deep_stack<T: Send>(f: impl FnOnce() -> T + Send) -> std::thread::Result<T> {
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .name("mail-parse".into())
            .stack_size(DEEP_STACK)
            .spawn_scoped(s, f)
            .expect("a thread to parse a mail on")
            .join()
    })
}

fn parse_unchecked(raw: &[u8], our_loop_id: &str, limits: &Limits) -> Result<Inbound, Unreadable> {
    let msg = MessageParser::default()
        .parse(raw)
        .ok_or(Unreadable::NotAMail)?;
    read(&msg, our_loop_id, limits)
}

/// [`parse`]'s reading of a mail `mail-parser` has already parsed (for the
/// sealing, which looks at both views of one parse; the caller holds the
/// size cap, the deep stack and any panic). The same [`Inbound`] as
/// [`parse`] gives for the mail's bytes.
pub fn read(msg: &Message<'_>, our_loop_id: &str, limits: &Limits) -> Result<Inbound, Unreadable> {
    if !looks_like_mail(msg) {
        return Err(Unreadable::NotAMail);
    }

    let from = first_mailbox(msg.from());
    let sender = first_mailbox(msg.sender());
    let reply_to = first_mailbox(msg.reply_to());
    let subject = msg.subject().map(clean_line).unwrap_or_default();
    let message_id = msg.message_id().map(strip_id).filter(|id| !id.is_empty());
    let references = ids(msg.references());
    let in_reply_to = ids(msg.in_reply_to()).into_iter().next();

    let return_path = raw_values(msg, "Return-Path")
        .into_iter()
        .map(|v| strip_id(&v))
        .find(|v| !v.is_empty());
    let automatic = automatic(
        msg,
        our_loop_id,
        [from.as_ref(), sender.as_ref(), reply_to.as_ref()],
        return_path.as_deref(),
    );
    let body = body(msg);
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
