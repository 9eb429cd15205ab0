//! The log of the long-running commands (`serve`, `contest start`,
//! `worker`, …): `tracing` lines on standard error with a UTC timestamp,
//! the level and the message. `RUST_LOG` (e.g. `knobeln=debug`,
//! `warn,knobeln::mail=trace`) wins over the global flags; without it,
//! `-v` shows debug lines, `-vv` trace lines, `-q` only warnings, `-qq`
//! only errors (the default: info lines of knobeln, warnings of the
//! libraries). Colours only on a terminal, and not with `NO_COLOR`.
//!
//! Deliberately not here: what commands print for their user (reports,
//! tables, summaries go to standard output with `println!`).

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;

/// Installs the log for the whole process. `verbose` and `quiet` count the
/// `-v` and `-q` flags.
pub fn init(verbose: u8, quiet: u8) {
    let filter = match std::env::var("RUST_LOG") {
        Ok(spec) if !spec.trim().is_empty() => EnvFilter::new(spec),
        _ => EnvFilter::new(default_directives(verbose, quiet)),
    };
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .with_ansi(std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none())
        .try_init();
}

/// The filter for the flags (pure): knobeln's level, and the libraries'.
pub fn default_directives(verbose: u8, quiet: u8) -> String {
    let level = i16::from(verbose) - i16::from(quiet);
    let ours = match level {
        i16::MIN..=-2 => "error",
        -1 => "warn",
        0 => "info",
        1 => "debug",
        _ => "trace",
    };
    let theirs = match level {
        i16::MIN..=-2 => "error",
        -1..=1 => "warn",
        _ => "debug",
    };
    format!("{theirs},knobeln={ours}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_set_the_level() {
        assert_eq!(default_directives(0, 0), "warn,knobeln=info");
        assert_eq!(default_directives(1, 0), "warn,knobeln=debug");
        assert_eq!(default_directives(2, 0), "debug,knobeln=trace");
        assert_eq!(default_directives(0, 1), "warn,knobeln=warn");
        assert_eq!(default_directives(0, 2), "error,knobeln=error");
        assert_eq!(default_directives(1, 1), "warn,knobeln=info");
    }
}
