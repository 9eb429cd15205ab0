//! The `knobeln` command: parses the command line and runs one command.
//! Everything else lives in the library and in `src/cmd/`.

mod cmd;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    cmd::stdout::install_panic_hook();
    let cli = cmd::Cli::parse();
    // Large mails are read first in a process of this program's own,
    // stopped at a CPU budget (`knobeln::mail::probe`).
    // `/proc/self/exe`: the program that runs, even once an upgrade
    // replaced its file.
    knobeln::mail::probe::use_this_program("/proc/self/exe".into());
    cmd::logging::init(cli.command.usual_log(), cli.verbose, cli.quiet);
    let result = cli.command.apply();
    // Control groups kept for the next bot are not left behind.
    knobeln::sandbox::cgroup::BOT_GROUPS.clear();
    let result = result.and_then(|code| {
        cmd::stdout::finish()
            .map_err(|e| anyhow::Error::from(e).context("writing to standard output"))?;
        Ok(code)
    });
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("knobeln: error: {err}");
            for cause in err.chain().skip(1) {
                eprintln!("  caused by: {cause}");
            }
            ExitCode::from(2)
        }
    }
}
