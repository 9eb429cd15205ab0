//! The full format people read ([`format_full`], [`format_all`]): one
//! line per throw with the winner, the points and both running totals
//! (computed with the game's `judge`), then the points and the failures;
//! the kit's `protocolfmt.c` prints exactly the same text.
//!
//! Not here: the compact format (`encode.rs`, `decode.rs`).

use std::fmt::Write as _;

use super::model::GameProtocol;
use crate::game::knobeln::{judge, Player};

fn label(player: usize) -> String {
    match player {
        0 => "P".to_string(),
        1 => "Q".to_string(),
        n => format!("player {n}"),
    }
}

/// The full format: a header, one line per throw (number, P's and Q's
/// throw, winner, the winner's points, running totals of P and Q), then the
/// points and the failures.
pub fn format_full(p: &GameProtocol) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "KNOBELN game protocol (version {})", p.version);
    let _ = writeln!(out, "P: {}", p.players[0]);
    let _ = writeln!(out, "Q: {}", p.players[1]);
    let _ = writeln!(
        out,
        "round {}, group {}, slot {}, attempt {}, seed {}",
        p.round, p.group, p.slot, p.attempt, p.seed
    );
    let _ = writeln!(
        out,
        "rules: a {}, b {}, k {}, L {}",
        p.params.a, p.params.b, p.params.k, p.params.l
    );
    out.push('\n');
    let _ = writeln!(
        out,
        "{:>5} {:>6} {:>6} {:>3} {:>4} {:>8} {:>8}",
        "throw", "P", "Q", "won", "pts", "total P", "total Q"
    );
    let mut total = [0u64; 2];
    for (i, t) in p.throws.iter().enumerate() {
        let o = judge(t[0], t[1]);
        let pts = o.points_of();
        total[0] += pts[0] as u64;
        total[1] += pts[1] as u64;
        let won = match o.winner {
            Some(Player::P) => "P",
            Some(Player::Q) => "Q",
            None => "-",
        };
        let _ = writeln!(
            out,
            "{:>5} {:>6} {:>6} {:>3} {:>4} {:>8} {:>8}",
            i + 1,
            t[0],
            t[1],
            won,
            o.points,
            total[0],
            total[1]
        );
    }
    out.push('\n');
    let _ = writeln!(
        out,
        "{} throws; points: P {}, Q {}",
        p.throws.len(),
        p.points[0],
        p.points[1]
    );
    if total != p.points {
        let _ = writeln!(
            out,
            "(but the throws add up to P {}, Q {})",
            total[0], total[1]
        );
    }
    if p.failures.is_empty() {
        out.push_str("no failure\n");
    }
    for f in &p.failures {
        let who = match p.players.get(f.player) {
            Some(name) => format!("{} ({name})", label(f.player)),
            None => label(f.player),
        };
        let _ = writeln!(out, "failure of {who} in throw {}:", f.throw);
        let _ = writeln!(out, "  {}", f.reason);
    }
    out
}

/// [`format_full`] of several protocols, separated by an empty line: what
/// the kit's `protocolfmt` prints for a mail with several protocols.
pub fn format_all(ps: &[GameProtocol]) -> String {
    ps.iter().map(format_full).collect::<Vec<_>>().join("\n")
}
