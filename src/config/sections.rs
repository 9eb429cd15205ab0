//! The sections of the configuration that say what the contest is and
//! how it runs: `[contest]`, `[timeline]`, `[limits]`, `[rules]`,
//! `[site]`, `[engine]`, each with its defaults (the discipline's own
//! sections are `crate::discipline`'s).
//!
//! What it deliberately does not do: find, read or check the whole file
//! (the parent module).

use std::path::PathBuf;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// Who the contest is.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct ContestConfig {
    /// The contest's own address: participants write to it, replies come from it.
    pub address: String,
    /// The organizer's address: told about mails that could not be processed.
    pub organizer: String,
    /// Shown in mails.
    pub name: String,
    /// Value of our `X-Loop` header (mail carrying it is never answered).
    pub loop_id: String,
    /// What is played: `knobeln` (default), `ultimatum`, `flooding`,
    /// `footsteps` or `morabaraba`; the bot disciplines take their
    /// parameters from their own section (`[ultimatum]`, …).
    pub discipline: crate::discipline::Discipline,
}

impl Default for ContestConfig {
    fn default() -> Self {
        ContestConfig {
            address: "knobeln@contest.example".into(),
            organizer: "organizer@contest.example".into(),
            name: "International KNOBELN contest".into(),
            loop_id: "knobeln@contest.example".into(),
            discipline: crate::discipline::Discipline::KNOBELN,
        }
    }
}

/// The dates of the contest (announcement: "Important Dates"). All in UTC.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Timeline {
    pub registration_start: DateTime<Utc>,
    pub compile_start: DateTime<Utc>,
    pub registration_deadline: DateTime<Utc>,
    /// Noon UT in 1994. The compile service closes two hours before.
    pub contest_start: DateTime<Utc>,
    /// How long before the contest start the compile service closes.
    pub compile_closes_before_minutes: i64,
    /// Registered teams without an accepted strategy are told so this long
    /// before the compile service closes (once per team; 0: never).
    pub no_strategy_reminder_minutes: i64,
}

impl Default for Timeline {
    /// An open timeline: everything started long ago, the contest is far away.
    fn default() -> Self {
        let past = DateTime::parse_from_rfc3339("2000-01-01T00:00:00Z")
            .expect("date")
            .with_timezone(&Utc);
        let future = DateTime::parse_from_rfc3339("2999-12-31T12:00:00Z")
            .expect("date")
            .with_timezone(&Utc);
        Timeline {
            registration_start: past,
            compile_start: past,
            registration_deadline: future,
            contest_start: future,
            compile_closes_before_minutes: 120,
            no_strategy_reminder_minutes: 24 * 60,
        }
    }
}

impl Timeline {
    pub fn compile_end(&self) -> DateTime<Utc> {
        self.contest_start - chrono::Duration::minutes(self.compile_closes_before_minutes)
    }

    pub fn registration_open(&self, now: DateTime<Utc>) -> bool {
        now >= self.registration_start && now < self.registration_deadline
    }

    pub fn compile_open(&self, now: DateTime<Utc>) -> bool {
        now >= self.compile_start && now < self.compile_end()
    }
}

/// Limits against abuse and overload.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    /// Largest mail accepted, in bytes.
    pub max_mail_bytes: usize,
    /// At most this many registered teams (0: no limit). A registration
    /// whose address is only claimed by its From line, and whose team has
    /// sent no mail with its authentification string within three days,
    /// gives its place in a full contest to a newcomer who confirms its
    /// address (forged registrations cannot keep a contest full). The
    /// default, 500, is what one machine of
    /// two cores serves with room to spare (a KNOBELN tournament of 500
    /// teams plays in about a minute, `bench scale`) and five times the
    /// seeds' largest fields; raise it knowingly.
    pub max_participants: u32,
    /// At most this many teams per mailbox: an address in lower case
    /// without its `+tag` (0: no limit). The default, 1: a team is reached
    /// at its mailbox, and the tags of one mailbox are one person's, who
    /// could otherwise register a team per tag without a confirmation
    /// (a registration from the mailbox itself needs none).
    pub teams_per_mailbox: u32,
    /// At most this many teams per organization (0: no limit); a place is
    /// given way as for `max_participants`.
    pub max_teams_per_organization: u32,
    /// At most this many compile requests per team per hour (0: no limit),
    /// counting those compiled (accepted or rejected); one the server
    /// could not process (a server problem) counts in
    /// `server_problems_per_team_per_hour` instead.
    pub compiles_per_team_per_hour: u32,
    /// At most this many of a team's compile requests per hour end as a
    /// server problem (0: no limit); past it the team's next requests are
    /// refused unrun until the hour has room, so that retries under load
    /// stay bounded without eating the team's compiles.
    pub server_problems_per_team_per_hour: u32,
    /// `serve` works on at most this many compile requests at once (one per
    /// team, teams in turn), apart from the other mails (at least 1).
    pub compiles_at_once: u32,
    /// At most this many replies to one sender address per day (0: no
    /// limit). `user+tag@Domain` counts as `user@domain`. Counts replies
    /// to strangers and to registered teams' mailboxes (a From line is a
    /// claim); never a team's reply proven by its authentification string,
    /// the answer to a registration that is kept, or a contest mail.
    pub replies_per_sender_per_day: u32,
    /// At most this many replies to all strangers of one domain per day (0:
    /// no limit): a flood with forged senders stops here. A registered
    /// team's mailbox at that domain is not a stranger's.
    pub replies_per_domain_per_day: u32,
    /// At most this many replies to strangers in all per day (0: no
    /// limit): what forged senders at any number of domains can draw out of
    /// the server. Participants' replies never count here.
    pub stranger_replies_per_day: u32,
    /// At most this many strangers' mails are taken in whole in 24 hours
    /// (0: no limit): mails proven by no authentification string nor a
    /// confirmation code, from no registered team's mailbox. Past it (or
    /// past the sender's or the domain's share below) a stranger's mail is
    /// kept as its de-duplication key only (a row under 1 KiB), never
    /// processed or answered: the inbox's whole rows of a day are bounded
    /// by the server, not only by the mail server's rate. Participants'
    /// mails never count here and are never held back.
    pub stranger_mails_per_day: u32,
    /// At most this many strangers' mails from the senders of one domain
    /// taken in whole in 24 hours (0: no limit).
    pub stranger_mails_per_domain_per_day: u32,
    /// At most this many strangers' mails from one sender address
    /// (`user+tag@Domain` counts as `user@domain`) taken in whole in 24
    /// hours (0: no limit).
    pub stranger_mails_per_sender_per_day: u32,
    /// At most this many mails that only claim one registered team's
    /// mailbox (its From or Reply-To line names it; no authentification
    /// string, no confirmation code) taken in whole in 24 hours (0: no
    /// limit); past it such a mail is kept as its key only. A share of the
    /// mailbox's own: strangers' mails never use it up, and it never uses
    /// up theirs. A mail with the team's string is never counted here.
    pub claimed_mails_per_mailbox_per_day: u32,
    /// At most this many mails past their budget (the strangers' or a
    /// claimed mailbox's share) are kept as their de-duplication keys in
    /// 24 hours (0: no limit): the record of a flood. Past it such a mail
    /// is not stored at all, only counted (one row a day); over IMAP the
    /// mailbox keeps it as every mail. Key rows are deleted 7 days after
    /// they came.
    pub stranger_keys_per_day: u32,
    /// At most this many mails proven by one team's authentification
    /// string taken in whole in 24 hours (0: no limit); past it such a
    /// mail is kept as its key only. Only the team's string spends it, so
    /// nobody else can hold a team's mail back; it bounds what a hostile
    /// team has the server store (five times `replies_per_team_per_day`:
    /// a team past it gets no replies anyway, and at most 20 compiles an
    /// hour, 480 a day).
    pub team_mails_per_day: u32,
    /// At most this many replies per day to one team proven by its
    /// authentification string (compile reports, status, preferences;
    /// 0: no limit). Only the team can spend it.
    pub replies_per_team_per_day: u32,
    /// At most this many confirmation requests (a registration naming
    /// another address than its sender's) to the addresses of one domain
    /// per day; to one address at most one a day whatever this says.
    pub confirmations_per_domain_per_day: u32,
    /// At most this many confirmation requests in all per day (0: no
    /// limit): bounds the pending registrations stored (each at most
    /// 16 KiB of form) and the mails they send, however many domains.
    pub confirmations_per_day: u32,
    /// At most this many participant kits (`SEND knobelnsoftware`, about
    /// 141 kB each) to one sender per day (0: no limit).
    pub kits_per_sender_per_day: u32,
    /// At most this many participant kits to all senders of one domain per
    /// day (0: no limit).
    pub kits_per_domain_per_day: u32,
    /// At most this many participant kits to all strangers together per
    /// day (0: no limit): what strangers at many domains can draw out of
    /// the server in kit bytes is this times the kit's size (about 14 MB a
    /// day at the default 100). A proven team's mailbox has no share of a
    /// pool: its kits are its own `kits_per_sender_per_day`, sent to it
    /// alone, so no forger naming other mailboxes spends them (proven
    /// mailboxes together get at most that many times their number).
    pub kits_per_day: u32,
    /// The organizer gets at most one digest of failed outgoing and
    /// set-aside incoming mails per this many minutes (the first at once).
    pub digest_interval_minutes: u32,
    /// Processing attempts before a mail is set aside as failed.
    pub max_processing_attempts: u32,
    /// Sending attempts before an outgoing mail is given up.
    pub max_send_attempts: u32,
    /// At most this many strangers' mails that are none of the commands
    /// are forwarded to the organizer per day (0: none); a registered
    /// team's mailbox whose registration proved its address has 3 a day
    /// of its own.
    pub forwards_per_day: u32,
    /// A sent mail keeps its bytes this many days after it was sent, then
    /// only its row: what the reply caps count, its keys, state,
    /// recipients, times and size (0: emptied by the next pass). A mail
    /// not sent yet, queued or failed, keeps its bytes until it is sent.
    pub keep_sent_days: u32,
    /// A mail done or ignored keeps its row this many days after it was
    /// processed, then the row is deleted, its de-duplication key with
    /// it: the inbox holds these days of mail, the mails waiting and the
    /// mails set aside. At least 7, and longer than `imap.keep_days` + 1
    /// (the IMAP mailbox may hand a mail over again while it holds it;
    /// its key must still be there). A mail waiting or set aside keeps
    /// its row.
    pub keep_inbox_days: u32,
}

/// The fewest days `limits.keep_inbox_days` may be: a mailer retries a
/// mail it could not hand over for up to 5 days (Postfix's
/// `maximal_queue_lifetime`), and such a retry must still find the
/// mail's key.
pub const MIN_KEEP_INBOX_DAYS: u32 = 7;

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_mail_bytes: 512 * 1024,
            max_participants: 500,
            teams_per_mailbox: 1,
            max_teams_per_organization: 0,
            compiles_per_team_per_hour: 20,
            server_problems_per_team_per_hour: 5,
            compiles_at_once: 2,
            replies_per_sender_per_day: 50,
            replies_per_domain_per_day: 300,
            stranger_replies_per_day: 1000,
            stranger_mails_per_day: 2000,
            stranger_mails_per_domain_per_day: 300,
            stranger_mails_per_sender_per_day: 50,
            claimed_mails_per_mailbox_per_day: 50,
            stranger_keys_per_day: 2000,
            team_mails_per_day: 1000,
            replies_per_team_per_day: 200,
            confirmations_per_domain_per_day: 10,
            confirmations_per_day: 100,
            kits_per_sender_per_day: 2,
            kits_per_domain_per_day: 20,
            kits_per_day: 100,
            digest_interval_minutes: 60,
            max_processing_attempts: 3,
            max_send_attempts: 10,
            forwards_per_day: 20,
            keep_sent_days: 30,
            keep_inbox_days: 90,
        }
    }
}

/// The game and tournament rules of the contest (defaults: 1994).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Rules {
    pub a: i64,
    pub b: i64,
    pub k: u32,
    /// Throws per game (L).
    pub throws: u32,
    /// The CPU limit: fuel (WebAssembly operators) per strategy and game;
    /// the default is the announcement's 30 s on a SPARCstation 2
    /// ([`crate::referee::DEFAULT_FUEL`]).
    pub fuel: u64,
    /// Removed: the CPU limit is `fuel`, the same on every machine. Only
    /// read to refuse a config that still sets it, with the reason.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_secs: Option<u64>,
    /// Memory per strategy in kB: the module's linear memory (data, heap
    /// and stack), whole WebAssembly pages of 64 kB.
    pub memory_kb: u64,
    /// The watchdog: seconds of each player's own running time per game
    /// (against faults of the engine; fuel runs out long before; past it
    /// the game is played again, never a player's failure).
    pub wall_secs: f64,
    /// Exemplars per strategy in the Knobeln Evolution.
    pub exemplars: u64,
    /// Generation cap of the Evolution.
    pub max_generations: u32,
    /// Games played in parallel (0: one per CPU).
    pub jobs: usize,
    /// A paragraph of the organizer's for the round summaries (RSM): a text
    /// file, read when a summary goes out.
    pub rsm_note_file: Option<PathBuf>,
    /// Mails with game protocols (DGP) are split into numbered parts of at
    /// most this many bytes.
    pub max_protocol_mail_bytes: usize,
    /// The process playing the contest renews its lease on it every quarter
    /// of this; another may take it over this long after the last renewal.
    pub lease_secs: u64,
    /// After each round the contest pauses this long for the organizer's
    /// round summary (RSM), sent with `knobeln rsm` or by mail; 0: no
    /// pause, the automatic summary goes out at once.
    pub rsm_pause_minutes: u64,
}

impl Default for Rules {
    fn default() -> Self {
        Rules {
            a: 1,
            b: 12288,
            k: 8,
            throws: 1000,
            fuel: crate::referee::DEFAULT_FUEL,
            cpu_secs: None,
            memory_kb: 1024,
            wall_secs: crate::referee::DEFAULT_WALL.as_secs_f64(),
            exemplars: 5,
            max_generations: 1000,
            jobs: 0,
            rsm_note_file: None,
            max_protocol_mail_bytes: 200 * 1024,
            lease_secs: 60,
            rsm_pause_minutes: 0,
        }
    }
}

impl Rules {
    /// The referee configuration these rules describe.
    pub fn referee(&self) -> crate::referee::RefereeConfig {
        crate::referee::RefereeConfig {
            params: crate::game::Params {
                a: self.a,
                b: self.b,
                k: self.k,
                l: self.throws,
            },
            limits: crate::referee::PlayerLimits {
                memory_bytes: self.memory_kb * 1024,
                ..Default::default()
            },
            wall: std::time::Duration::from_secs_f64(self.wall_secs.max(0.1)),
            fuel: self.fuel,
        }
    }

    pub fn evolution(&self) -> crate::tournament::EvolutionConfig {
        crate::tournament::EvolutionConfig {
            exemplars_per_strategy: self.exemplars,
            max_generations: self.max_generations,
        }
    }
}

/// The longest contest name: it stands in every contest mail's subject
/// (which the outbox cuts at 500 characters) and in the results site's
/// titles, beside up to a few dozen words of their own.
pub const MAX_CONTEST_NAME_CHARS: usize = 100;

/// `[contest] name`: not empty, at most [`MAX_CONTEST_NAME_CHARS`]
/// characters, on one line (no control characters); the sentence says
/// which rule it broke.
pub fn check_contest_name(name: &str) -> Result<(), String> {
    let n = name.chars().count();
    if name.trim().is_empty() {
        return Err("[contest] name is empty: it is shown in every mail's subject".into());
    }
    if n > MAX_CONTEST_NAME_CHARS {
        return Err(format!(
            "[contest] name is {n} characters long, more than {MAX_CONTEST_NAME_CHARS}: it \
             stands in every mail's subject; shorten it"
        ));
    }
    if name.contains(|c: char| c.is_control() || c == '\u{2028}' || c == '\u{2029}') {
        return Err(
            "[contest] name holds a line break or another control character: it stands in \
             every mail's subject, which is one line"
                .into(),
        );
    }
    Ok(())
}

/// A strategy's memory in kB must be whole WebAssembly pages (64 kB), at
/// least 128 kB (the shadow stack and the runtime) and at most the
/// engine's slot ([`crate::wasm::MAX_MEMORY_BYTES`]).
pub fn check_memory_kb(memory_kb: u64) -> Result<(), String> {
    let max_kb = crate::wasm::MAX_MEMORY_BYTES / 1024;
    if !memory_kb.is_multiple_of(64) || !(128..=max_kb).contains(&memory_kb) {
        return Err(format!(
            "memory_kb must be a multiple of 64 (a WebAssembly page) between 128 and {max_kb} \
             (got {memory_kb})"
        ));
    }
    Ok(())
}
