//! `knobeln admin set-aside`: the incoming mails set aside after failed
//! processing (or unreadable by the transport), with sender, subject and
//! the last error. `knobeln admin reprocess` puts them back.

use std::process::ExitCode;

use clap::Args;

use knobeln::config::Config;
use knobeln::mail::message::sender_and_subject;
use knobeln::store::admin::set_aside_inbox;
use knobeln::store::Store;

#[derive(Args, Debug)]
pub struct SetAsideList {}

impl SetAsideList {
    pub fn apply(self, store: &Store, config: &Config) -> anyhow::Result<ExitCode> {
        let rows = set_aside_inbox(store.conn())?;
        for m in &rows {
            let (from, subject) = sender_and_subject(&m.head, &config.contest.loop_id);
            let subject: String = subject
                .chars()
                .filter(|c| !c.is_control())
                .take(100)
                .collect();
            outln!(
                "{:<6} {}  from {}  ({})\n       subject: {}\n       {} attempt(s); {}",
                m.id,
                m.received_at,
                from,
                m.origin,
                subject,
                m.attempts,
                m.last_error
                    .as_deref()
                    .or(m.outcome.as_deref())
                    .unwrap_or("-")
            );
        }
        outln!(
            "{} set-aside mail(s){}",
            rows.len(),
            if rows.is_empty() {
                ""
            } else {
                "; process them again: knobeln admin reprocess ID… (or --all)"
            }
        );
        Ok(ExitCode::SUCCESS)
    }
}
