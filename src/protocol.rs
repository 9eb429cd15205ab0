//! The game protocol: every throw of one game, as compact mail-safe text
//! (the DGP mails of the contest) and as the full, one-line-per-throw text
//! people read.
//!
//! # The compact format, version 1
//!
//! Plain 7-bit ASCII, lines of at most [`WIDTH`] (72) characters, no `=`,
//! no tabs and no trailing blanks, so quoted-printable leaves it unchanged
//! and mail programs have nothing to re-wrap. One protocol is a block of
//! lines in this order:
//!
//! ```text
//! KNOBELN-PROTOCOL 1
//! team P the_heavy_lords_of_knobeln
//! team Q climbers
//! round 1 group 2 slot 17 attempt 1
//! seed 8427345982374
//! a 1 b 12288 k 8 L 1000
//! points P 12 Q 0
//! fail P 10 throw 10: threw 20000, outside the allowed range 1..12288
//! + (rule 1)
//! throws 9
//! 2s,9hc 2s*4 2t,2s 2u*3
//! KNOBELN-END 9 78ad2756
//! ```
//!
//! - `team P`/`team Q`, `fail`: free text (team names, failure reasons) is
//!   written with bytes `!`..`~` and single blanks as they are; `%`, `=`,
//!   control and non-ASCII bytes (UTF-8), and a blank followed by a blank or
//!   ending the text, as `%HH` (two upper-case hex digits). Long texts
//!   continue on lines starting with `+`; the pieces are simply
//!   concatenated. A piece is cut before a blank where possible, so a
//!   continuation line usually reads `+ next words`.
//! - `round`, `group`, `slot` (the game's position in the group's
//!   schedule) and `attempt` (1 = first try); `seed` the game seed; the
//!   rules `a`, `b`, `k`, `L`; `points` of P and Q.
//! - `fail <P|Q> <throw> <reason>`: zero or more failures, each with the
//!   player, the (1-based) throw in which it failed, and the referee's
//!   sentence.
//! - `throws N`, then the N throws in pairs, tokens separated by blanks,
//!   as many as fit on a line: a pair is `p,q` with both numbers in base 36
//!   (digits `0-9a-z`, `-` before negative numbers), or only `p` when both
//!   players threw the same number; `*n` after a pair (n decimal, n >= 2)
//!   repeats it n times in a row. `2s,9hc` is P 100, Q 12288; `2s*4` is four
//!   throws of 100 by both.
//! - `KNOBELN-END N CRC`: N again, and the CRC-32 (IEEE 802.3, as in zip and
//!   gzip, eight lower-case hex digits) of all lines of the block from the
//!   `KNOBELN-PROTOCOL` line to the last line before this one, each with a
//!   newline. A protocol without its end line, or with a wrong count or
//!   checksum, is refused: truncated or damaged mail is detected.
//!
//! The decoder finds protocols anywhere in a text (a whole mail, headers
//! and all): on every line it first ignores leading blanks, tabs, `>` and
//! `|` (quoting) and trailing blanks and carriage returns; a line that then
//! reads `KNOBELN-PROTOCOL <version>` starts a protocol. Everything outside
//! the blocks is ignored. Within a block the decoder is strict (the lines in
//! the order above, decimal numbers without sign except for `a` and `b`, at
//! most [`MAX_THROWS`] throws) but accepts several blanks or tabs between
//! words and lower-case `%hh`. [`decode_all`] returns every protocol of a
//! text; [`decode`] wants exactly one.
//!
//! The full format ([`format_full`]) has one line per throw: the throw
//! number, P's and Q's throw, the winner (`P`, `Q` or `-`), the winner's
//! points and both running totals; then the points and the failures. The
//! kit's `protocolfmt.c` prints exactly the same text, and the kit's
//! `referee.c` writes exactly what [`encode`] writes.
//!
//! This module is pure text: it neither plays, nor checks the throws against
//! the rules (the running totals of [`format_full`] are computed with
//! [`judge`](crate::game::knobeln::judge), but a protocol with illegal throws is still a protocol), nor
//! decodes MIME (base64 bodies must be decoded by the caller;
//! quoted-printable needs nothing, see above).
//!
//! The files: `model.rs` the data, constants, errors and the checksum;
//! `encode.rs` the compact format written; `decode.rs` read; `full.rs` the
//! full format. This file only declares and re-exports them.

mod decode;
mod encode;
mod full;
mod model;

pub use decode::{decode, decode_all};
pub use encode::{encode, encode_runs};
pub use full::{format_all, format_full};
pub use model::{
    crc32, GameProtocol, ProtocolError, ProtocolFailure, BEGIN, END, MAX_THROWS, VERSION, WIDTH,
};

// (Its random protocols are the contest mails' tests' too.)
#[cfg(test)]
pub(crate) mod tests;
