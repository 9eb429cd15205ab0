//! The messages between the coordinator and the workers, and the checks the
//! coordinator makes on what a worker sends back. Pure: data in, data out.
//!
//! A job says which game to play (tournament, round, group, slot, attempt:
//! the identity results are de-duplicated by) and, per discipline, what a
//! worker needs to play it and nothing more: for KNOBELN the referee's
//! configuration, the SHA-256 of both programs and the seeds of the game
//! and of both players' generators. Never the tournament's secret key,
//! team names, sources or anything from the mail side.
//!
//! A kind of job is a variant of [`Play`] (serialized with a
//! `"discipline"` tag) with its own subject `knobeln.jobs.<kind>.<contest>`
//! and its own worker consumer; a worker only pulls the kinds it knows.
//! Two kinds exist: KNOBELN games (two compiled strategies, the referee's
//! configuration, the seeds) and bot games of the four line-protocol
//! disciplines (the game's [`Setup`], its chance included, the limits, and
//! per seat the SHA-256 of the bot's program and its language's definition,
//! whose toolchain the worker finds on its own machine).
//!
//! A job message carries several games (KNOBELN: up to
//! [`KNOBELN_GAMES_PER_JOB`]; bot games one each) and is answered by one
//! result message: the queue's cost is per message.
//!
//! Jobs are binary ([`job`]: a KNOBELN game is a few numbers, the
//! referee's configuration and the programs' hashes written once a job);
//! a worker's answer is binary ([`answer`]: a KNOBELN record's throws
//! travel as the store's bytes, the rest of a record as a few numbers);
//! both sides read the JSON form of their format too. Each format has its own
//! queue ([`FORMAT`]). Everything a worker sends is checked
//! before it counts: the identity must be a game in flight; a KNOBELN
//! record's points must be the rules applied to its throws and its
//! failures must sit at the throw after the last completed one; a bot
//! game's outcome must be of its game with seats that exist; and the
//! sentences participants read are written again by the coordinator from
//! the failure's kind.

use serde::{Deserialize, Serialize};

use crate::discipline::play::{Played, Setup};
use crate::game::knobeln::replay;
use crate::lang::Language;
use crate::lines::{
    describe_bot_failure, BotFailureKind, LineLimits, SHOWN_LINE_CHARS, STDERR_KEEP,
};
use crate::referee::{describe_failure, FailureKind, GameRecord, GameSeeds, RefereeConfig};
use crate::tournament::schedule::GameKey;

pub mod answer;
pub mod job;

/// The version of the message format. Each format has a queue of its own
/// (subjects and consumers name it: [`super::jobs_subject`]), so a worker
/// never takes a job it cannot read: a worker of another version simply
/// finds no work.
/// Format 3: a bot match's limits count replies in CPU time (`reply_cpu`,
/// `startup_cpu`) with wall-clock backstops. Format 4: a bot game may ask
/// for its moves (`keep_transcript`) and its limits say what the memory
/// counts (`LineLimits::memory`: Morabaraba's is the total). Format 5: a
/// bot game may carry its seats' kept working folders (the ultimatum
/// game's) and a `/work` quota (`LineLimits::work_kb`), failures may be
/// `rounds_cpu` and `unasked`, and the referee looks for lines nobody
/// asked for (a worker of format 4 would judge the same bot otherwise).
/// Format 6: a KNOBELN game charges fuel for the referee's calls and
/// `memory.grow` and its watchdog is an engine fault, never a failure; a
/// bot's limits may say how long it may be waited for in a match
/// (`LineLimits::waited`, failure `waited`), kept folders are measured as
/// the tmpfs counts them, and transcripts keep lines as the rules read
/// them (a worker of format 5 would judge and record otherwise).
/// Format 7: a worker's answer is binary ([`answer`]: a KNOBELN record's
/// throws as raw bytes, no base64 or JSON per record); the jobs are JSON
/// as before, and a JSON answer of this format is still read.
/// Format 8: jobs are binary too ([`job`]: a KNOBELN game is its identity,
/// indices into the job's tables of referee configurations and programs,
/// and its seeds). A coordinator of format 8 reads no answer of format 7
/// (a worker of format 7 pulls from the queue of format 7 and finds no
/// job there; an answer of format 7 that came anyway is refused for its
/// format, named); upgrade the workers first, then the coordinator.
/// Format 9: a worker's answer goes to its own subject,
/// `knobeln.results.<session>.<worker>` ([`super::results_subject`]), and
/// the coordinator takes the worker's identity from that subject, never
/// from the body: the NATS server allows each worker's user to publish on
/// its own subject only (deploy/nats-server.conf), so a worker's identity
/// is one the server vouches for. The body still names the worker, and an
/// answer whose body names another is refused. Upgrade as from format 7:
/// the server's config first (per-worker users, `v9` consumers), then the
/// workers, then the coordinator.
/// Format 10: a KNOBELN game charges floating-point multiplications,
/// divisions and square roots, and integer divisions and remainders,
/// their weight in fuel (`wasm::operator_cost`; red team G18): a worker
/// of format 9 would let a strategy run that this referee stops at its
/// CPU limit. The messages are those of format 9; upgrade as from format
/// 8 (the `v10` consumers in the server's config first).
/// Format 11: a bot's wait to come to rest after its answer is bounded by
/// its CPU time and counted toward its next reply and its waiting in the
/// match, and failures may be `busy_after_answer` and `awake_after_answer`
/// (a worker of format 10 would judge the same bot otherwise). The
/// messages are those of format 10; upgrade as from format 10 (the `v11`
/// consumers in the server's config first).
pub const FORMAT: u32 = 11;

/// The most games one job message may carry.
pub const MAX_GAMES_PER_JOB: usize = 128;

/// The most KNOBELN games the coordinator puts into one job. A game of
/// modules takes well under a millisecond, so a job must carry many for
/// the queue's cost per message (a publish, a fetch, an acknowledgement,
/// about a millisecond in all, on the server, the coordinator and the
/// worker) to stay within a few per cent of the play; a group of 41 teams
/// (861 games) still makes 7 jobs to spread. (Format 6 had 64: the queue's
/// CPU per game fell by a third from 64 to 128.)
pub const KNOBELN_GAMES_PER_JOB: usize = 128;

/// What the records of one job's games may take of a result message (the
/// rest: the answer's session, job and worker).
const RESULT_BUDGET: usize = MAX_MESSAGE_BYTES - 4096;

/// A record's bytes in an answer besides its throws, at most: the game's
/// numbers, seed, points and lengths (about 40 bytes) and a failure.
const RECORD_BYTES: usize = 512;

/// The longest a pair of throws can take in an answer under `params`:
/// each throw is the difference to the player's throw before (the first
/// to 0) as a zigzag varint ([`crate::store::encode_throws`]), and no
/// difference of two throws in `[a, b]` is longer than the range's width
/// or its farther end.
fn pair_bytes(params: &crate::game::Params) -> usize {
    let (a, b) = (i128::from(params.a), i128::from(params.b));
    let span = (b - a).abs().max(a.abs()).max(b.abs());
    // The zigzag of a difference d with |d| <= span is at most 2 * span.
    let zigzag = (2 * span).max(1) as u128;
    let bits = (128 - zigzag.leading_zeros()) as usize;
    2 * bits.div_ceil(7).clamp(1, 10)
}

/// How many games of this kind the coordinator puts into one job: bot
/// games (seconds to minutes each, several programs) one by one; KNOBELN
/// games [`KNOBELN_GAMES_PER_JOB`] at a time, fewer when their records
/// could make the answer larger than a message: counted at the longest
/// record the rules allow ([`pair_bytes`] a throw; under the default
/// rules 6 bytes, where a typical game takes about 2), so that no
/// strategies' throws make a job's answer too large to travel.
pub fn games_per_job(play: &Play) -> usize {
    match play {
        Play::Knobeln { referee, .. } => {
            let record = (referee.params.l as usize)
                .saturating_mul(pair_bytes(&referee.params))
                .saturating_add(RECORD_BYTES);
            (RESULT_BUDGET / record).clamp(1, KNOBELN_GAMES_PER_JOB)
        }
        Play::Bots { .. } => 1,
    }
}

/// The most games a worker may find in one job of this kind (it pulls
/// jobs by how many games it can take).
pub fn most_games_per_job(kind: Discipline) -> usize {
    match kind {
        Discipline::Knobeln => KNOBELN_GAMES_PER_JOB,
        Discipline::Bots => 1,
    }
}

/// Largest message either side reads (a KNOBELN record of 1000 throws is
/// about 2 kB in a binary answer, 12 kB as JSON with its throws as pairs;
/// NATS's own default limit is 1 MB).
pub const MAX_MESSAGE_BYTES: usize = 1 << 20;

/// Longest text a worker may put into a failure (a strategy's garbage
/// line, the reason a program cannot start, the engine's words for a
/// trap).
const MAX_FAILURE_TEXT: usize = 200;

/// The disciplines jobs exist for. Each has its own subject and consumer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Discipline {
    Knobeln,
    /// Bot games of the line-protocol disciplines (ultimatum, flooding
    /// island, FootSteps, Morabaraba: the job's [`Setup`] says which).
    Bots,
}

impl Discipline {
    pub const ALL: [Discipline; 2] = [Discipline::Knobeln, Discipline::Bots];

    /// The name in subjects and consumer names.
    pub fn as_str(self) -> &'static str {
        match self {
            Discipline::Knobeln => "knobeln",
            Discipline::Bots => "bots",
        }
    }

    /// The name a worker's `--play` option uses.
    pub fn parse(name: &str) -> Option<Discipline> {
        Discipline::ALL.into_iter().find(|d| d.as_str() == name)
    }
}

/// Which game: a game of a tournament is identified by its key and attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct GameIdent {
    pub tournament: i64,
    pub round: u32,
    pub group: u32,
    pub slot: u32,
    pub attempt: u32,
}

impl GameIdent {
    pub fn new(tournament: i64, key: GameKey, attempt: u32) -> GameIdent {
        GameIdent {
            tournament,
            round: key.round,
            group: key.group,
            slot: key.slot,
            attempt,
        }
    }
}

impl std::fmt::Display for GameIdent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "tournament {}, round {}, group {}, slot {}, attempt {}",
            self.tournament, self.round, self.group, self.slot, self.attempt
        )
    }
}

/// The seeds of a game as they travel ([`GameSeeds`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Seeds {
    pub game: u64,
    pub players: [u64; 2],
}

impl From<GameSeeds> for Seeds {
    fn from(s: GameSeeds) -> Seeds {
        Seeds {
            game: s.game,
            players: s.players,
        }
    }
}

impl From<Seeds> for GameSeeds {
    fn from(s: Seeds) -> GameSeeds {
        GameSeeds {
            game: s.game,
            players: s.players,
        }
    }
}

/// One seat of a bot game.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BotSeat {
    /// SHA-256 (lowercase hex) of the bot's program (a `BotProgram` as
    /// JSON) in the object store.
    pub program: String,
    /// The contest's definition of the bot's language; the worker finds
    /// its toolchain on its own machine.
    pub language: Language,
}

/// What a worker needs to play a game, per discipline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "discipline", rename_all = "snake_case")]
pub enum Play {
    /// Two compiled strategies, `programs[0]` is P.
    Knobeln {
        referee: RefereeConfig,
        /// SHA-256 (lowercase hex) of each program in the object store.
        programs: [String; 2],
        seeds: Seeds,
    },
    /// A game of a bot discipline, `seats[0]` first.
    Bots {
        setup: Setup,
        limits: LineLimits,
        seats: Vec<BotSeat>,
        /// Send the game's moves with the result (a worker of before this
        /// field plays as if it were false).
        #[serde(default)]
        keep_transcript: bool,
        /// Each seat's kept working folder (the ultimatum game's files that
        /// last across a bot's matches); the result brings them back as
        /// they are at the end. `None`: fresh folders.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        folders: Option<Vec<crate::sandbox::folder::FolderImage>>,
    },
}

impl Play {
    pub fn discipline(&self) -> Discipline {
        match self {
            Play::Knobeln { .. } => Discipline::Knobeln,
            Play::Bots { .. } => Discipline::Bots,
        }
    }
}

/// One game of a job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameJob {
    pub game: GameIdent,
    pub play: Play,
}

/// A job: games to play, published to the work queue as one message. Its
/// games are of one coordinator session and one kind; a worker answers
/// them all in one [`ResultMessage`] (several games per message: the
/// queue's cost is per message, not per game).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobMessage {
    pub format: u32,
    /// The coordinator's session: where the result goes.
    pub session: String,
    /// The job's name (JetStream's de-duplication id of it); the answer
    /// names it, so games an answer leaves out are noticed. Unguessable
    /// (a random part): only the worker that took the job can name it.
    pub job: String,
    pub games: Vec<GameJob>,
}

/// What a worker reports for a job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The game was played (a failure in it is the participant's). Its
    /// throws travel compactly ([`compact_record`]).
    Played(#[serde(with = "compact_record")] GameRecord),
    /// A bot game was played (without its transcript).
    BotGame(Box<Played>),
    /// The worker could not play it (sandbox, program fetch, hash,
    /// resources): never a participant's failure.
    Fault(String),
}

/// What a worker reports for one game of a job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameResult {
    pub game: GameIdent,
    pub outcome: Outcome,
}

/// A worker's answer to a job, published to the session's result subject.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResultMessage {
    pub format: u32,
    pub session: String,
    /// The job answered ([`JobMessage::job`]).
    pub job: String,
    /// The worker's name: the last token of the subject it was published
    /// on, which is what the coordinator goes by ([`valid_worker_name`]).
    pub worker: String,
    pub results: Vec<GameResult>,
}

/// A job or result the other side cannot use.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    #[error("message of {0} bytes is larger than {MAX_MESSAGE_BYTES}")]
    TooLarge(usize),
    #[error("unreadable message: {0}")]
    Unreadable(String),
    #[error("message format {0}, this program reads format {FORMAT}")]
    Format(u32),
    #[error("{0}")]
    Invalid(String),
}

fn decode<T: for<'de> Deserialize<'de>>(bytes: &[u8]) -> Result<T, WireError> {
    if bytes.len() > MAX_MESSAGE_BYTES {
        return Err(WireError::TooLarge(bytes.len()));
    }
    serde_json::from_slice(bytes).map_err(|e| WireError::Unreadable(e.to_string()))
}

/// A session name: what goes into a subject must be a plain token.
pub fn valid_session(s: &str) -> bool {
    !s.is_empty() && s.len() <= 64 && s.bytes().all(|b| b.is_ascii_alphanumeric())
}

/// A worker's name, the last token of its results subject (and, under
/// deploy/nats-server.conf, its NATS user): 1 to 64 ASCII letters, digits,
/// `-` and `_` (no `.`, `*`, `>` or space, which NATS reads in a subject).
pub fn valid_worker_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// `name` made into a [`valid_worker_name`]: every other character becomes
/// `-`, cut to 64 (for a default name made of the host's name).
pub fn worker_name_from(name: &str) -> String {
    let n: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .take(64)
        .collect();
    if n.is_empty() {
        "worker".into()
    } else {
        n
    }
}

/// A program's name in the object store and in a worker's cache folder:
/// exactly 64 lowercase hex digits (never a path).
pub fn valid_sha256(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

// `JobMessage::encode`, `decode` and `identity` are in `job.rs`.

/// What every job must be, whatever its games: a session and a name that
/// are plain names, at least one game and not too many.
fn check_header(session: &str, job: &str, n_games: usize) -> Result<(), WireError> {
    if !valid_session(session) {
        return Err(WireError::Invalid("the session is not a plain name".into()));
    }
    if !valid_job_name(job) {
        return Err(WireError::Invalid(
            "the job's name is not a plain name".into(),
        ));
    }
    if n_games == 0 || n_games > MAX_GAMES_PER_JOB {
        return Err(WireError::Invalid(format!("{n_games} games in one job")));
    }
    Ok(())
}

/// A job's name: plain (letters, digits, dashes), as the coordinator makes
/// it (`queue::job_name`: the session, the job's number, a random part).
pub fn valid_job_name(s: &str) -> bool {
    !s.is_empty() && s.len() <= 100 && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

fn check_play(play: &Play) -> Result<(), WireError> {
    match play {
        Play::Knobeln {
            referee, programs, ..
        } => {
            if !programs.iter().all(|p| valid_sha256(p)) {
                return Err(WireError::Invalid(
                    "a program is not named by its SHA-256".into(),
                ));
            }
            referee
                .params
                .validate()
                .map_err(|e| WireError::Invalid(format!("game parameters: {e}")))?;
            if referee.params.l > 1_000_000
                || referee.limits.cpu_secs > 3600
                || referee.wall > std::time::Duration::from_secs(4 * 3600)
            {
                return Err(WireError::Invalid("limits beyond any contest".into()));
            }
        }
        Play::Bots {
            setup,
            limits,
            seats,
            folders,
            ..
        } => {
            if folders.as_ref().is_some_and(|f| f.len() != seats.len()) {
                return Err(WireError::Invalid("a folder for each seat, or none".into()));
            }
            if seats.len() != setup.seats() {
                return Err(WireError::Invalid(format!(
                    "{} seats for a game of {}",
                    seats.len(),
                    setup.seats()
                )));
            }
            if !seats.iter().all(|s| valid_sha256(&s.program)) {
                return Err(WireError::Invalid(
                    "a program is not named by its SHA-256".into(),
                ));
            }
            let hour = std::time::Duration::from_secs(3600);
            if limits.cpu > hour
                || limits.reply_cpu > hour
                || limits.startup_cpu > hour
                || limits.reply_wall > 5 * hour
                || limits.startup_wall > 5 * hour
                || limits.memory_mb > 1 << 16
                || limits.disk_mb > 1 << 16
                || limits.work_kb.is_some_and(|w| w > 1 << 26)
                || limits.max_line > 1 << 20
            {
                return Err(WireError::Invalid("limits beyond any contest".into()));
            }
        }
    }
    Ok(())
}

// `ResultMessage::encode` and `decode` are in `answer.rs`.

/// Checks a KNOBELN record a worker sent for the game with seed `seed`
/// under `cfg`, and returns it with every failure's sentence written again
/// here. `Err` says why the record cannot be what a referee produced: the
/// worker is then at fault, never a participant.
pub fn check_record(
    cfg: &RefereeConfig,
    seed: u64,
    mut record: GameRecord,
) -> Result<GameRecord, String> {
    if record.seed != seed {
        return Err(format!(
            "the record is of seed {}, the game's is {seed}",
            record.seed
        ));
    }
    let l = cfg.params.l as usize;
    if record.throws.len() > l {
        return Err(format!("{} throws in a game of {l}", record.throws.len()));
    }
    match replay(&cfg.params, &record.throws) {
        Ok(points) if points == record.points => {}
        Ok(points) => {
            return Err(format!(
                "points {:?}, the throws give {points:?}",
                record.points
            ))
        }
        Err((n, _, rule)) => return Err(format!("throw {n} breaks a rule ({rule}) unreported")),
    }
    if record.failures.is_empty() {
        if record.throws.len() != l {
            return Err(format!(
                "{} throws and no failure in a game of {l}",
                record.throws.len()
            ));
        }
        return Ok(record);
    }
    if record.failures.len() > 2
        || (record.failures.len() == 2 && record.failures[0].player == record.failures[1].player)
    {
        return Err("more than one failure of a player".into());
    }
    // A game of all its throws is over: the referee judges no more.
    if record.throws.len() == l {
        return Err(format!("a failure after the game's last throw ({l})"));
    }
    // P's before Q's, as the referee lists them: the stored record is the
    // one a local referee would have made, whatever order a worker sent.
    record.failures.sort_by_key(|f| f.player);
    let at = record.throws.len() as u32 + 1;
    for f in record.failures.iter_mut() {
        if f.player > 1 {
            return Err(format!("a failure of player {}", f.player));
        }
        if f.throw != at {
            return Err(format!(
                "a failure in throw {} after {} completed throws",
                f.throw,
                record.throws.len()
            ));
        }
        let text = match &f.kind {
            FailureKind::Output { line } => Some(line),
            FailureKind::Unstartable { error } => Some(error),
            FailureKind::Crashed { trap: Some(t), .. } => Some(t),
            _ => None,
        };
        if let Some(t) = text {
            if t.len() > MAX_FAILURE_TEXT || t.chars().any(|c| c.is_control()) {
                return Err("a failure's text is too long or not printable".into());
            }
        }
        // A program is loaded before the game: one that threw was
        // started (red team F16).
        if matches!(f.kind, FailureKind::Unstartable { .. }) && at != 1 {
            return Err(format!(
                "a program that could not be started after {} throws",
                record.throws.len()
            ));
        }
        // After the texts' check: the refusal quotes the sentence.
        if !crate::referee::referee_makes(cfg, &f.kind) {
            return Err(format!(
                "a failure this referee never makes ({})",
                describe_failure(cfg, f.throw, &f.kind)
            ));
        }
        f.reason = describe_failure(cfg, f.throw, &f.kind);
    }
    Ok(record)
}

/// A KNOBELN record in a JSON answer: the throws as the store keeps them
/// (differences to each player's previous throw, zigzag varints; about
/// 2–3 kB for 1000 throws) in base64, instead of a JSON array of pairs
/// (about 12 kB): less for the NATS server to store and for the
/// coordinator to read. A record whose throws are a JSON array (a worker
/// of an earlier version) is read too.
pub mod compact_record {
    use base64::Engine as _;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use crate::referee::{Failure, GameRecord};
    use crate::store::{decode_throws, encode_throws, THROWS_FORMAT};

    #[derive(Serialize)]
    struct Out<'a> {
        seed: u64,
        points: [u64; 2],
        throws_format: i64,
        throws: String,
        failures: &'a [Failure],
    }

    /// The throws as they came: text (borrowed from the message where it
    /// can be: no copy of it is made), or a JSON array of pairs.
    enum Throws<'a> {
        Compact(std::borrow::Cow<'a, str>),
        Pairs(Vec<[i64; 2]>),
    }

    impl<'de: 'a, 'a> Deserialize<'de> for Throws<'a> {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V<'a>(std::marker::PhantomData<&'a ()>);
            impl<'de: 'a, 'a> serde::de::Visitor<'de> for V<'a> {
                type Value = Throws<'a>;
                fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                    f.write_str("throws as base64 text or as pairs")
                }
                fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Throws<'a>, E> {
                    Ok(Throws::Compact(v.into()))
                }
                fn visit_str<E>(self, v: &str) -> Result<Throws<'a>, E> {
                    Ok(Throws::Compact(v.to_string().into()))
                }
                fn visit_seq<A: serde::de::SeqAccess<'de>>(
                    self,
                    seq: A,
                ) -> Result<Throws<'a>, A::Error> {
                    Vec::<[i64; 2]>::deserialize(serde::de::value::SeqAccessDeserializer::new(seq))
                        .map(Throws::Pairs)
                }
            }
            d.deserialize_any(V(std::marker::PhantomData))
        }
    }

    #[derive(Deserialize)]
    struct In<'a> {
        seed: u64,
        points: [u64; 2],
        #[serde(default)]
        throws_format: Option<i64>,
        #[serde(borrow)]
        throws: Throws<'a>,
        failures: Vec<Failure>,
    }

    pub fn serialize<S: Serializer>(r: &GameRecord, s: S) -> Result<S::Ok, S::Error> {
        Out {
            seed: r.seed,
            points: r.points,
            throws_format: THROWS_FORMAT,
            throws: base64::engine::general_purpose::STANDARD.encode(encode_throws(&r.throws)),
            failures: &r.failures,
        }
        .serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<GameRecord, D::Error> {
        use serde::de::Error;
        let i = In::deserialize(d)?;
        let throws = match i.throws {
            Throws::Pairs(p) => p,
            Throws::Compact(text) => {
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(text.as_bytes())
                    .map_err(D::Error::custom)?;
                decode_throws(&bytes, i.throws_format.unwrap_or(THROWS_FORMAT))
                    .map_err(D::Error::custom)?
            }
        };
        Ok(GameRecord {
            seed: i.seed,
            points: i.points,
            throws,
            failures: i.failures,
        })
    }
}

use crate::discipline::game::{printable, MAX_RULE_TEXT};

/// Checks a bot game a worker played for `setup` and returns it with every
/// failure's sentence written again here. `Err` says why it cannot be what
/// a referee produced (the worker is then at fault, never a participant):
/// numbers per seat for the seats there are, an outcome of this game whose
/// seats exist, printable texts within the referee's caps.
/// A bot game's kept folders as a worker sent them back: one per seat when
/// the job sent folders (none otherwise), each within `quota` bytes.
pub fn check_folders(played: &Played, sent: Option<(usize, u64)>) -> Result<(), String> {
    match (sent, &played.folders) {
        (None, None) => Ok(()),
        (None, Some(_)) => Err("folders for a game played without kept folders".into()),
        (Some(_), None) => Err("no folders back from a game with kept folders".into()),
        (Some((n, quota)), Some(f)) => {
            if f.len() != n {
                return Err(format!("{} folders for {n} seats", f.len()));
            }
            if f.iter().any(|x| !x.cost().fits(quota)) {
                return Err(format!(
                    "a folder over its quota of {quota} bytes (as the tmpfs counts it)"
                ));
            }
            Ok(())
        }
    }
}

pub fn check_bot_game(setup: &Setup, mut played: Played) -> Result<Played, String> {
    let n = setup.seats();
    if played.cpu_ms.len() != n || played.cpu_us.len() != n || played.stderr.len() != n {
        return Err(format!("figures for other than {n} seats"));
    }
    // Kept bytes read lossily: at most three bytes of text per byte.
    if played.stderr.iter().any(|e| e.len() > 3 * STDERR_KEEP) {
        return Err("more standard error than a referee keeps".into());
    }
    played.transcript = None;
    played.transcript_truncated = false;
    // Moves, if sent, must read as this game's: seats in range, a size a
    // game of the setup can have, and they replay by the rules.
    if let Some(m) = &played.moves {
        if m.len() > MAX_MESSAGE_BYTES {
            return Err("moves longer than a message".into());
        }
        let moves = crate::discipline::transcript::parse_moves(m, n)
            .map_err(|e| format!("the moves: {e}"))?;
        if crate::discipline::play::expand(setup, &moves).is_empty() {
            return Err("moves that replay to nothing".into());
        }
    }
    let seat = |s: usize| -> Result<(), String> {
        if s < n {
            Ok(())
        } else {
            Err(format!("seat {s} in a game of {n}"))
        }
    };
    if let Some(o) = &played.outcome {
        if o.discipline() != setup.discipline() {
            return Err("the outcome of another game".into());
        }
        crate::discipline::registry::of_setup(setup).check_outcome(setup, o, n)?;
    }
    for f in played.failures.iter_mut() {
        seat(f.bot)?;
        let text = match &f.kind {
            BotFailureKind::Rule { rule } => Some(rule),
            BotFailureKind::Output { problem } => Some(problem),
            _ => None,
        };
        if text.is_some_and(|t| !printable(t, MAX_RULE_TEXT))
            || f.line
                .as_deref()
                .is_some_and(|l| !printable(l, SHOWN_LINE_CHARS + 1))
        {
            return Err("a failure's text is too long or not printable".into());
        }
        f.reason = describe_bot_failure(f.bot, f.turn, &f.kind, f.line.as_deref());
    }
    Ok(played)
}

#[cfg(test)]
mod tests;
