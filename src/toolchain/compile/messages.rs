//! The participant's words for two failures of check 5 that no tool
//! words well: a crash of LLVM (one sentence, never its bug-report request,
//! stack dump or the server's paths) and a program whose static data and
//! stack do not fit into its memory.
//!
//! Pure text; it decides nothing (the compile service chooses when to say
//! them).

use crate::toolchain::gcc::ToolLimit;
use crate::toolchain::wasm;

/// What failed when clang crashed (LLVM's "PLEASE submit a bug report",
/// a stack dump, an error in its back end), in a few words; `None`: no crash.
pub(super) fn llvm_crash(messages: &str) -> Option<String> {
    let crashed = [
        "PLEASE submit a bug report",
        "Stack dump:",
        "error in backend",
    ]
    .iter()
    .any(|m| messages.contains(m));
    if !crashed {
        return None;
    }
    let why = messages
        .lines()
        .find_map(|l| l.split("error in backend: ").nth(1))
        .map(|w| w.trim().chars().take(120).collect::<String>())
        .filter(|w| !w.contains('/'))
        .unwrap_or_else(|| "the compiler crashed".into());
    Some(why)
}

/// The participant's words for a program whose static data and stack do
/// not fit into its memory (wasm-ld said it needs `needed` bytes).
pub(super) fn memory_message(needed: u64, limit: u64) -> String {
    let stack = wasm::SHADOW_STACK_BYTES;
    format!(
        "the program does not fit into the memory limit of {} kB (requirement 5): it needs \
         about {} kB (its static data are {} kB, and it has {} kB of stack for its own \
         use); make static arrays smaller by at least {} kB",
        limit / 1024,
        needed.div_ceil(1024),
        needed.saturating_sub(stack).div_ceil(1024),
        stack / 1024,
        needed.saturating_sub(limit).div_ceil(1024)
    )
}

/// The participant's words for a program whose build stopped at clang's
/// size limits in the jail (`limit`: its output file, or its memory):
/// what data far larger than the memory do, whichever data they are (a
/// static array, an initialiser, a compound literal only `sizeof` reads:
/// red team P2 of 2026-12-05, told "its static data are so large" with 4
/// bytes of static data).
pub(super) fn compiler_limit_message(
    limit: ToolLimit,
    memory_limit: u64,
    file_size: u64,
) -> String {
    let which = match limit {
        ToolLimit::OutputSize => {
            format!("the object clang wrote grew past {} MiB", file_size >> 20)
        }
        _ => "clang needed more memory than the compile may use".to_string(),
    };
    format!(
        "the program does not fit into the memory limit of {} kB (requirement 5): building it \
         stopped at the compiler's limits ({which}), as data far larger than the memory make \
         it (a static array, an initialiser or a compound literal of megabytes, even one only \
         `sizeof` reads); make them smaller",
        memory_limit / 1024
    )
}
