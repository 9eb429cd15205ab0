//! The flooding island's trial of a new bot: one game on each of the kit's
//! test islands, each with the command that plays it again at home.
//!
//! What it deliberately does not do: build bots or blame them (the shared
//! steps of `crate::discipline::trial`, the referee's verdicts).

use super::rules::{FloodOutcome, Island};
use crate::discipline::game::Transcript;
use crate::discipline::seam::{BotDiscipline, Seat};
use crate::discipline::trial::steps::{budgeted, fail, TrialError, TrialReport, TRIAL_GAME_SECS};
use crate::discipline::Sections;

pub fn trial(
    seam: &dyn BotDiscipline,
    cfg: &Sections<'_>,
    bot: Seat<'_>,
    seed: u64,
) -> Result<TrialReport, TrialError> {
    let mut lines = Vec::new();
    let mut passed = true;
    let f = cfg.flooding;
    for (k, (name, text)) in super::data::TEST_ISLANDS.iter().enumerate() {
        let island = Island::parse(text).expect("the demo islands are valid");
        let game_seed = crate::seed::derive(seed, &[k as u64]);
        let setup = super::data::setup(island, f.params(), game_seed);
        let limits = budgeted(f.limits().line_limits(), TRIAL_GAME_SECS);
        let p = seam.play_bots(&setup, &[bot], limits, Transcript::Drop, None)?;
        if let Some(o) = &p.outcome {
            let o = o.get::<FloodOutcome>();
            lines.push(format!(
                "Trial game on the island {name}, seed {game_seed}: survived {} ({}). \
                 The kit's referee plays it again: {}",
                crate::words::counted(o.rounds.into(), "round", "rounds"),
                o.end,
                replay_command(name, game_seed, f.max_rounds)
            ));
            if o.n_warnings > 0 {
                lines.push(format!(
                    "  Warning: {} times your bot tried to dry water or a field \
                     off the island (that does nothing).",
                    o.n_warnings
                ));
            }
        }
        passed &= !fail(&mut lines, &p, 0, &format!("the game on the island {name}"));
    }
    Ok(TrialReport { passed, lines })
}

/// The kit referee's command that plays a flooding trial game again: the
/// island, the seed, and the round cap when this contest's differs from
/// the referee's default (which is the server's default).
pub fn replay_command(island: &str, seed: u64, max_rounds: u32) -> String {
    let cap = if max_rounds == super::rules::DEFAULT_MAX_ROUNDS {
        String::new()
    } else {
        format!(" --max-rounds {max_rounds}")
    };
    format!("python3 referee.py --island island-{island}.txt --seed {seed}{cap} ./mybot")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flooding_replay_command_names_a_round_cap_other_than_the_referees() {
        let default = super::super::rules::DEFAULT_MAX_ROUNDS;
        // The kit's referee has the server's default.
        assert!(include_str!("referee_rules.py")
            .contains(&format!("\nDEFAULT_MAX_ROUNDS = {default}\n")));
        assert_eq!(
            replay_command("lagoon", 7, default),
            "python3 referee.py --island island-lagoon.txt --seed 7 ./mybot"
        );
        assert_eq!(
            replay_command("lagoon", 7, 50),
            "python3 referee.py --island island-lagoon.txt --seed 7 --max-rounds 50 ./mybot"
        );
    }
}
