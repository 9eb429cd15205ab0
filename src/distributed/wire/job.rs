//! A job ([`JobMessage`]) in binary: what a coordinator of format 8
//! publishes. A KNOBELN game is its identity, three small numbers (which
//! referee configuration and which two programs of the job's tables) and
//! its three seeds: the referee's configuration and the programs' hashes
//! are written once a job, not once a game as the JSON jobs of format 7
//! did (about 40 bytes a game instead of about 600). Bot games, rare and
//! large in kind, travel as their JSON inside the frame.
//! [`JobMessage`]'s `encode`, `decode` and `identity` live here (binary
//! out; binary or JSON in). Pure: bytes in, bytes out; what a job must be to be played
//! (plain names, hashes, finite limits) is checked by
//! [`JobMessage::decode`] on what this module reads, not here.
//!
//! A job is a claim only the coordinator makes, but a worker reads it
//! without trusting it: every length and count is checked against the
//! bytes there are and against [`MAX_GAMES_PER_JOB`] before anything is
//! allocated, so damaged bytes give an error, never a panic or a large
//! allocation.
//!
//! The layout (varints are LEB128, signed ones zigzag first; a text is a
//! varint length and that many bytes):
//!
//! ```text
//! MAGIC (4 bytes)  format (varint)  session (text)  job (text)
//! n (varint), then n games' identities:
//!   tournament (signed varint)  round  group  slot  attempt (varints)
//! kind (1 byte), then
//!   0 (KNOBELN): referees r (varint), r configurations (text: JSON each)
//!                programs p (varint), p SHA-256 (32 bytes each)
//!                per game: referee, P's and Q's program (varints, indices)
//!                          seeds of the game, P and Q (8 bytes each, little-endian)
//!   1 (other):   the n games' plays (text: a JSON array)
//! ```
//!
//! The identities come before what the kind says, so a worker that does
//! not know a kind still finds which games to report as its fault
//! ([`JobMessage::identity`]). A JSON job (format 7's form) starts with `{`
//! and never with [`MAGIC`]; it is read too, but a job of another format
//! is refused for its format.

use super::answer::{put_bytes, unzigzag, Reader};
use serde::Deserialize;

use super::{
    GameIdent, GameJob, JobMessage, Play, Seeds, WireError, FORMAT, MAX_GAMES_PER_JOB,
    MAX_MESSAGE_BYTES,
};
use crate::referee::RefereeConfig;
use crate::store::{put_varint, zigzag};

/// The first bytes of a binary job: a NUL (no JSON text starts so), then
/// `KNJ` (KNOBELN job).
pub const MAGIC: [u8; 4] = *b"\0KNJ";

const KIND_KNOBELN: u8 = 0;
const KIND_JSON: u8 = 1;

/// Whether `bytes` are a binary job (else they are read as JSON).
pub fn is_binary(bytes: &[u8]) -> bool {
    bytes.starts_with(&MAGIC)
}

/// The binary form of `m`, its `format` as it says.
pub fn encode_binary(m: &JobMessage) -> Vec<u8> {
    let mut out = Vec::with_capacity(64 + m.session.len() + m.job.len() + 48 * m.games.len());
    out.extend_from_slice(&MAGIC);
    put_varint(&mut out, u64::from(m.format));
    put_bytes(&mut out, m.session.as_bytes());
    put_bytes(&mut out, m.job.as_bytes());
    put_varint(&mut out, m.games.len() as u64);
    for g in &m.games {
        let g = g.game;
        put_varint(&mut out, zigzag(g.tournament));
        for n in [g.round, g.group, g.slot, g.attempt] {
            put_varint(&mut out, u64::from(n));
        }
    }
    match knobeln_tables(m) {
        Some((referees, programs, refs)) => {
            out.push(KIND_KNOBELN);
            put_varint(&mut out, referees.len() as u64);
            for r in &referees {
                put_bytes(
                    &mut out,
                    &serde_json::to_vec(r).expect("a referee serializes"),
                );
            }
            put_varint(&mut out, programs.len() as u64);
            for p in &programs {
                out.extend_from_slice(p);
            }
            for (g, (r, p, q)) in m.games.iter().zip(refs) {
                let Play::Knobeln { seeds, .. } = &g.play else {
                    unreachable!("knobeln_tables saw only KNOBELN games")
                };
                for i in [r, p, q] {
                    put_varint(&mut out, i as u64);
                }
                for s in [seeds.game, seeds.players[0], seeds.players[1]] {
                    out.extend_from_slice(&s.to_le_bytes());
                }
            }
        }
        None => {
            out.push(KIND_JSON);
            let plays: Vec<&Play> = m.games.iter().map(|g| &g.play).collect();
            put_bytes(
                &mut out,
                &serde_json::to_vec(&plays).expect("a play serializes"),
            );
        }
    }
    out
}

impl JobMessage {
    /// The job as a coordinator of this format sends it: binary
    /// (this module's).
    pub fn encode(&self) -> Vec<u8> {
        encode_binary(self)
    }

    /// The job as JSON (the form of formats up to 7, still read: tests
    /// and tools may write it by hand).
    pub fn encode_json(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("a job serializes")
    }

    /// Reads a job, binary or JSON (told apart by its first bytes), and
    /// checks what a worker relies on: this format, the session and the
    /// job's name are plain names, at least one game and not too many,
    /// all of one kind, program names are hashes, limits are finite.
    pub fn decode(bytes: &[u8]) -> Result<JobMessage, WireError> {
        if bytes.len() > MAX_MESSAGE_BYTES {
            return Err(WireError::TooLarge(bytes.len()));
        }
        let job: JobMessage = if is_binary(bytes) {
            decode_binary(bytes)?
        } else {
            super::decode(bytes)?
        };
        if job.format != FORMAT {
            return Err(WireError::Format(job.format));
        }
        super::check_header(&job.session, &job.job, job.games.len())?;
        let kind = job.games[0].play.discipline();
        for g in &job.games {
            if g.play.discipline() != kind {
                return Err(WireError::Invalid("games of two kinds in one job".into()));
            }
            super::check_play(&g.play)?;
        }
        Ok(job)
    }

    /// The session, name and games of a job that cannot be read as a whole
    /// (a game of a kind this program does not know), if they can be
    /// found: the worker then reports each game as its fault.
    pub fn identity(bytes: &[u8]) -> Option<(String, String, Vec<GameIdent>)> {
        if bytes.len() > MAX_MESSAGE_BYTES {
            return None;
        }
        if is_binary(bytes) {
            let (session, name, games) = binary_identity(bytes)?;
            super::check_header(&session, &name, games.len()).ok()?;
            return Some((session, name, games));
        }
        #[derive(Deserialize)]
        struct Game {
            game: GameIdent,
        }
        #[derive(Deserialize)]
        struct Identity {
            session: String,
            job: String,
            games: Vec<Game>,
        }
        let i: Identity = super::decode(bytes).ok()?;
        super::check_header(&i.session, &i.job, i.games.len()).ok()?;
        Some((
            i.session,
            i.job,
            i.games.into_iter().map(|g| g.game).collect(),
        ))
    }
}

/// Per game: the referee's index and both programs' indices.
type Refs = Vec<(usize, usize, usize)>;

/// The job's referee configurations and programs (as raw hashes), each
/// once, and each game's indices into them; `None` if a game is not a
/// KNOBELN game or a program's name is not a SHA-256 (such a job travels
/// as JSON, to be refused by the worker as it would be refused anyway).
fn knobeln_tables(m: &JobMessage) -> Option<(Vec<RefereeConfig>, Vec<[u8; 32]>, Refs)> {
    let mut referees: Vec<RefereeConfig> = Vec::new();
    let mut programs: Vec<[u8; 32]> = Vec::new();
    let mut index: std::collections::HashMap<[u8; 32], usize> = Default::default();
    let mut refs = Vec::with_capacity(m.games.len());
    for g in &m.games {
        let Play::Knobeln {
            referee,
            programs: names,
            ..
        } = &g.play
        else {
            return None;
        };
        let r = match referees.iter().position(|x| x == referee) {
            Some(i) => i,
            None => {
                referees.push(*referee);
                referees.len() - 1
            }
        };
        let mut ps = [0usize; 2];
        for (k, name) in names.iter().enumerate() {
            let raw = raw_sha256(name)?;
            ps[k] = *index.entry(raw).or_insert_with(|| {
                programs.push(raw);
                programs.len() - 1
            });
        }
        refs.push((r, ps[0], ps[1]));
    }
    Some((referees, programs, refs))
}

/// The 32 bytes of a SHA-256 written as 64 lowercase hex digits.
fn raw_sha256(hex: &str) -> Option<[u8; 32]> {
    if !super::valid_sha256(hex) {
        return None;
    }
    let mut raw = [0u8; 32];
    for (i, b) in raw.iter_mut().enumerate() {
        *b = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(raw)
}

fn hex(raw: &[u8; 32]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(64);
    for b in raw {
        s.push(DIGITS[usize::from(b >> 4)] as char);
        s.push(DIGITS[usize::from(b & 15)] as char);
    }
    s
}

fn unreadable(what: &str) -> WireError {
    WireError::Unreadable(format!("binary job: {what}"))
}

/// Reads a count that must be at most `most`, before anything is
/// allocated for it.
fn count(r: &mut Reader, most: usize, what: &str) -> Result<usize, WireError> {
    let n = r.varint()?;
    if n > most as u64 {
        return Err(WireError::Invalid(format!("{n} {what} in one job")));
    }
    Ok(n as usize)
}

/// An index into a table of `len`.
fn index(r: &mut Reader, len: usize) -> Result<usize, WireError> {
    let i = r.varint()?;
    if i >= len as u64 {
        return Err(unreadable("an index beyond its table"));
    }
    Ok(i as usize)
}

fn u64_le(r: &mut Reader) -> Result<u64, WireError> {
    Ok(u64::from_le_bytes(r.take(8)?.try_into().expect("8 bytes")))
}

/// The frame's format, session, job's name and games' identities; the
/// reader is left at the kind's byte.
fn header<'a>(
    bytes: &'a [u8],
) -> Result<(u32, String, String, Vec<GameIdent>, Reader<'a>), WireError> {
    let mut r = Reader {
        bytes,
        at: MAGIC.len(),
    };
    let format = r.varint()?;
    let format = u32::try_from(format).unwrap_or(u32::MAX);
    let session = r.text()?.to_string();
    let job = r.text()?.to_string();
    let n = count(&mut r, MAX_GAMES_PER_JOB, "games")?;
    let mut games = Vec::with_capacity(n);
    for _ in 0..n {
        let tournament = unzigzag(r.varint()?);
        let mut ns = [0u32; 4];
        for x in &mut ns {
            *x = u32::try_from(r.varint()?).map_err(|_| unreadable("a game's number"))?;
        }
        games.push(GameIdent {
            tournament,
            round: ns[0],
            group: ns[1],
            slot: ns[2],
            attempt: ns[3],
        });
    }
    Ok((format, session, job, games, r))
}

/// The session, name and games of a binary job, whatever its kind and
/// format (for [`JobMessage::identity`]).
pub fn binary_identity(bytes: &[u8]) -> Option<(String, String, Vec<GameIdent>)> {
    let (_, session, job, games, _) = header(bytes).ok()?;
    Some((session, job, games))
}

/// Reads a binary job (`bytes` start with [`MAGIC`]). Whatever the bytes,
/// an error, never a panic, and nothing allocated beyond what the bytes
/// and [`MAX_GAMES_PER_JOB`] allow. A job of another format is refused for
/// its format before its games are read.
pub fn decode_binary(bytes: &[u8]) -> Result<JobMessage, WireError> {
    let (format, session, job, idents, mut r) = header(bytes)?;
    if format != FORMAT {
        return Err(WireError::Format(format));
    }
    let plays: Vec<Play> = match r.byte()? {
        KIND_KNOBELN => {
            let n_ref = count(&mut r, idents.len(), "referee configurations")?;
            let mut referees = Vec::with_capacity(n_ref);
            for _ in 0..n_ref {
                let c: RefereeConfig = serde_json::from_slice(r.bytes()?)
                    .map_err(|e| WireError::Unreadable(format!("a referee: {e}")))?;
                referees.push(c);
            }
            let n_prog = count(&mut r, 2 * idents.len(), "programs")?;
            let mut programs = Vec::with_capacity(n_prog);
            for _ in 0..n_prog {
                let raw: [u8; 32] = r.take(32)?.try_into().expect("32 bytes");
                programs.push(hex(&raw));
            }
            let mut plays = Vec::with_capacity(idents.len());
            for _ in 0..idents.len() {
                let referee = referees[index(&mut r, referees.len())?];
                let p = index(&mut r, programs.len())?;
                let q = index(&mut r, programs.len())?;
                let seeds = Seeds {
                    game: u64_le(&mut r)?,
                    players: [u64_le(&mut r)?, u64_le(&mut r)?],
                };
                plays.push(Play::Knobeln {
                    referee,
                    programs: [programs[p].clone(), programs[q].clone()],
                    seeds,
                });
            }
            plays
        }
        KIND_JSON => {
            let plays: Vec<Play> = serde_json::from_slice(r.bytes()?)
                .map_err(|e| WireError::Unreadable(format!("the games: {e}")))?;
            if plays.len() != idents.len() {
                return Err(unreadable("another number of games than identities"));
            }
            plays
        }
        k => return Err(unreadable(&format!("a job of kind {k}"))),
    };
    if r.at != bytes.len() {
        return Err(unreadable("bytes after the last game"));
    }
    Ok(JobMessage {
        format,
        session,
        job,
        games: idents
            .into_iter()
            .zip(plays)
            .map(|(game, play)| GameJob { game, play })
            .collect(),
    })
}
