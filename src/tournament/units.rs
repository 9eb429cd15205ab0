//! The units every piece of a tournament counts in: a team ([`TeamId`],
//! the caller's number) and exact points ([`Points`], half-points). Only
//! the values, their arithmetic and their serde form; who scores what is
//! [`super::schedule`]'s and [`super::ranking`]'s.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::iter::Sum;
use std::ops::{Add, AddAssign};

/// A team (one participant's strategy) in the contest. The number is the
/// caller's (e.g. the database's) identifier; this module never invents ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct TeamId(pub u32);

impl fmt::Display for TeamId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// An exact number of points, stored as half-points.
///
/// A team's points in a group are whole game points, except that its
/// self-game counts once, as the mean of its two sides, which may end in .5.
/// Serialized as a JSON number (`123` → `123.0`, `123.5`); displayed as `123`
/// or `123.5`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Points(u64);

impl Points {
    pub const ZERO: Points = Points(0);

    /// From a number of half-points.
    pub fn from_halves(halves: u64) -> Points {
        Points(halves)
    }

    /// From a number of whole points.
    pub fn from_whole(points: u64) -> Points {
        Points(points * 2)
    }

    /// The number of half-points (exact).
    pub fn halves(self) -> u64 {
        self.0
    }

    /// The value in points (exact for any value below 2^53 half-points).
    pub fn as_f64(self) -> f64 {
        self.0 as f64 / 2.0
    }
}

impl fmt::Display for Points {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_multiple_of(2) {
            write!(f, "{}", self.0 / 2)
        } else {
            write!(f, "{}.5", self.0 / 2)
        }
    }
}

impl Add for Points {
    type Output = Points;
    fn add(self, rhs: Points) -> Points {
        Points(self.0 + rhs.0)
    }
}

impl AddAssign for Points {
    fn add_assign(&mut self, rhs: Points) {
        self.0 += rhs.0;
    }
}

impl Sum for Points {
    fn sum<I: Iterator<Item = Points>>(iter: I) -> Points {
        iter.fold(Points::ZERO, Add::add)
    }
}

impl Serialize for Points {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_f64(self.as_f64())
    }
}

impl<'de> Deserialize<'de> for Points {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Points, D::Error> {
        let x = f64::deserialize(deserializer)?;
        let halves = x * 2.0;
        if !(halves >= 0.0 && halves <= (1u64 << 53) as f64 && halves.fract() == 0.0) {
            return Err(serde::de::Error::custom(format!(
                "points must be a non-negative multiple of 0.5, got {x}"
            )));
        }
        Ok(Points(halves as u64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_display_whole_and_half() {
        assert_eq!(Points::from_whole(123).to_string(), "123");
        assert_eq!(Points::from_halves(247).to_string(), "123.5");
        assert_eq!(Points::from_halves(1).to_string(), "0.5");
        assert_eq!(Points::ZERO.to_string(), "0");
        assert_eq!(Points::from_halves(247).as_f64(), 123.5);
    }

    #[test]
    fn points_json_round_trip_is_exact() {
        for h in [0u64, 1, 2, 247, 26_001] {
            let p = Points::from_halves(h);
            let json = serde_json::to_string(&p).unwrap();
            assert_eq!(serde_json::from_str::<Points>(&json).unwrap(), p);
        }
        assert_eq!(
            serde_json::to_string(&Points::from_halves(247)).unwrap(),
            "123.5"
        );
        assert!(serde_json::from_str::<Points>("1.25").is_err());
        assert!(serde_json::from_str::<Points>("-1").is_err());
    }

    #[test]
    fn team_id_serializes_as_a_plain_number() {
        assert_eq!(serde_json::to_string(&TeamId(17)).unwrap(), "17");
    }
}
