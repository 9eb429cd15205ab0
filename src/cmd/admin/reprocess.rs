//! `knobeln admin reprocess ID… | --all`: puts set-aside incoming mails
//! back into processing with their attempts counted afresh (after the
//! cause is fixed); `knobeln serve` (or `serve --once`) processes them. All
//! or nothing: an id that is not a set-aside mail refuses the whole list.

use chrono::Utc;
use clap::Args;

use knobeln::admin::{actor_from_env, reprocess, Outcome};
use knobeln::store::Store;

#[derive(Args, Debug)]
pub struct Reprocess {
    #[command(flatten)]
    pub which: super::ids::IdsOrAll,
}

impl Reprocess {
    pub fn apply(self, store: &mut Store) -> anyhow::Result<Outcome> {
        Ok(reprocess(
            store,
            &self.which.selection(),
            &actor_from_env(),
            Utc::now(),
        )?)
    }
}
