//! Words every text a person reads shares: counts with the right plural
//! ("1 round", "2 rounds") and the players as the seeds number them
//! ("player 1" is seat 0).

/// `n` and the noun in the number `n` asks for: `counted(1, "round",
/// "rounds")` is "1 round", `counted(0, "round", "rounds")` "0 rounds".
pub fn counted(n: u64, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

/// Seat `seat` (from 0) as people read it: "player 1" for seat 0.
pub fn player(seat: usize) -> String {
    format!("player {}", seat + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_take_the_plural_they_need() {
        assert_eq!(counted(0, "round", "rounds"), "0 rounds");
        assert_eq!(counted(1, "round", "rounds"), "1 round");
        assert_eq!(counted(2, "turn", "turns"), "2 turns");
        assert_eq!(player(0), "player 1");
        assert_eq!(player(1), "player 2");
    }
}
