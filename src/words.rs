//! Words every text a person reads shares: counts with the right plural
//! ("1 round", "2 rounds") and the players as the seeds number them
//! ("player 1" is seat 0), and a team's versions as the team counts them
//! (1, 2, … per team; the database id stays internal).

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

/// The number people read for each version: 1, 2, … per team in the
/// order of submission. `submissions` holds (team, version id) in any
/// order (ids grow with submission, across all teams); the answer maps a
/// version id to its team's number for it.
pub fn version_numbers<T: Ord + Copy>(
    submissions: &[(T, i64)],
) -> std::collections::BTreeMap<i64, usize> {
    let mut sorted = submissions.to_vec();
    sorted.sort_by_key(|&(team, id)| (team, id));
    let mut numbers = std::collections::BTreeMap::new();
    let mut last_team = None;
    let mut n = 0;
    for (team, id) in sorted {
        if last_team != Some(team) {
            last_team = Some(team);
            n = 0;
        }
        n += 1;
        numbers.insert(id, n);
    }
    numbers
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_team_counts_its_own_versions_from_1_whatever_the_others_sent() {
        // Team 7 sends ids 4, 6 and 9, team 3 ids 5, 7 and 8, interleaved.
        let sent = [(7u32, 4), (3, 5), (7, 6), (3, 7), (3, 8), (7, 9)];
        let n = version_numbers(&sent);
        assert_eq!(
            n.into_iter().collect::<Vec<_>>(),
            [(4, 1), (5, 1), (6, 2), (7, 2), (8, 3), (9, 3)]
        );
        // The order given does not matter; one team alone counts alike.
        let mut backwards = sent;
        backwards.reverse();
        assert_eq!(version_numbers(&backwards), version_numbers(&sent));
        assert_eq!(version_numbers(&[(3u32, 5), (3, 7)])[&7], 2);
        assert!(version_numbers::<u32>(&[]).is_empty());
    }

    #[test]
    fn counts_take_the_plural_they_need() {
        assert_eq!(counted(0, "round", "rounds"), "0 rounds");
        assert_eq!(counted(1, "round", "rounds"), "1 round");
        assert_eq!(counted(2, "turn", "turns"), "2 turns");
        assert_eq!(player(0), "player 1");
        assert_eq!(player(1), "player 2");
    }
}
