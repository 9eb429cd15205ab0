//! What the referee needs of a running bot ([`BotIo`]: its three pipes,
//! its CPU time, how it ended, freezing it), and the sandbox's
//! [`BotProcess`] as one.
//!
//! Not here: starting a bot ([`super::spawn_bot`]) or refereeing it
//! ([`super::Match`]).

use std::io;
use std::os::fd::RawFd;
use std::process::ExitStatus;
use std::time::Duration;

use crate::sandbox::bot::BotProcess;
use crate::sandbox::cgroup::{Freeze, Held};

/// What the referee needs of a running bot.
pub trait BotIo {
    /// Our (non-blocking) ends of its standard input, output and error.
    fn fds(&self) -> [RawFd; 3];
    /// CPU time of the whole bot so far.
    fn cpu_time(&self) -> Duration;
    /// How its program ended, if it has; an error of kind `NotFound`
    /// where the program could not be executed (the server's fault).
    fn try_status(&mut self) -> io::Result<Option<ExitStatus>>;
    /// Kills all of it and reaps the main process.
    fn finish(&mut self) -> io::Result<ExitStatus>;
    /// Whether the memory limit struck.
    fn out_of_memory(&self) -> bool;
    /// Whether it waits in `read` on its standard input.
    fn waiting_for_input(&self) -> bool;
    /// Whether it has come to rest ([`crate::sandbox::bot::RestProbe`]):
    /// what it printed so far is in its output pipe. The default (a bot
    /// that cannot be looked into): at once.
    fn at_rest(&self) -> bool {
        true
    }
    /// Stops or resumes all of it; `false` where it cannot be frozen.
    fn freeze(&mut self, _state: Freeze) -> bool {
        false
    }
    /// Whether its freeze has taken hold, as the kernel reports it; the
    /// default (a bot that cannot be frozen): `Unconfirmed`.
    fn held(&self) -> Held {
        Held::Unconfirmed
    }
    /// Its processes, as the server sees them (for checks that nothing is
    /// left behind).
    fn members(&self) -> Vec<i32> {
        Vec::new()
    }
}

impl BotIo for BotProcess {
    fn fds(&self) -> [RawFd; 3] {
        use std::os::fd::AsRawFd;
        [
            self.stdin.as_raw_fd(),
            self.stdout.as_raw_fd(),
            self.stderr.as_raw_fd(),
        ]
    }
    fn cpu_time(&self) -> Duration {
        BotProcess::cpu_time(self)
    }
    fn try_status(&mut self) -> io::Result<Option<ExitStatus>> {
        BotProcess::try_status(self)
    }
    fn finish(&mut self) -> io::Result<ExitStatus> {
        BotProcess::finish(self)
    }
    fn out_of_memory(&self) -> bool {
        BotProcess::out_of_memory(self)
    }
    fn waiting_for_input(&self) -> bool {
        BotProcess::waiting_for_input(self)
    }
    fn at_rest(&self) -> bool {
        BotProcess::at_rest(self)
    }
    fn freeze(&mut self, state: Freeze) -> bool {
        BotProcess::freeze(self, state)
    }
    fn held(&self) -> Held {
        BotProcess::held(self)
    }
    fn members(&self) -> Vec<i32> {
        BotProcess::members(self)
    }
}
