//! `knobeln admin withdraw TEAM --reason TEXT [--no-mail]`: withdraws a
//! team before the contest starts. Its registration is kept (moved to the
//! `withdrawals` table), its versions and name stay taken; it does not
//! play, gets no contest mail, and its authentification string no longer
//! works. The team is told, with the reason, unless `--no-mail` (e.g. for a
//! registration with a forged address).

use chrono::Utc;
use clap::Args;

use knobeln::admin::{actor_from_env, withdraw, Notice, Outcome};
use knobeln::config::Config;
use knobeln::store::Store;

#[derive(Args, Debug)]
pub struct Withdraw {
    /// The team's name.
    pub team: String,
    /// Why (logged, and told to the team).
    #[arg(long)]
    pub reason: String,
    /// Do not mail the team.
    #[arg(long)]
    pub no_mail: bool,
}

impl Withdraw {
    pub fn apply(self, store: &mut Store, config: &Config) -> anyhow::Result<Outcome> {
        let notice = if self.no_mail {
            Notice::Silent
        } else {
            Notice::MailTheTeam
        };
        Ok(withdraw(
            store,
            config,
            &self.team,
            &self.reason,
            notice,
            &actor_from_env(),
            Utc::now(),
        )?)
    }
}
