//! The `knobeln` command: parses the command line and runs one command.
//! Everything else lives in the library and in `src/cmd/`.

mod cmd;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = cmd::Cli::parse();
    cmd::logging::init(cli.command.usual_log(), cli.verbose, cli.quiet);
    match cli.command.apply() {
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
