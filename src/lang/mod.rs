//! The language table: which languages bots may be written in, how each is
//! compiled and run.
//!
//! Built in: C (gcc -O2), C++ (g++ -O2), Python 3, Java (javac / java) and
//! Rust (rustc -O). The organizer adds or replaces a language in the config
//! (`[[language]]`, see `deploy/knobeln.toml`): a language is data, never
//! code. Commands are argument vectors with placeholders:
//! `{source}` (the file the submission is saved as), `{stem}` (its name
//! without extension, e.g. Java's public class), `{toolchain}` (the folder
//! printed by the language's `toolchain` probe, e.g. the Rust sysroot),
//! `{memory_mb}` (the bot's memory limit, for runtimes that need to be told,
//! like `java -Xmx`).
//!
//! [`Toolchains::resolve`] finds each language's programs on this machine
//! (`/usr/local/bin:/usr/bin:/bin`, symlinks followed, so that
//! `/usr/bin/java → /etc/alternatives/java → /usr/lib/jvm/…` runs inside a
//! sandbox that has no `/etc/alternatives`); a language whose toolchain is
//! missing is reported as missing, never a crash. [`choose`] decides the
//! language of a submission from its file name or a `language:` line and
//! says what it assumed.
//!
//! Compiling is [`build`]; running is [`crate::sandbox::bot`]. This module
//! runs nothing but the version and toolchain probes, on the host, with
//! fixed arguments.
//!
//! The files: `language.rs` one entry; `builtin.rs` the built-ins;
//! `table.rs` the table in force; `choose.rs` a submission's language;
//! `toolchains.rs` the programs on this machine; `build.rs` compiling.
//! This file only declares and re-exports them.

pub mod build;
mod builtin;
mod choose;
mod language;
mod table;
mod toolchains;

pub use builtin::builtin;
pub use choose::{choose, language_line, Choice};
pub use language::Language;
pub use table::LanguageTable;
pub use toolchains::{
    find_program, glob_match, Toolchain, Toolchains, BOT_LOCALE, SANDBOX_PATH, SANDBOX_TOOLCHAIN,
};

#[cfg(test)]
mod tests;
