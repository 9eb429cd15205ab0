//! `knobeln mail-probe` (hidden): the server's own probe of a large mail.
//! Reads a mail from standard input and parses it as the server does; the
//! server starts it under a CPU budget and reads only its end
//! (`knobeln::mail::probe`). Not a command for people.

use std::process::ExitCode;

use clap::Args;

#[derive(Args, Debug)]
pub struct MailProbe {}

impl MailProbe {
    pub fn apply(self) -> anyhow::Result<ExitCode> {
        knobeln::mail::probe::probe_standard_input()?;
        Ok(ExitCode::SUCCESS)
    }
}
