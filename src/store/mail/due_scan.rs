//! Test support for the retention passes (`processed_rows`, `sent_bodies`):
//! what SQLite does to find the rows a pass is due to take, its plan and
//! its steps, so that each pass's test can show it reads only the rows due
//! whatever the table holds. Asserts nothing itself: each test says what it
//! expects of its own query.

use rusqlite::{params, Connection, StatementStatus};

/// The plan's lines of `sql` (a pass's query of the rows due before `due`,
/// at most a limit of them).
pub(crate) fn query_plan(conn: &Connection, sql: &str, due: &str) -> Vec<String> {
    conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
        .unwrap()
        .query_map(params![due, 2000], |r| r.get(3))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap()
}

/// What one run of a pass's query `sql` took to find the rows due before
/// `due`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DueSteps {
    /// The rows it found.
    pub rows: usize,
    /// Its virtual machine's steps.
    pub vm: i32,
    /// Its steps of a full scan of a table (0: none).
    pub full_scan: i32,
    /// Its sorts (0: none).
    pub sorts: i32,
}

/// Runs `sql` for the rows due before `due` and counts what it took.
pub(crate) fn due_steps(conn: &Connection, sql: &str, due: &str) -> DueSteps {
    let mut st = conn.prepare(sql).unwrap();
    let rows = st
        .query_map(params![due, 100_000], |r| r.get::<_, i64>(0))
        .unwrap()
        .count();
    DueSteps {
        rows,
        vm: st.get_status(StatementStatus::VmStep),
        full_scan: st.get_status(StatementStatus::FullscanStep),
        sorts: st.get_status(StatementStatus::Sort),
    }
}
