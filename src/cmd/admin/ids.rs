//! Which mails `resend` and `reprocess` act on: ids or `--all`. Only the
//! argument; the listing and the acting are theirs.

use clap::Args;

/// Mail ids or `--all`, for `resend` and `reprocess`.
#[derive(Args, Debug)]
pub struct IdsOrAll {
    /// The mails' ids (as the listing shows them).
    #[arg(required_unless_present = "all", conflicts_with = "all")]
    pub ids: Vec<i64>,
    /// Every one the listing shows.
    #[arg(long)]
    pub all: bool,
}

impl IdsOrAll {
    pub fn selection(&self) -> knobeln::admin::Selection {
        if self.all {
            knobeln::admin::Selection::All
        } else {
            knobeln::admin::Selection::Ids(self.ids.clone())
        }
    }
}
