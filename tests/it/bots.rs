//! Bots in any language (issue 13): the languages, the compile jail for
//! every toolchain, the bot sandbox, and the line-protocol referee core.
//! The hostile bots in `tests/data/bots/hostile/` each try to break one
//! property of the sandbox, in C and in Python.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use knobeln::lang::build::{build, BotProgram, Build, BuildLimits};
use knobeln::lang::{choose, LanguageTable, Toolchain, Toolchains};
use knobeln::lines::echo::play_echo;
use knobeln::lines::{play, BotFailureKind, LineLimits, Match, MatchRecord};

fn toolchains() -> &'static Toolchains {
    static T: OnceLock<Toolchains> = OnceLock::new();
    T.get_or_init(|| Toolchains::resolve(&LanguageTable::builtin()))
}

fn toolchain(lang: &str) -> &'static Toolchain {
    match toolchains().get(lang) {
        Some(Ok(t)) => t,
        Some(Err(e)) => {
            panic!("the {lang} toolchain is missing ({e}); tests/run-all.sh installs it")
        }
        None => panic!("no language {lang}"),
    }
}

fn bots_dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/bots"))
}

/// Builds a test bot (once per file) and returns its toolchain and program.
fn bot(file: &str) -> (&'static Toolchain, BotProgram) {
    static CACHE: OnceLock<Mutex<HashMap<String, BotProgram>>> = OnceLock::new();
    let path = bots_dir().join(file);
    let name = path.file_name().unwrap().to_str().unwrap().to_string();
    let choice = choose(&LanguageTable::builtin(), Some(&name), None).unwrap();
    let tc = toolchain(&choice.language);
    let cache = CACHE.get_or_init(Default::default);
    if let Some(p) = cache.lock().unwrap().get(file) {
        return (tc, p.clone());
    }
    let source = std::fs::read(&path).unwrap();
    let program = match build(tc, &choice.assumed, &source, &BuildLimits::default()).unwrap() {
        Build::Built { program, .. } => program,
        Build::Rejected { report } => panic!("{file} rejected:\n{}", report.text()),
    };
    cache
        .lock()
        .unwrap()
        .insert(file.to_string(), program.clone());
    (tc, program)
}

fn echo_match(files: &[&str], rounds: u32, limits: LineLimits) -> MatchRecord<Vec<u64>> {
    let bots: Vec<(&Toolchain, BotProgram)> = files.iter().map(|f| bot(f)).collect();
    let refs: Vec<(&Toolchain, &BotProgram)> = bots.iter().map(|(t, p)| (*t, p)).collect();
    let m = Match::start(&refs, limits).unwrap();
    play(m, |m| play_echo(m, rounds, 7)).unwrap()
}

#[test]
fn a_trivial_bot_in_every_built_in_language_plays_echo_and_is_scored_right() {
    for file in ["echo.c", "echo.cpp", "echo.py", "Echo.java", "echo.rs"] {
        let rec = echo_match(&[file, "echo.c"], 50, LineLimits::default());
        assert!(rec.failures.is_empty(), "{file}: {:?}", rec.failures);
        assert_eq!(rec.outcome, Some(vec![50, 50]), "{file}");
        assert_eq!(rec.bots.len(), 2);
    }
}
