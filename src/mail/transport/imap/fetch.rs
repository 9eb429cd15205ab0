//! Fetching from the contest's mailbox: the mails after the caller's
//! position ([`ImapPoller::fetch_new`]), whole or, over the size cap, as
//! their header part; a message the server does not deliver becomes
//! [`ImapError::BrokenFetch`], never "no mail"; flagging a stored mail
//! `\Seen`, removing one stored whole, finding those a take-in left
//! behind; and [`read_mailbox`] for tests and the benchmark.
//!
//! Not here: the session itself (`session.rs`) and remembering the
//! position (the caller's).

use std::collections::HashMap;

use super::error::{map_err, ImapError};
use super::session::{with_session, Conn, ImapPoller};
use crate::config::{self, ImapConfig, TlsMode};

/// One mail as it lies in the mailbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetched {
    /// The mailbox's UIDVALIDITY when the mail was fetched.
    pub uidvalidity: u32,
    pub uid: u32,
    /// The full RFC 5322 message as the server serves it (CRLF line ends),
    /// including the trace headers the mail system added on delivery; only
    /// its header part when `full_size` is set.
    pub raw: Vec<u8>,
    /// `Some(size)`: the server said the mail has `size` bytes, more than
    /// the size cap, so only its header part was downloaded.
    pub full_size: Option<u64>,
}

/// How fetching one message's bytes went.
enum FetchOne {
    Got(Vec<u8>),
    /// The server answered, without the bytes: why.
    Broken(String),
    /// The connection broke (which some servers do on a message they
    /// cannot read: Dovecot sends `BYE` and hangs up).
    Lost(ImapError),
}

impl ImapPoller {
    /// Mails with UID > `after_uid` in the configured mailbox (all of them
    /// when the mailbox's UIDVALIDITY differs from `known_uidvalidity`, or
    /// that is `None`), in UID order, at most `max` per call, each with its
    /// full raw RFC 5322 bytes (`BODY.PEEK[]`: nothing is marked seen by
    /// fetching). Returns the mailbox's current UIDVALIDITY with them.
    ///
    /// A mail the server does not deliver (no data, zero bytes, FETCH
    /// refused, or the server hangs up on it twice in a row while the rest
    /// works) is an error, never "no mail": when it is the first new mail,
    /// the result is [`ImapError::BrokenFetch`] naming its UID; when good
    /// mails come before it, those are returned and the broken one is left
    /// for the next call. So the UID of a `BrokenFetch` is always the first
    /// mail after the caller's position, and every mail before it has been
    /// returned by an earlier call. Likewise, when the connection fails
    /// after some mails were fetched, those are returned and the error
    /// comes with the next call.
    /// From now on, a mail the server says is larger than `cap` bytes is
    /// not downloaded: only its header part and its size are fetched.
    pub fn set_size_cap(&mut self, cap: usize) {
        self.size_cap = Some(cap);
    }

    /// The sizes the server gives for `set`, and which of them are over
    /// the cap (none without a cap, or when the server will not say).
    fn oversized(&mut self, set: &str) -> HashMap<u32, u64> {
        let Some(cap) = self.size_cap else {
            return HashMap::new();
        };
        let Ok(session) = self.session() else {
            return HashMap::new();
        };
        let sizes = with_session!(session, s => {
            s.uid_fetch(set, "(UID RFC822.SIZE)").map(|fetches| {
                fetches
                    .iter()
                    .filter_map(|f| Some((f.uid?, u64::from(f.size?))))
                    .filter(|&(_, size)| size > cap as u64)
                    .collect::<HashMap<u32, u64>>()
            })
        });
        sizes.unwrap_or_default()
    }

    pub fn fetch_new(
        &mut self,
        known_uidvalidity: Option<u32>,
        after_uid: u32,
        max: usize,
    ) -> Result<(u32, Vec<Fetched>), ImapError> {
        let (uidvalidity, exists) = self.select()?;
        let first = if known_uidvalidity == Some(uidvalidity) {
            match after_uid.checked_add(1) {
                Some(u) => u,
                None => return Ok((uidvalidity, Vec::new())),
            }
        } else {
            1
        };
        if exists == 0 || max == 0 {
            return Ok((uidvalidity, Vec::new()));
        }
        let addr = self.addr.clone();
        let mut uids: Vec<u32> = with_session!(self.session()?, s => {
            s.uid_search(format!("UID {first}:*"))
        })
        .map_err(|e| self.failed(e))?
        .into_iter()
        // `n:*` also matches the highest UID when that is below n.
        .filter(|&u| u >= first)
        .collect();
        uids.sort_unstable();
        uids.truncate(max);
        if uids.is_empty() {
            return Ok((uidvalidity, Vec::new()));
        }

        let mut out = Vec::with_capacity(uids.len());
        let fetched = |uid, raw| Fetched {
            uidvalidity,
            uid,
            raw,
            full_size: None,
        };
        let set_of = |uids: &mut dyn Iterator<Item = &u32>| {
            uids.map(u32::to_string).collect::<Vec<_>>().join(",")
        };
        let set = set_of(&mut uids.iter());
        // A mail over the size cap: its header part only (the size is the
        // server's word; the inbox caps what it stores anyway).
        let oversized = self.oversized(&set);
        if !oversized.is_empty() {
            let large = set_of(&mut uids.iter().filter(|u| oversized.contains_key(u)));
            let heads = with_session!(self.session()?, s => {
                s.uid_fetch(&large, "(UID BODY.PEEK[HEADER])").map(|fetches| {
                    fetches
                        .iter()
                        .filter_map(|f| Some((f.uid?, f.header()?.to_vec())))
                        .collect::<HashMap<u32, Vec<u8>>>()
                })
            })
            .map_err(|e| self.failed(e))?;
            let mut heads = heads;
            for &uid in &uids {
                let Some(&size) = oversized.get(&uid) else {
                    break;
                };
                // Only a leading run of large mails here, so that the
                // order of the batch stays the order of the UIDs.
                out.push(Fetched {
                    uidvalidity,
                    uid,
                    raw: heads.remove(&uid).unwrap_or_default(),
                    full_size: Some(size),
                });
            }
            if !out.is_empty() {
                return Ok((uidvalidity, out));
            }
            // The first mail is small: the batch ends before the first
            // large one.
            let first_large = uids
                .iter()
                .position(|u| oversized.contains_key(u))
                .unwrap_or(uids.len());
            uids.truncate(first_large);
        }
        // All at once, as it nearly always goes.
        let set = set_of(&mut uids.iter());
        let batch = with_session!(self.session()?, s => {
            s.uid_fetch(&set, "(UID BODY.PEEK[])").map(|fetches| {
                fetches
                    .iter()
                    .filter_map(|f| Some((f.uid?, f.body()?.to_vec())))
                    .collect::<HashMap<u32, Vec<u8>>>()
            })
        });
        match batch {
            Ok(mut bodies) => {
                for &uid in &uids {
                    match bodies.remove(&uid) {
                        Some(raw) if !raw.is_empty() => out.push(fetched(uid, raw)),
                        Some(_) => {
                            return broken(
                                out,
                                uidvalidity,
                                uid,
                                "the server sent an empty message",
                            )
                        }
                        None => {
                            return broken(out, uidvalidity, uid, "the server sent no message data")
                        }
                    }
                }
                return Ok((uidvalidity, out));
            }
            Err(imap::Error::No(_) | imap::Error::Bad(_) | imap::Error::Parse(_)) => {}
            Err(e) => {
                let e = map_err(e, &addr);
                if !matches!(e, ImapError::Connect(_)) {
                    return Err(e);
                }
                self.drop_connection();
            }
        }
        // Something is wrong with one of them: one by one, to find it.
        for &uid in &uids {
            match self.fetch_one_twice(uid, uidvalidity) {
                Ok(FetchOne::Got(raw)) => out.push(fetched(uid, raw)),
                Ok(FetchOne::Broken(why)) => return broken(out, uidvalidity, uid, &why),
                Ok(FetchOne::Lost(e)) => {
                    let why = format!("the server hangs up whenever it is fetched ({e})");
                    return broken(out, uidvalidity, uid, &why);
                }
                Err(_) if !out.is_empty() => break,
                Err(e) => return Err(e),
            }
        }
        Ok((uidvalidity, out))
    }

    /// After the mail is safely stored: flags it `\Seen`. It stays in the
    /// mailbox until [`ImapPoller::remove_taken`] removes it (`imap.keep_days`
    /// after it arrived).
    pub fn mark_stored(&mut self, uid: u32) -> Result<(), ImapError> {
        self.store_flags(&uid.to_string(), "+FLAGS.SILENT (\\Seen)")
    }

    /// Removes from the mailbox the mails at or below `upto` (the position
    /// whose rows have committed: never a mail the server has not taken
    /// in) that arrived before `arrived_before` (IMAP's `BEFORE`: the
    /// server's arrival date, whole days; `None`: whatever their date).
    /// Each is flagged `\Seen \Deleted` and expunged by its UID (`UID
    /// EXPUNGE`, RFC 4315), so that no other mail flagged `\Deleted` goes
    /// with them; a server without UIDPLUS keeps them flagged. Nothing when
    /// the mailbox's UIDVALIDITY is not `uidvalidity` (those UIDs name
    /// other mails). Returns how many were flagged.
    pub fn remove_taken(
        &mut self,
        uidvalidity: u32,
        upto: u32,
        arrived_before: Option<chrono::NaiveDate>,
    ) -> Result<usize, ImapError> {
        // The take-in has just selected the mailbox (`fetch_new`): not
        // again (one command more per take-in, not two).
        let (v, exists) = if self.selected && self.conn.is_some() {
            self.selected_as
        } else {
            self.select()?
        };
        if v != uidvalidity || exists == 0 || upto == 0 {
            return Ok(0);
        }
        let query = match arrived_before {
            Some(day) => format!("UID 1:{upto} BEFORE {}", day.format("%-d-%b-%Y")),
            None => format!("UID 1:{upto}"),
        };
        let r = with_session!(self.session()?, s => { s.uid_search(&query) });
        let mut uids: Vec<u32> = r
            .map_err(|e| self.failed(e))?
            .into_iter()
            .filter(|&u| u <= upto)
            .collect();
        if uids.is_empty() {
            return Ok(0);
        }
        uids.sort_unstable();
        let expunge = self.has_uidplus()?;
        for set in uid_sets(&uids) {
            self.store_flags(&set, "+FLAGS.SILENT (\\Seen \\Deleted)")?;
            if expunge {
                let r = with_session!(self.session()?, s => {
                    s.uid_expunge(&set).map(drop)
                });
                r.map_err(|e| self.failed(e))?;
            }
        }
        Ok(uids.len())
    }

    fn store_flags(&mut self, uids: &str, flags: &str) -> Result<(), ImapError> {
        if !self.selected || self.conn.is_none() {
            self.select()?;
        }
        let r = with_session!(self.session()?, s => {
            s.uid_store(uids, flags).map(drop)
        });
        r.map_err(|e| self.failed(e))
    }

    /// Whether the server announced UIDPLUS (asked once per connection).
    fn has_uidplus(&mut self) -> Result<bool, ImapError> {
        self.session()?;
        if let Some(known) = self.uidplus_capability {
            return Ok(known);
        }
        let r = with_session!(self.session()?, s => {
            s.capabilities().map(|c| c.has_str("UIDPLUS"))
        });
        let has = r.map_err(|e| self.failed(e))?;
        self.uidplus_capability = Some(has);
        Ok(has)
    }

    /// One message's bytes; when the connection breaks on it, once more on
    /// a new connection (`Lost` when that breaks too). `Err` when the
    /// connection cannot be set up again or the mailbox changed meanwhile.
    fn fetch_one_twice(&mut self, uid: u32, uidvalidity: u32) -> Result<FetchOne, ImapError> {
        let mut last = None;
        for _ in 0..2 {
            if self.conn.is_none() || !self.selected {
                let (v, _) = self.select()?;
                if v != uidvalidity {
                    return Err(ImapError::Protocol(format!(
                        "{}: the UIDVALIDITY of {:?} changed while fetching",
                        self.addr, self.cfg.mailbox
                    )));
                }
            }
            let r = with_session!(self.session()?, s => {
                s.uid_fetch(uid.to_string(), "(UID BODY.PEEK[])").map(|fetches| {
                    fetches
                        .iter()
                        .find(|f| f.uid == Some(uid) && f.body().is_some())
                        .and_then(|f| f.body())
                        .map(<[u8]>::to_vec)
                })
            });
            match r {
                Ok(Some(raw)) if !raw.is_empty() => return Ok(FetchOne::Got(raw)),
                Ok(Some(_)) => {
                    return Ok(FetchOne::Broken("the server sent an empty message".into()))
                }
                Ok(None) => return Ok(FetchOne::Broken("the server sent no message data".into())),
                Err(e @ (imap::Error::No(_) | imap::Error::Bad(_) | imap::Error::Parse(_))) => {
                    return Ok(FetchOne::Broken(format!("FETCH failed: {e}")))
                }
                Err(e) => {
                    let e = self.failed(e);
                    if !matches!(e, ImapError::Connect(_)) {
                        return Err(e);
                    }
                    last = Some(e);
                }
            }
        }
        Ok(FetchOne::Lost(last.expect("two attempts failed")))
    }
}

/// Sorted UIDs as IMAP sequence sets (`1:5,7,9:12`), runs of consecutive
/// UIDs as ranges, at most 200 runs a set so that no command line grows
/// with the mailbox.
fn uid_sets(sorted: &[u32]) -> Vec<String> {
    const RUNS_A_SET: usize = 200;
    let mut runs: Vec<(u32, u32)> = Vec::new();
    for &u in sorted {
        match runs.last_mut() {
            Some((_, last)) if u == last.saturating_add(1) || u == *last => *last = u,
            _ => runs.push((u, u)),
        }
    }
    runs.chunks(RUNS_A_SET)
        .map(|chunk| {
            chunk
                .iter()
                .map(|&(a, b)| {
                    if a == b {
                        a.to_string()
                    } else {
                        format!("{a}:{b}")
                    }
                })
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect()
}

/// The mails before a broken one, or the error naming it when it is the
/// first.
fn broken(
    out: Vec<Fetched>,
    uidvalidity: u32,
    uid: u32,
    why: &str,
) -> Result<(u32, Vec<Fetched>), ImapError> {
    match out.first() {
        Some(m) => Ok((m.uidvalidity, out)),
        None => Err(ImapError::BrokenFetch {
            uidvalidity,
            uid,
            why: why.to_string(),
        }),
    }
}

/// Reads every mail of `user`'s INBOX over plain IMAP, in UID order, without
/// marking anything seen: for tests that look into a participant's mailbox
/// (as on the local stack of `deploy/mailstack.sh`).
pub fn read_mailbox(
    host: &str,
    port: u16,
    user: &str,
    password: &str,
) -> Result<Vec<Vec<u8>>, ImapError> {
    let cfg = ImapConfig {
        host: host.to_string(),
        port,
        tls: TlsMode::None,
        user: user.to_string(),
        password: Some(password.to_string()),
        password_file: None,
        mailbox: "INBOX".to_string(),
        poll_secs: 1,
        idle: false,
        idle_renew_secs: config::DEFAULT_IDLE_RENEW_SECS,
        keep_days: config::DEFAULT_KEEP_DAYS,
    };
    let mut poller = ImapPoller::connect(&cfg)?;
    let (_, mails) = poller.fetch_new(None, 0, usize::MAX)?;
    poller.logout();
    Ok(mails.into_iter().map(|m| m.raw).collect())
}

#[cfg(test)]
mod tests {
    use super::uid_sets;

    #[test]
    fn uids_become_ranges_in_sets_of_at_most_200_runs() {
        assert!(uid_sets(&[]).is_empty());
        assert_eq!(uid_sets(&[1, 2, 3, 5, 7, 8, 8, 9, 12]), ["1:3,5,7:9,12"]);
        let every_other: Vec<u32> = (1..=801).step_by(2).collect();
        let sets = uid_sets(&every_other);
        assert_eq!(sets.len(), 3);
        assert_eq!(sets[0].split(',').count(), 200);
        assert!(sets[2] == "801");
        assert_eq!(
            uid_sets(&[u32::MAX - 1, u32::MAX]),
            [format!("{}:{}", u32::MAX - 1, u32::MAX)]
        );
    }
}
