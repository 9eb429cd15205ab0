//! What only tests compile: golden files held against what the code
//! writes now. Nothing in the server or the benches calls it.

use std::path::Path;

/// Holds `actual` equal to the golden file `tests/data/snapshots/FOLDER/NAME`.
/// With `KNOBELN_UPDATE_SNAPSHOTS` set it writes the file instead (review
/// the diff). A difference fails with `what` and the text written now.
pub(crate) fn assert_golden(folder: &str, name: &str, actual: &str, what: &str) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/snapshots")
        .join(folder);
    let path = dir.join(name);
    if std::env::var_os("KNOBELN_UPDATE_SNAPSHOTS").is_some() {
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let golden = std::fs::read_to_string(&path)
        .unwrap_or_else(|_| panic!("no {}; run with KNOBELN_UPDATE_SNAPSHOTS=1", path.display()));
    assert!(
        actual == golden,
        "{what} differs from {}:\n{actual}",
        path.display()
    );
}

/// Marks a contest of a bot discipline (flooding) as started and running,
/// as its start does, with nothing else of it: the row that closes the
/// registration and tells `status` the contest's phase.
pub(crate) fn a_bot_contest_runs(conn: &rusqlite::Connection) {
    conn.execute(
        "INSERT INTO bot_contests (discipline, seed, config, entries, islands, state, started_at) \
         VALUES ('flooding', 1, '{}', '[]', '[]', 'running', '2026-01-01T00:00:00Z')",
        [],
    )
    .unwrap();
}
