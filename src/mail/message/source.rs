//! The C source of a "please compile" mail ([`strategy_source`]): a
//! single C attachment, else the text body without its signature; and why
//! there is none ([`SourceProblem`]).
//!
//! Not here: checking the source (`crate::toolchain`) or a bot's source,
//! which `commands::compile_bot` finds itself.

use super::model::{Attachment, Body, Inbound};
use super::text::{cut_signature, normalize_newlines};

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
