//! The log: `tracing` lines on standard error with a UTC timestamp, the
//! level and the message. `RUST_LOG` (e.g. `knobeln=debug`,
//! `warn,knobeln::mail=trace`) wins over the global flags; without it, the
//! long-running commands (`serve`, `contest`, `worker`) show knobeln's info
//! lines and the others only its warnings (a `demo` or an `ingest` prints
//! its own account on standard output); `-v` shows one level more (debug,
//! then trace), `-q` one less (warnings, then errors). Libraries show their
//! warnings. Colours only on a terminal, and not with `NO_COLOR`.
//!
//! Deliberately not here: what commands print for their user (reports,
//! tables, summaries go to standard output with `println!`).

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;

/// A command's log level without flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Usual {
    /// Long-running commands: what they do, line by line.
    Info,
    /// The others: only what went wrong.
    Warn,
}

/// Installs the log for the whole process. `verbose` and `quiet` count the
/// `-v` and `-q` flags.
pub fn init(usual: Usual, verbose: u8, quiet: u8) {
    let filter = match std::env::var("RUST_LOG") {
        Ok(spec) if !spec.trim().is_empty() => EnvFilter::new(spec),
        _ => EnvFilter::new(default_directives(usual, verbose, quiet)),
    };
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .with_ansi(std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none())
        .try_init();
}

/// The filter for the flags (pure): knobeln's level, and the libraries'.
pub fn default_directives(usual: Usual, verbose: u8, quiet: u8) -> String {
    let base = match usual {
        Usual::Info => 0,
        Usual::Warn => -1,
    };
    let level = base + i16::from(verbose) - i16::from(quiet);
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
        use Usual::{Info, Warn};
        assert_eq!(default_directives(Info, 0, 0), "warn,knobeln=info");
        assert_eq!(default_directives(Info, 1, 0), "warn,knobeln=debug");
        assert_eq!(default_directives(Info, 2, 0), "debug,knobeln=trace");
        assert_eq!(default_directives(Info, 0, 1), "warn,knobeln=warn");
        assert_eq!(default_directives(Info, 0, 2), "error,knobeln=error");
        assert_eq!(default_directives(Info, 1, 1), "warn,knobeln=info");
        assert_eq!(default_directives(Warn, 0, 0), "warn,knobeln=warn");
        assert_eq!(default_directives(Warn, 1, 0), "warn,knobeln=info");
    }
}
