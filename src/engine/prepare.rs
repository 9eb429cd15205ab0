//! Turns a folder of strategy sources into tournament entries: every `*.c`
//! is one team (team name = file stem). Sources are compiled with the
//! organizer's profile (all checks but the mail header), in parallel, and
//! cached in the store by their SHA-256, so a resumed run compiles nothing.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::{Clock, EngineError};
use crate::store::{NewVersion, Store, VersionId};
use crate::toolchain::compile::{compile, CompileConfig, Outcome, Profile};
use crate::toolchain::diagnostic::Severity;
use crate::tournament::TeamId;

/// A strategy that failed the compile checks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Rejected {
    pub team: String,
    pub errors: Vec<String>,
}

/// An accepted strategy.
#[derive(Debug, Clone)]
pub struct Accepted {
    pub team: TeamId,
    pub name: String,
    pub version: VersionId,
    pub source_sha256: String,
}

/// The outcome of preparing a folder.
#[derive(Debug, Clone, Default)]
pub struct Prepared {
    pub accepted: Vec<Accepted>,
    pub rejected: Vec<Rejected>,
}

pub use crate::hash::sha256_hex;

/// The `*.c` files of a folder, sorted by name.
pub fn strategy_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "c") && p.is_file())
        .collect();
    files.sort();
    Ok(files)
}

/// Compiles (or finds in the store) every strategy of `dir`.
pub fn prepare_folder(
    store: &Store,
    dir: &Path,
    jobs: usize,
    clock: &dyn Clock,
) -> Result<Prepared, EngineError> {
    let files = strategy_files(dir)?;
    if files.is_empty() {
        return Err(EngineError::Invalid(format!(
            "no *.c files in {}",
            dir.display()
        )));
    }
    let mut todo = Vec::new();
    let mut prepared = Prepared::default();
    let mut sources = Vec::new();
    for f in &files {
        let name = f
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let source = std::fs::read(f)?;
        let sha = sha256_hex(&source);
        let team = store.ensure_team(&name, clock.now())?;
        sources.push((team, name, source, sha));
    }
    for (i, (team, _name, source, sha)) in sources.iter().enumerate() {
        if store.version_by_source(*team, sha)?.is_some() {
            todo.push((i, true));
            continue;
        }
        // The same source compiled for another team: reuse it.
        if reuse_compiled(store, *team, source, sha, clock)? {
            todo.push((i, true));
            continue;
        }
        todo.push((i, false));
    }
    // Compile what is not cached, `jobs` at a time.
    let mut to_compile: Vec<usize> = todo
        .iter()
        .filter(|(_, cached)| !cached)
        .map(|(i, _)| *i)
        .collect();
    // Compile each distinct source once.
    let mut first_of: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let mut duplicates = Vec::new();
    to_compile.retain(|&i| {
        let first = *first_of.entry(sources[i].3.clone()).or_insert(i);
        if first == i {
            true
        } else {
            duplicates.push((i, first));
            false
        }
    });
    let cfg = CompileConfig {
        profile: Profile::Organizer,
        ..CompileConfig::default()
    };
    let mut compiled: Vec<(usize, Outcome)> = Vec::new();
    for chunk in to_compile.chunks(jobs.max(1)) {
        let results: Vec<Result<(usize, Outcome), EngineError>> = std::thread::scope(|s| {
            let handles: Vec<_> = chunk
                .iter()
                .map(|&i| {
                    let src = &sources[i].2;
                    let cfg = &cfg;
                    s.spawn(move || compile(src, cfg).map(|o| (i, o)).map_err(EngineError::from))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("compile thread"))
                .collect()
        });
        for r in results {
            compiled.push(r?);
        }
    }
    for (i, outcome) in compiled {
        let (team, _name, source, sha) = &sources[i];
        let report = outcome.report();
        let report_json = serde_json::to_string(report).expect("report serializes");
        let binary = match &outcome {
            Outcome::Accepted { binary, .. } => Some(binary.as_slice()),
            Outcome::Rejected { .. } => None,
        };
        store.insert_version(
            &NewVersion {
                team: *team,
                source,
                source_sha256: sha,
                binary,
                lexical_elements: report.lexical_elements,
                description: report.description.as_ref().map(|d| d.text.as_str()),
                report_json: &report_json,
            },
            clock.now(),
        )?;
    }
    // A source that several teams sent is compiled once: the others get a
    // copy of its twin's version, accepted or not.
    for (i, first) in duplicates {
        let (team, _name, _source, sha) = &sources[i];
        let version = store
            .version_by_source(sources[first].0, sha)?
            .expect("the twin's version was stored above");
        store.copy_version(version.id, *team, clock.now())?;
    }
    for (team, name, _source, sha) in &sources {
        let v = store
            .version_by_source(*team, sha)?
            .expect("every source was stored above");
        if v.accepted {
            prepared.accepted.push(Accepted {
                team: *team,
                name: name.clone(),
                version: v.id,
                source_sha256: sha.clone(),
            });
        } else {
            prepared.rejected.push(Rejected {
                team: name.clone(),
                errors: report_errors(&v.report),
            });
        }
    }
    Ok(prepared)
}

/// Stores a version for `team` that reuses an accepted compile of the same
/// source (by any team). Returns whether there was one.
fn reuse_compiled(
    store: &Store,
    team: TeamId,
    source: &[u8],
    sha: &str,
    clock: &dyn Clock,
) -> Result<bool, EngineError> {
    let Some((binary, lexical, description, report)) = store.compiled_by_source(sha)? else {
        return Ok(false);
    };
    store.insert_version(
        &NewVersion {
            team,
            source,
            source_sha256: sha,
            binary: Some(&binary),
            lexical_elements: lexical,
            description: description.as_deref(),
            report_json: &report,
        },
        clock.now(),
    )?;
    Ok(true)
}

/// The error lines of a stored compile report.
fn report_errors(report_json: &str) -> Vec<String> {
    let v: serde_json::Value = serde_json::from_str(report_json).unwrap_or_default();
    v.get("diagnostics")
        .and_then(|d| d.as_array())
        .map(|ds| {
            ds.iter()
                .filter(|d| {
                    d.get("severity").and_then(|s| s.as_str())
                        == Some(severity_name(Severity::Error))
                })
                .map(|d| {
                    let msg = d.get("message").and_then(|m| m.as_str()).unwrap_or("");
                    match d.get("line").and_then(|l| l.as_u64()) {
                        Some(l) => format!("line {l}: {msg}"),
                        None => msg.to_string(),
                    }
                })
                .collect()
        })
        .unwrap_or_default()
}

fn severity_name(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
    }
}
