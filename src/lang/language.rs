//! [`Language`], one entry of the language table as data: how a
//! language's submissions are named, compiled and run, its limits, and the
//! defaults a config entry may leave out.
//!
//! Not here: the built-in entries (`builtin.rs`), checking an entry
//! (`table.rs`) and finding its programs (`toolchains.rs`).

use serde::{Deserialize, Serialize};

/// One language of the table.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Language {
    /// Short name (`c`, `cpp`, `python`, `java`, `rust`): lower case.
    pub name: String,
    /// What people call it, for reports.
    pub title: String,
    /// File name endings without the dot (`py`).
    pub extensions: Vec<String>,
    /// Other words a `language:` line may use (`python3`, `c++`).
    #[serde(default)]
    pub aliases: Vec<String>,
    /// The file name the submission is saved as (may use `{stem}`).
    pub source: String,
    /// A regular expression whose first group is the stem, searched in the
    /// source (Java: the public class); the stem is `default_stem` otherwise.
    #[serde(default)]
    pub stem_pattern: Option<String>,
    #[serde(default = "default_stem")]
    pub default_stem: String,
    /// A command run on the host whose output is a folder made visible
    /// read-only to the compiler (not the bot) at the neutral path
    /// `/toolchain`, which `{toolchain}` names in the compile command.
    #[serde(default)]
    pub toolchain: Vec<String>,
    /// The compile command, run in the compile jail with the source in the
    /// working folder (empty: nothing to compile).
    #[serde(default)]
    pub compile: Vec<String>,
    /// Which files of the working folder after compiling make up the bot
    /// (`*` matches within one path component).
    pub artifacts: Vec<String>,
    /// The run command; the bot's files are in `/bot`, the working folder
    /// is `/work`.
    pub run: Vec<String>,
    /// Extra environment of the bot (`KEY=value`).
    #[serde(default)]
    pub env: Vec<String>,
    /// The command that prints the toolchain's version.
    pub version: Vec<String>,
    /// Host paths shown read-only to compiler and bot (a `*` in the last
    /// component matches several, e.g. `/etc/java-*-openjdk`).
    #[serde(default)]
    pub paths: Vec<String>,
    /// Memory the runtime gets on top of the game's limit, in MiB.
    #[serde(default)]
    pub memory_extra_mb: u64,
    /// Threads and processes a bot may have at once.
    #[serde(default = "default_processes")]
    pub processes: u64,
    /// Whether an address-space limit may stand in for memory where there
    /// are no control groups (false for the JVM, whose reservations are not use).
    #[serde(default = "yes")]
    pub address_space_limit: bool,
    #[serde(default = "default_compile_memory")]
    pub compile_memory_mb: u64,
    #[serde(default = "default_compile_cpu")]
    pub compile_cpu_secs: u64,
    #[serde(default = "default_compile_processes")]
    pub compile_processes: u64,
    /// The largest program a build may make, in KiB (all its files):
    /// every stored version and every match carries it.
    #[serde(default = "default_program_kb")]
    pub program_kb: u64,
    /// Whether the compiler gets a `/proc` (of its own PID namespace; the
    /// JVM behind `javac` needs one). Without it a build cannot read even
    /// its own mounts.
    #[serde(default)]
    pub compile_proc: bool,
    /// Whether the bot gets a `/proc` (of its own PID namespace). Off for
    /// every built-in: a `/proc` shows even a bot of its own namespace
    /// figures of the machine (`/proc/self/net/sockstat` counts the host's
    /// TCP sockets, `/proc/self/mountinfo` its mounts). A runtime that
    /// finds itself through `/proc/self/exe` (the `java` launcher's
    /// `$ORIGIN`) is given `LD_ORIGIN_PATH` instead. Turn it on only for a
    /// runtime that cannot start without one.
    #[serde(default)]
    pub run_proc: bool,
    /// Host paths the bot's runtime reads besides its program and the
    /// shared libraries (found by themselves): a standard library, the
    /// JVM's `lib`. `{run_home}` is the folder above the run program's
    /// (`/usr` for `/usr/bin/python3`); a `*` in the last component
    /// matches several. A match shows bots these from the runtime image
    /// ([`crate::sandbox::image`]), not the host's `/usr`.
    #[serde(default)]
    pub run_files: Vec<String>,
    /// Shared libraries every program of the language may need (by name,
    /// as the loader looks for them), put into the runtime image ahead of
    /// the first bot: a server that cannot fill the image itself (not
    /// root) finds them there.
    #[serde(default)]
    pub run_libraries: Vec<String>,
}

pub(super) fn default_stem() -> String {
    "bot".into()
}
pub(super) fn default_processes() -> u64 {
    32
}
fn yes() -> bool {
    true
}
pub(super) fn default_compile_memory() -> u64 {
    1024
}
pub(super) fn default_compile_cpu() -> u64 {
    30
}
pub(super) fn default_compile_processes() -> u64 {
    64
}
/// 4 MiB: a Rust bot with its standard library is about 0.4 MB, a C bot a
/// few dozen kB; a program larger than this is data, not a strategy.
pub(super) fn default_program_kb() -> u64 {
    4096
}
