//! Standard output of the commands, as Unix tools write it: when the reader
//! goes away (`knobeln results | head -1`, a pager that is quit), the
//! output ends quietly. `out!`/`outln!` (defined in `cmd/mod.rs`) write like
//! `print!`/`println!`, but where those panic with "failed printing to
//! stdout: Broken pipe", the first failed write here marks stdout closed and
//! every later one is dropped, so a command that also changes state (`ingest`
//! writes the spool's replies after printing) still finishes its work (a
//! long printer may ask [`closed`] to stop early). The exit status stays
//! the command's own.
//!
//! A write error other than a closed pipe (a full disk behind `> file`) is
//! kept and reported by [`finish`] as an error of the command.
//!
//! Library code that prints with `println!` (the benchmarks' figures) is
//! covered by [`install_panic_hook`]: the one panic `println!` raises on a
//! closed stdout ends the process quietly instead of printing a panic
//! message.
//!
//! This module does not touch standard error (messages and progress stay
//! `eprintln!`), nor how child processes see `SIGPIPE`: the server keeps
//! ignoring it, as every Rust program does, so that a strategy that dies
//! while the referee writes to it is an error the referee handles, not the
//! end of the server.

use std::fmt;
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

static CLOSED: AtomicBool = AtomicBool::new(false);
static FAILURE: Mutex<Option<io::Error>> = Mutex::new(None);

/// Writes to stdout, unless it has been found closed; used by `out!` and `outln!`.
pub fn write(args: fmt::Arguments) {
    if CLOSED.load(Ordering::Relaxed) {
        return;
    }
    let mut out = io::stdout().lock();
    if let Err(e) = out.write_fmt(args) {
        failed(e);
    }
}

/// Whether stdout has been found closed (or failed): nothing more written
/// reaches anyone.
pub fn closed() -> bool {
    CLOSED.load(Ordering::Relaxed)
}

fn failed(e: io::Error) {
    CLOSED.store(true, Ordering::Relaxed);
    if e.kind() != io::ErrorKind::BrokenPipe {
        let mut slot = FAILURE.lock().unwrap_or_else(|p| p.into_inner());
        slot.get_or_insert(e);
    }
}

/// Flushes stdout at the end of a command. A closed pipe is a normal end;
/// any other write error is returned.
pub fn finish() -> io::Result<()> {
    if !closed() {
        if let Err(e) = io::stdout().lock().flush() {
            failed(e);
        }
    }
    match FAILURE.lock().unwrap_or_else(|p| p.into_inner()).take() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Makes the panic of `println!` on a closed stdout (library code that
/// prints directly) a quiet exit; every other panic is reported as before.
pub fn install_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if message.starts_with("failed printing to stdout") && message.contains("Broken pipe") {
            std::process::exit(0);
        }
        previous(info);
    }));
}
