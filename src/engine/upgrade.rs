//! Rebuilds, as WebAssembly modules, the native programs that a version
//! before modules stored for its accepted strategies: no contest path runs
//! native code, so a database of an older version would otherwise have
//! every such strategy fail at throw 1 of every game.
//!
//! The stored source (its `<<FROM>>` string masked; the checks of the
//! announcement were passed when it was accepted) is compiled again with
//! the local profile and the contest's memory limit. A source that no
//! longer builds (clang refuses what gcc took) keeps its old program and
//! is logged: it then fails its games with "could not be started", which
//! is that team's failure, never a fault that stops the contest.
//!
//! Idempotent: a database without native programs costs one query.

use super::EngineError;
use crate::store::Store;
use crate::toolchain::compile::{compile, CompileConfig, Outcome};

/// What an upgrade did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Rebuilt {
    /// Versions whose program is now a module.
    pub rebuilt: usize,
    /// Versions whose source no longer builds (left as they were).
    pub failed: usize,
}

/// Rebuilds every native KNOBELN program in `store` as a module with
/// `memory_limit` bytes of memory.
pub fn rebuild_native_programs(store: &Store, memory_limit: u64) -> Result<Rebuilt, EngineError> {
    let mut done = Rebuilt::default();
    let versions = store.native_knobeln_versions()?;
    if versions.is_empty() {
        return Ok(done);
    }
    tracing::info!(
        "rebuilding {} strategies stored as native programs as WebAssembly modules",
        versions.len()
    );
    let cfg = CompileConfig {
        memory_limit,
        ..CompileConfig::local()
    };
    for (version, source) in versions {
        match compile(&source, &cfg)? {
            Outcome::Accepted { binary, .. } => {
                store.replace_binary(version, &binary)?;
                done.rebuilt += 1;
            }
            Outcome::Rejected { report } => {
                let errors: Vec<String> = report.errors().map(|d| d.message.clone()).collect();
                tracing::warn!(
                    "version {} does not build as a module and keeps its native program \
                     (its games will fail at throw 1): {}",
                    version.0,
                    errors.join("; ")
                );
                done.failed += 1;
            }
        }
    }
    Ok(done)
}
