//! Morabaraba's board: the 24 points `x y s` and the 20 lines of three
//! points, each a possible mill ([`MILLS`]), as the module doc of
//! [`super`] draws them.
//!
//! What it deliberately does not do: know cows, turns or moves (that is
//! [`super::Position`]).

use serde::{Serialize, Serializer};
use std::fmt;

/// Points on the board.
pub const N_POINTS: usize = 24;

/// One of the 24 points.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Point(u8);

/// `(x, y)` of the eight points of a square, in index order.
const XY: [(u8, u8); 8] = [
    (1, 1),
    (2, 1),
    (3, 1),
    (1, 2),
    (3, 2),
    (1, 3),
    (2, 3),
    (3, 3),
];

/// The point `x y s`, for tables known to be valid.
const fn p(x: u8, y: u8, s: u8) -> Point {
    let k = match (x, y) {
        (1, 1) => 0,
        (2, 1) => 1,
        (3, 1) => 2,
        (1, 2) => 3,
        (3, 2) => 4,
        (1, 3) => 5,
        (2, 3) => 6,
        (3, 3) => 7,
        _ => panic!("no such point"),
    };
    assert!(matches!(s, 1..=3), "no such square");
    Point((s - 1) * 8 + k)
}

impl Point {
    /// The point `x y square`, if it exists.
    pub fn new(x: u8, y: u8, square: u8) -> Option<Point> {
        let ok = (1..=3).contains(&x) && (1..=3).contains(&y) && (1..=3).contains(&square);
        (ok && (x, y) != (2, 2)).then(|| p(x, y, square))
    }

    /// All 24 points, square by square.
    pub fn all() -> impl Iterator<Item = Point> {
        (0..N_POINTS as u8).map(Point)
    }

    pub fn index(self) -> usize {
        self.0 as usize
    }

    pub fn x(self) -> u8 {
        XY[(self.0 % 8) as usize].0
    }

    pub fn y(self) -> u8 {
        XY[(self.0 % 8) as usize].1
    }

    pub fn square(self) -> u8 {
        self.0 / 8 + 1
    }

    /// The points next to this one along a line.
    pub fn neighbours(self) -> impl Iterator<Item = Point> {
        MILLS.iter().flat_map(move |line| {
            let i = line.iter().position(|&q| q == self);
            let (a, b) = match i {
                Some(0) => (Some(line[1]), None),
                Some(1) => (Some(line[0]), Some(line[2])),
                Some(2) => (Some(line[1]), None),
                _ => (None, None),
            };
            a.into_iter().chain(b)
        })
    }
}

impl fmt::Display for Point {
    /// As in the protocol: `x y s`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} {}", self.x(), self.y(), self.square())
    }
}

impl fmt::Debug for Point {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({},{},{})", self.x(), self.y(), self.square())
    }
}

impl Serialize for Point {
    /// As `[x, y, s]`.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        [self.x(), self.y(), self.square()].serialize(serializer)
    }
}

/// The 20 lines of the board, each a possible mill.
pub const MILLS: [[Point; 3]; 20] = [
    // The sides of each square.
    [p(1, 1, 1), p(2, 1, 1), p(3, 1, 1)],
    [p(1, 3, 1), p(2, 3, 1), p(3, 3, 1)],
    [p(1, 1, 1), p(1, 2, 1), p(1, 3, 1)],
    [p(3, 1, 1), p(3, 2, 1), p(3, 3, 1)],
    [p(1, 1, 2), p(2, 1, 2), p(3, 1, 2)],
    [p(1, 3, 2), p(2, 3, 2), p(3, 3, 2)],
    [p(1, 1, 2), p(1, 2, 2), p(1, 3, 2)],
    [p(3, 1, 2), p(3, 2, 2), p(3, 3, 2)],
    [p(1, 1, 3), p(2, 1, 3), p(3, 1, 3)],
    [p(1, 3, 3), p(2, 3, 3), p(3, 3, 3)],
    [p(1, 1, 3), p(1, 2, 3), p(1, 3, 3)],
    [p(3, 1, 3), p(3, 2, 3), p(3, 3, 3)],
    // Through the corresponding side midpoints.
    [p(2, 1, 1), p(2, 1, 2), p(2, 1, 3)],
    [p(2, 3, 1), p(2, 3, 2), p(2, 3, 3)],
    [p(1, 2, 1), p(1, 2, 2), p(1, 2, 3)],
    [p(3, 2, 1), p(3, 2, 2), p(3, 2, 3)],
    // Through the corresponding corners.
    [p(1, 1, 1), p(1, 1, 2), p(1, 1, 3)],
    [p(1, 3, 1), p(1, 3, 2), p(1, 3, 3)],
    [p(3, 1, 1), p(3, 1, 2), p(3, 1, 3)],
    [p(3, 3, 1), p(3, 3, 2), p(3, 3, 3)],
];

pub(super) fn mill_text(i: usize) -> String {
    let [a, b, c] = MILLS[i];
    format!("{a}, {b}, {c}")
}
