//! `knobeln admin reset-auth TEAM`: gives a team a new authentification
//! string (from the OS random source, stored only salted and hashed) and
//! mails it to the team's registered address. The organizer never sees it;
//! the old string stops working at once.

use chrono::Utc;
use clap::Args;

use knobeln::admin::{actor_from_env, reset_auth, Outcome};
use knobeln::config::Config;
use knobeln::store::Store;

#[derive(Args, Debug)]
pub struct ResetAuth {
    /// The team's name.
    pub team: String,
}

impl ResetAuth {
    pub fn apply(self, store: &mut Store, config: &Config) -> anyhow::Result<Outcome> {
        Ok(reset_auth(
            store,
            config,
            &self.team,
            &actor_from_env(),
            Utc::now(),
        )?)
    }
}
