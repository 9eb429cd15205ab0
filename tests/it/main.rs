//! The integration tests of `knobeln`: one test binary, one module per area.
//!
//! - `referee`: games between compiled strategies, the hostile ones above all.
//! - `bot_kit`: the bot disciplines' kit: `referee.py` plays the server's
//!   games line for line and expands stored moves as the server does.
//! - `bots`: bots in every language, the bot sandbox against hostile bots
//!   (C and Python), the line-protocol referee core.
//! - `toolchain`: the compile checks on the corpus in `tests/data/sources/`,
//!   and the jail around gcc.
//! - `cli`: the `knobeln` binary end to end (output and exit codes).
//! - `deployment`: a real deployment: where the config is found and what its
//!   relative paths mean, no empty database from read-only commands,
//!   plain-text mail only on loopback, completions and manual pages, quiet
//!   ends on a closed stdout.
//! - `folders`: the ultimatum game's working folder kept across a bot's
//!   matches: its own, within its quota, one tournament per seed.
//! - `disciplines`: the bot disciplines of issue 14: their configuration,
//!   `knobeln play --discipline`, every demo bot against every demo bot.
//! - `lexcount`: the lexical-element counter on tricky inputs.
//! - `fuzz_corpus`: every file of the fuzz corpus (`fuzz/corpus/`) through
//!   its harness (`knobeln::fuzzing`).
//! - `organizer`, `organizer_e2e`: the organizer's view and levers (status,
//!   admin commands, the contest lease) and the participants' status and
//!   mail-preference by mail, on the spool and on the real mail stack.
//! - `announcement`: what the 1994 announcement promised a participant
//!   (knobellib.c with the acceptance, "about 15" description lines, teams
//!   of more than ten); `contest_mail` also holds the snapshots of every
//!   contest mail, GRP against GRR, and the organizer's RSM pause.
//!
//! - `mail_idle`: replies by IMAP IDLE, and IMAP or SMTP outages that stop
//!   only their own side (the real mail stack).
//! - `mail_budget`: the strangers' daily budget at intake over IMAP (a
//!   flood past it, participants beside it, its renewal).
//! - `mail_keep`: the contest mailbox's removal of the mails taken in
//!   (`imap.keep_days`) at its edges: the boundary day, one look a day, a
//!   server without UIDPLUS, a kill between `\Deleted` and `UID EXPUNGE`.
//! - `secrets`: no authentification string left in the server's state
//!   after a contest; private modes of the database, spool and config.
//! - `mail_robust`: nothing lost in silence (the organizer's digest,
//!   unanswerable senders, de-duplication, the size cap, automatic mail,
//!   reply caps, header lengths) on the spool.
//!
//! - `rps`: a sixth discipline that lives only here (rock-paper-scissors),
//!   registered through the seam and played as a contest by mail (issue 37).
//! - `book`: the book's config reference names every key of the config
//!   and no other (issue 37).
//!
//! Shared helpers (compiling into a temp folder, playing, looking for
//! leftover processes, running the binary) are in `common`.

mod common;

mod announcement;
mod book;
mod bot_kit;
mod bots;
mod cli;
mod contest_article;
mod contest_mail;
mod demo;
mod deployment;
mod disciplines;
mod distributed;
mod engine;
mod folders;
mod fuzz_corpus;
mod integrity;
mod kit;
mod lexcount;
mod mail_budget;
mod mail_corpus;
mod mail_e2e;
mod mail_idle;
mod mail_keep;
mod mail_probe;
mod mail_rate;
mod mail_robust;
mod mail_spool;
mod mail_templates;
mod mailstack;
mod one_program;
mod organizer;
mod organizer_e2e;
mod referee;
mod rps;
mod secrets;
mod site;
mod toolchain;
mod walkthrough;

/// The auth string in a registration acknowledgement's text.
pub fn demo_auth(body: &str) -> String {
    knobeln::demo::auth_in(body).unwrap_or_else(|| panic!("no auth string in {body}"))
}
