//! Red team F9, an open hole kept out of the suite (cargo builds no file of
//! `tests/attacks/`; the test fails on main since 6dc7a03): to run it,
//! append this test to
//! `tests/it/toolchain.rs` and run
//! `cargo test --locked --test it a_program_saying_no_space_left`.
//!
//! `Jail::run` sets `work_full = Some(WorkFull::NoSpace)` whenever a failed
//! tool's output contains "No space left on device", and `Gcc::interpret`
//! then adds the limit "gcc filled its work folder (its 64 MB or its 256
//! files) and failed ..." to the report. The words can be the program's
//! own: an `#error No space left on device` or a failed
//! `_Static_assert(0, "No space left on device")` (a string can be
//! assembled by macros and escapes, so no search of the source finds every
//! way). The rejection stands and is the program's own; only its report
//! carries a false sentence. Nobody else's compile is affected: every
//! compile has a jail and a tmpfs of its own.

/// Red team (F9): a program whose own diagnostic says `No space left on
/// device` (an `#error`, a failed static assertion) is rejected for what
/// it says, at its line: the report never says that gcc filled its work
/// folder, which it did not (the folder's free pages and inodes are the
/// measure; the words alone are the program's).
#[test]
fn a_program_saying_no_space_left_is_not_reported_as_a_full_work_folder() {
    let base = fs::read_to_string(source_path("syntax_error")).unwrap();
    for (what, line) in [
        ("#error", "#error No space left on device\n"),
        (
            "a static assertion",
            "_Static_assert(0, \"No space left on device\");\n",
        ),
    ] {
        let src = base.replace("x = = 3;", "x = 3;").replace("main()\n", &format!("{line}main()\n"));
        let outcome = compile_source(src.as_bytes(), Profile::Submission);
        let report = outcome.report();
        assert!(!outcome.accepted(), "{what}");
        let errors: Vec<String> = report.errors().map(|e| e.message.clone()).collect();
        assert!(
            errors.iter().all(|e| !e.contains("filled its work folder")),
            "{what}: {errors:#?}"
        );
        assert!(
            errors.iter().any(|e| e.contains("No space left on device")),
            "{what}: the program's own words: {errors:#?}"
        );
    }
}
