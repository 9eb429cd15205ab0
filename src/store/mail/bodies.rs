//! The outbox's shared bodies (schema 0022): a part of a mail that many
//! mails carry (LAP's list to every team, a group's GRG and GRR to each
//! member, the final results to everyone) is stored once, by its SHA-256,
//! and cut out of each row's raw bytes (or left out of them when the mail
//! was built: [`split_after`]); reading a row puts its parts back,
//! so the bytes sent are exactly the bytes built when it was queued.
//!
//! Not here: which parts a mail offers for sharing (`outbox::outgoing`:
//! its text and attachments as encoded), when mails are queued or sent
//! (`outbox`, `mail::delivery`).

use rusqlite::{params, Connection, OptionalExtension};

use crate::store::Result;

/// A part of a mail offered for sharing: its bytes as they stand in the
/// raw mail (encoded), and their SHA-256.
#[derive(Debug, Clone, Copy)]
pub struct SharedPart<'a> {
    pub bytes: &'a [u8],
    pub sha256: &'a [u8; 32],
}

/// The smallest part stored apart (a smaller one stays in its row: the
/// body's row and index entries would cost more than it saves).
pub const MIN_SHARED_BYTES: usize = 1024;

/// A cut: the part `part` of the list goes back in at `at` of the rest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cut {
    pub at: usize,
    pub part: usize,
}

/// `raw` with each of `parts` (of at least [`MIN_SHARED_BYTES`]) cut out
/// where it stands, each after the one before (a part not found stays in
/// place): the rest and where each part goes back in. [`join`] of the two
/// is `raw`, byte for byte.
pub fn split(raw: &[u8], parts: &[SharedPart<'_>]) -> (Vec<u8>, Vec<Cut>) {
    let mut rest = Vec::with_capacity(raw.len().min(4096));
    let mut cuts = Vec::new();
    let mut from = 0;
    for (i, p) in parts.iter().enumerate() {
        if p.bytes.len() < MIN_SHARED_BYTES {
            continue;
        }
        let Some(found) = find(&raw[from..], p.bytes) else {
            continue;
        };
        let start = from + found;
        rest.extend_from_slice(&raw[from..start]);
        cuts.push(Cut {
            at: rest.len(),
            part: i,
        });
        from = start + p.bytes.len();
    }
    rest.extend_from_slice(&raw[from..]);
    (rest, cuts)
}

/// [`split`] of a mail built without its first part: `raw` lacks
/// `parts[0]` (of any size: it is not in `raw` to stay there), which goes
/// back in at `at`; the other parts are cut out of what follows. Costs
/// the bytes of `raw`, not of the part left out.
pub fn split_after(raw: &[u8], at: usize, parts: &[SharedPart<'_>]) -> (Vec<u8>, Vec<Cut>) {
    let at = at.min(raw.len());
    let (tail, more) = split(&raw[at..], parts.get(1..).unwrap_or_default());
    let mut rest = Vec::with_capacity(at + tail.len());
    rest.extend_from_slice(&raw[..at]);
    rest.extend_from_slice(&tail);
    let mut cuts = vec![Cut { at, part: 0 }];
    cuts.extend(more.into_iter().map(|c| Cut {
        at: at + c.at,
        part: c.part + 1,
    }));
    (rest, cuts)
}

/// Where `needle` stands in `hay`. A mail's body stands at its end
/// (before at most a line end; a multipart's last part before its closing
/// boundary): tried first, then the first place it stands. Either place
/// is right to cut; one rule keeps the split the same for the same mail.
fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    let n = needle.len();
    for tail in [0usize, 2] {
        if let Some(at) = hay.len().checked_sub(n + tail) {
            if &hay[at..at + n] == needle {
                return Some(at);
            }
        }
    }
    // Searched by its first bytes, each place they stand compared whole:
    // the first place the whole part stands, as `memmem::find` would say,
    // without a searcher built for all of a large needle (an attachment of
    // tens of kB, once per mail).
    const PREFIX: usize = 64;
    if n <= PREFIX {
        return memchr::memmem::find(hay, needle);
    }
    // Where the first bytes first stand is almost always the part's
    // place. After a near miss the rest is searched whole, from the byte
    // after it: the next places of the first bytes may overlap the near
    // miss (first bytes with a period, as a run of one byte), and a search
    // that skips overlaps did not find the part; a whole search stays
    // linear in the mail whatever its bytes.
    let at = memchr::memmem::find(hay, &needle[..PREFIX])?;
    if hay.get(at..at + n) == Some(needle) {
        return Some(at);
    }
    memchr::memmem::find(&hay[at + 1..], needle).map(|i| at + 1 + i)
}

/// `rest` with `parts` put back at their cuts (in order).
pub fn join(rest: &[u8], cuts: &[(usize, Vec<u8>)]) -> Vec<u8> {
    let total = rest.len() + cuts.iter().map(|(_, b)| b.len()).sum::<usize>();
    let mut out = Vec::with_capacity(total);
    let mut from = 0;
    for (at, bytes) in cuts {
        let at = (*at).clamp(from, rest.len());
        out.extend_from_slice(&rest[from..at]);
        out.extend_from_slice(bytes);
        from = at;
    }
    out.extend_from_slice(&rest[from..]);
    out
}

/// Stores the cut parts of outbox row `outbox_id` (each body once).
pub fn store_parts(
    conn: &Connection,
    outbox_id: i64,
    parts: &[SharedPart<'_>],
    cuts: &[Cut],
) -> Result<()> {
    store_parts_noting(conn, outbox_id, parts, cuts, &mut Vec::new())
}

/// [`store_parts`], noting in `new_bodies` the bodies it stored (not
/// stored before), even when it fails.
pub fn store_parts_noting(
    conn: &Connection,
    outbox_id: i64,
    parts: &[SharedPart<'_>],
    cuts: &[Cut],
    new_bodies: &mut Vec<i64>,
) -> Result<()> {
    for (seq, cut) in cuts.iter().enumerate() {
        let part = &parts[cut.part];
        let known: Option<i64> = conn
            .prepare_cached("SELECT id FROM outbox_bodies WHERE sha256 = ?1")?
            .query_row([&part.sha256[..]], |r| r.get(0))
            .optional()?;
        let body_id = match known {
            Some(id) => id,
            None => {
                conn.prepare_cached("INSERT INTO outbox_bodies (sha256, bytes) VALUES (?1, ?2)")?
                    .execute(params![&part.sha256[..], part.bytes])?;
                new_bodies.push(conn.last_insert_rowid());
                conn.last_insert_rowid()
            }
        };
        conn.prepare_cached(
            "INSERT INTO outbox_parts (outbox_id, seq, at, body_id) VALUES (?1, ?2, ?3, ?4)",
        )?
        .execute(params![outbox_id, seq as i64, cut.at as i64, body_id])?;
    }
    Ok(())
}

/// The whole mail of outbox row `outbox_id` whose own bytes are `rest`:
/// its parts put back (a row without parts is whole already).
pub fn assemble(conn: &Connection, outbox_id: i64, rest: Vec<u8>) -> Result<Vec<u8>> {
    let mut st = conn.prepare_cached(
        "SELECT p.at, b.bytes FROM outbox_parts p JOIN outbox_bodies b ON b.id = p.body_id
         WHERE p.outbox_id = ?1 ORDER BY p.seq",
    )?;
    let cuts = st
        .query_map([outbox_id], |r| {
            Ok((r.get::<_, i64>(0)? as usize, r.get::<_, Vec<u8>>(1)?))
        })?
        .collect::<std::result::Result<Vec<_>, _>>()?;
    if cuts.is_empty() {
        return Ok(rest);
    }
    Ok(join(&rest, &cuts))
}

/// Rewrites outbox row `outbox_id` as `raw` (its sealed form): each body
/// the row carried that still stands in `raw` byte for byte is cut out
/// again and stays shared (an acceptance's kit files, sealing masked only
/// the string in its text); one that does not (sealing changed it: a
/// secret in a shared text, or a dropped body) is no part of the row any
/// more, and a body no row refers to is deleted: a sealed mail's secret
/// does not stay behind in a shared body. Returns the row's own bytes.
pub fn reshare(conn: &Connection, outbox_id: i64, raw: &[u8]) -> Result<Vec<u8>> {
    let old: Vec<(i64, Vec<u8>, Vec<u8>)> = conn
        .prepare_cached(
            "SELECT b.id, b.sha256, b.bytes FROM outbox_parts p JOIN outbox_bodies b ON b.id = p.body_id
             WHERE p.outbox_id = ?1 ORDER BY p.seq",
        )?
        .query_map([outbox_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<std::result::Result<_, _>>()?;
    if old.is_empty() {
        return Ok(raw.to_vec());
    }
    let hashes: Vec<[u8; 32]> = old
        .iter()
        .map(|(_, sha, _)| <[u8; 32]>::try_from(sha.as_slice()).unwrap_or([0; 32]))
        .collect();
    let parts: Vec<SharedPart<'_>> = old
        .iter()
        .zip(&hashes)
        .map(|((_, _, bytes), sha256)| SharedPart { bytes, sha256 })
        .collect();
    let (rest, cuts) = split(raw, &parts);
    conn.execute("DELETE FROM outbox_parts WHERE outbox_id = ?1", [outbox_id])?;
    // The bodies still carried are found by their hash: the same rows.
    store_parts(conn, outbox_id, &parts, &cuts)?;
    for (body, _, _) in &old {
        conn.execute(
            "DELETE FROM outbox_bodies WHERE id = ?1
             AND NOT EXISTS (SELECT 1 FROM outbox_parts WHERE body_id = ?1)",
            [body],
        )?;
    }
    Ok(rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part<'a>(bytes: &'a [u8], sha: &'a [u8; 32]) -> SharedPart<'a> {
        SharedPart { bytes, sha256: sha }
    }

    fn roundtrip(raw: &[u8], parts: &[SharedPart<'_>]) -> (Vec<u8>, Vec<Cut>) {
        let (rest, cuts) = split(raw, parts);
        let back: Vec<(usize, Vec<u8>)> = cuts
            .iter()
            .map(|c| (c.at, parts[c.part].bytes.to_vec()))
            .collect();
        assert_eq!(join(&rest, &back), raw);
        (rest, cuts)
    }

    /// A mail built without its first part: that part goes back in where
    /// it was left out (whatever its size), the others are cut out of what
    /// follows it, and the join is the whole mail.
    #[test]
    fn a_part_left_out_when_built_goes_back_where_it_was_left_out() {
        let sha = [0u8; 32];
        let body = vec![b'x'; 2000];
        let att = vec![b'y'; 1500];
        let head = b"Subject: a\r\n\r\n".to_vec();
        let mut tail = b"\r\n--b\r\n\r\n".to_vec();
        tail.extend_from_slice(&att);
        tail.extend_from_slice(b"\r\n--b--\r\n");
        let whole = [&head[..], &body, &tail].concat();
        let parts = [part(&body, &sha), part(&att, &sha)];
        let (rest, cuts) = split_after(&[&head[..], &tail].concat(), head.len(), &parts);
        assert_eq!((rest.clone(), cuts.clone()), split(&whole, &parts));
        let back: Vec<(usize, Vec<u8>)> = cuts
            .iter()
            .map(|c| (c.at, parts[c.part].bytes.to_vec()))
            .collect();
        assert_eq!(join(&rest, &back), whole);
        // A small first part goes back in too; nothing else to cut.
        let (rest, cuts) = split_after(b"H: 1\r\n\r\n\r\n", 8, &[part(b"hi", &sha)]);
        assert_eq!(cuts, vec![Cut { at: 8, part: 0 }]);
        assert_eq!(join(&rest, &[(8, b"hi".to_vec())]), b"H: 1\r\n\r\nhi\r\n");
    }

    /// A large part is found by its first bytes, then compared whole:
    /// the same place `memmem::find` gives, its first bytes standing
    /// earlier too (a near miss) or not at all.
    #[test]
    fn a_large_part_is_found_where_memmem_finds_it() {
        let needle: Vec<u8> = (0..3000u32).map(|i| (i % 251) as u8).collect();
        let mut near = needle[..2000].to_vec();
        near.push(7);
        for hay in [
            [&b"head"[..], &near, &needle, b"\r\n--b--\r\n"].concat(),
            [&near[..], b"tail"].concat(),
            [&needle[..], &needle, b"x"].concat(),
        ] {
            assert_eq!(find(&hay, &needle), memchr::memmem::find(&hay, &needle));
        }
        // A part whose first bytes repeat, standing one byte after a near
        // miss that overlaps it (the near miss's first bytes hide it from
        // a search for non-overlapping places).
        let needle = [vec![b'A'; 100], b"B".to_vec()].concat();
        for hay in [
            [&b"A"[..], &needle, b"\r\n--b--\r\n"].concat(),
            [&b"xAAAAAAAAAA"[..], &needle, b"tail of more than two"].concat(),
        ] {
            assert!(memchr::memmem::find(&hay, &needle).is_some());
            assert_eq!(find(&hay, &needle), memchr::memmem::find(&hay, &needle));
        }
        // First bytes that repeat, the part one byte after a place its
        // first bytes stand too, overlapping it.
        let needle = [vec![b'A'; 100], vec![b'B'; 1000]].concat();
        for hay in [
            [&b"A"[..], &needle, b"tail of the mail"].concat(),
            [&[b'A'; 70][..], &needle, b"tail of the mail"].concat(),
        ] {
            assert!(memchr::memmem::find(&hay, &needle).is_some());
            assert_eq!(find(&hay, &needle), memchr::memmem::find(&hay, &needle));
        }
    }

    /// A part is cut where it stands, a small or missing one stays, and
    /// the join gives the raw mail back byte for byte.
    #[test]
    fn a_split_mail_joins_back_to_its_bytes() {
        let sha = [0u8; 32];
        let body = vec![b'x'; 2000];
        let att = vec![b'y'; 1500];
        let mut raw = b"Subject: a\r\n\r\n".to_vec();
        raw.extend_from_slice(&body);
        raw.extend_from_slice(b"\r\n--b\r\n\r\n");
        raw.extend_from_slice(&att);
        raw.extend_from_slice(b"\r\n--b--\r\n");
        let (rest, cuts) = roundtrip(&raw, &[part(&body, &sha), part(&att, &sha)]);
        assert_eq!(rest.len(), raw.len() - 3500);
        assert_eq!(cuts.len(), 2);
        assert_eq!(cuts[0].at, b"Subject: a\r\n\r\n".len());
        // A single part at the end, with and without a line end after it.
        let mut single = b"H: 1\r\n\r\n".to_vec();
        single.extend_from_slice(&body);
        let (rest, _) = roundtrip(&single, &[part(&body, &sha)]);
        assert_eq!(rest, b"H: 1\r\n\r\n");
        single.extend_from_slice(b"\r\n");
        roundtrip(&single, &[part(&body, &sha)]);
        // Too small, or not in the mail: left in place.
        let (rest, cuts) = roundtrip(&raw, &[part(b"Subject", &sha), part(&[b'z'; 1100], &sha)]);
        assert_eq!((rest, cuts), (raw.clone(), vec![]));
        // A body standing twice: the one at the end is cut, else the
        // first.
        let mut twice = body.clone();
        twice.extend_from_slice(&body);
        let (rest, cuts) = roundtrip(&twice, &[part(&body, &sha)]);
        assert_eq!((rest.len(), cuts[0].at), (2000, 2000));
        twice.extend_from_slice(b"\r\n--end--\r\n");
        let (rest, cuts) = roundtrip(&twice, &[part(&body, &sha)]);
        assert_eq!((rest.len(), cuts[0].at), (2011, 0));
    }
}
