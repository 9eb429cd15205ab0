//! `knobeln admin failed-mail`: the outgoing mails given up on (a permanent
//! refusal, or `max_send_attempts` transient ones), with the last error.
//! `knobeln admin resend` queues them again.

use std::process::ExitCode;

use clap::Args;

use knobeln::store::admin::failed_outgoing;
use knobeln::store::Store;

#[derive(Args, Debug)]
pub struct FailedMail {}

impl FailedMail {
    pub fn apply(self, store: &Store) -> anyhow::Result<ExitCode> {
        let rows = failed_outgoing(store.conn())?;
        for f in &rows {
            outln!(
                "{:<6} {}  {:<22} to {}\n       subject: {}\n       {} attempt(s); last error: {}",
                f.id,
                f.created_at,
                f.kind,
                f.recipients.join(", "),
                f.subject,
                f.attempts,
                f.last_error.as_deref().unwrap_or("-")
            );
        }
        outln!(
            "{} failed outgoing mail(s){}",
            rows.len(),
            if rows.is_empty() {
                ""
            } else {
                "; queue them again: knobeln admin resend ID… (or --all)"
            }
        );
        Ok(ExitCode::SUCCESS)
    }
}
