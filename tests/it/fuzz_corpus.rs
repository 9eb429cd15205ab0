//! The fuzz corpus replayed (issue 35): every file of
//! `fuzz/corpus/NAME/` (seeds from the test data, inputs the fuzzer found
//! new paths with, every crash ever found) through the harness body
//! `knobeln::fuzzing::NAME` that `fuzz/fuzz_targets/NAME.rs` runs under
//! libFuzzer. Milliseconds, on every test run; the coverage-guided runs
//! themselves are `bash fuzz/run.sh SECONDS` (docs/src/security.md, "Fuzzing").

use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::Once;

use knobeln::fuzzing::HARNESSES;

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz")
}

thread_local! {
    /// A panic happened on this thread, even one the library caught.
    static PANICKED: Cell<bool> = const { Cell::new(false) };
}

/// Notes every panic, caught or not, as the fuzz bins' hook does: a panic
/// of the library that `mail::message::parse` caught is still a finding;
/// only mail-parser's own are caught by design
/// (`knobeln::fuzzing::caught_by_design`).
fn note_panics() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !knobeln::fuzzing::caught_by_design(info) {
                PANICKED.with(|p| p.set(true));
                previous(info);
            }
        }));
    });
}

fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| {
            e.expect("a directory entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    names.sort();
    names
}

/// Runs every corpus file of `name` through its harness; a missing or
/// empty corpus folder fails (no silent skip).
fn replay(name: &str) {
    let run = HARNESSES
        .iter()
        .find(|(n, _)| *n == name)
        .unwrap_or_else(|| panic!("no harness {name} in knobeln::fuzzing::HARNESSES"))
        .1;
    let dir = fuzz_dir().join("corpus").join(name);
    let files = names_in(&dir);
    assert!(!files.is_empty(), "{}: an empty corpus", dir.display());
    note_panics();
    let mut failed = Vec::new();
    for f in &files {
        let path = dir.join(f);
        let data = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        PANICKED.with(|p| p.set(false));
        let unwound = catch_unwind(AssertUnwindSafe(|| run(&data))).is_err();
        if unwound || PANICKED.with(Cell::get) {
            failed.push(path.display().to_string());
        }
    }
    assert!(
        failed.is_empty(),
        "{name}: these corpus files fail: {failed:?}"
    );
}

macro_rules! replays {
    ($($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                replay(stringify!($name));
            }
        )*

        /// The harnesses, the fuzz bins, the corpus folders and the
        /// dictionaries name the same set (a new harness gets all four).
        #[test]
        fn every_harness_has_a_bin_a_corpus_and_a_dictionary() {
            let mut listed: Vec<String> = vec![$(stringify!($name).to_string()),*];
            listed.sort();
            let mut harnesses: Vec<String> = HARNESSES.iter().map(|(n, _)| n.to_string()).collect();
            harnesses.sort();
            assert_eq!(harnesses, listed, "knobeln::fuzzing::HARNESSES");
            assert_eq!(names_in(&fuzz_dir().join("corpus")), listed, "fuzz/corpus/");
            let strip = |dir: &str, ext: &str| -> Vec<String> {
                names_in(&fuzz_dir().join(dir))
                    .into_iter()
                    .map(|f| f.strip_suffix(ext).map(str::to_string).unwrap_or(f))
                    .collect()
            };
            assert_eq!(strip("fuzz_targets", ".rs"), listed, "fuzz/fuzz_targets/");
            assert_eq!(strip("dict", ".dict"), listed, "fuzz/dict/");
            let manifest = std::fs::read_to_string(fuzz_dir().join("Cargo.toml")).expect("fuzz/Cargo.toml");
            for n in &listed {
                assert!(manifest.contains(&format!("name = \"{n}\"")), "fuzz/Cargo.toml lacks the bin {n}");
            }
        }
    };
}

replays!(
    mail_intake,
    from_line,
    registration,
    source_checks,
    lexer,
    referee_lines,
    island,
    protocol,
    folder_image,
    wire,
    bot_program,
);

/// The moves of older contests (format 1, seats from 0) and the same moves
/// in format 2 (players from 1, issue 36) read as the same moves, so they
/// expand alike: `referee_lines/D_0` and `D_format2`.
#[test]
fn the_referee_lines_corpus_reads_alike_in_both_transcript_formats() {
    use knobeln::discipline::transcript::{parse_moves, FULL_MAGIC, MOVES_MAGIC, MOVES_MAGIC_1};
    let dir = fuzz_dir().join("corpus/referee_lines");
    let mut n = 0;
    for d in ["ultimatum", "flooding", "footsteps", "morabaraba"] {
        let read = |name: &str| -> String {
            let bytes = std::fs::read(dir.join(name)).unwrap();
            String::from_utf8(bytes[1..].to_vec()).unwrap()
        };
        let (one, two) = (read(&format!("{d}_0")), read(&format!("{d}_format2")));
        assert!(
            one.starts_with(MOVES_MAGIC_1) && two.starts_with(MOVES_MAGIC),
            "{d}"
        );
        // Two players at most: the moves are checked against both.
        let a = parse_moves(&one, 2).unwrap_or_else(|e| panic!("{d}_0: {e}"));
        let b = parse_moves(&two, 2).unwrap_or_else(|e| panic!("{d}_format2: {e}"));
        assert_eq!(a, b, "{d}");
        assert!(!a.moves.is_empty(), "{d}");
        assert!(FULL_MAGIC.starts_with("# knobeln transcript 2"));
        n += 1;
    }
    assert_eq!(n, 4);
}
