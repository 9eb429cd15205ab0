//! `knobeln admin resend ID… | --all`: queues failed outgoing mails again,
//! due now, with their attempts counted afresh; `knobeln serve` sends them.
//! All or nothing: an id that is not a failed mail refuses the whole list.

use chrono::Utc;
use clap::Args;

use knobeln::admin::{actor_from_env, resend, Outcome};
use knobeln::store::Store;

#[derive(Args, Debug)]
pub struct Resend {
    #[command(flatten)]
    pub which: super::ids::IdsOrAll,
}

impl Resend {
    pub fn apply(self, store: &mut Store) -> anyhow::Result<Outcome> {
        Ok(resend(
            store,
            &self.which.selection(),
            &actor_from_env(),
            Utc::now(),
        )?)
    }
}
