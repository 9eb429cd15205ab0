//! `knobeln admin set-address TEAM ADDRESS`: changes a team's mail
//! address (checked like the registration form's `mail-address`, and not
//! another team's). A notice goes to the old and the new address; mails
//! already queued keep their addresses.

use chrono::Utc;
use clap::Args;

use knobeln::admin::{actor_from_env, set_address, Outcome};
use knobeln::config::Config;
use knobeln::store::Store;

#[derive(Args, Debug)]
pub struct SetAddress {
    /// The team's name.
    pub team: String,
    /// The new address.
    pub address: String,
}

impl SetAddress {
    pub fn apply(self, store: &mut Store, config: &Config) -> anyhow::Result<Outcome> {
        Ok(set_address(
            store,
            config,
            &self.team,
            &self.address,
            &actor_from_env(),
            Utc::now(),
        )?)
    }
}
