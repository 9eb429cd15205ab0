//! What every strategy is linked and checked against, made once per
//! process: the contest runtime compiled by clang for `wasm32` (in a jail
//! of its own), its symbols, and the names of the compiler's helpers (the
//! builtins archive's symbol map).
//!
//! It does not compile strategies, and it holds no state but these
//! once-made values.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use super::error::CompileError;
use crate::sandbox::jail::{Jail, JailError, JailLimits};
use crate::toolchain::gcc::{Gcc, GccRun, Input, RUNTIME_C};
use crate::toolchain::symbols::{self, Helpers, ObjectSymbols};
use crate::toolchain::wasm;

/// The symbols of [`runtime_wasm_object`], read once per process.
pub(super) fn runtime_symbols() -> Result<Arc<ObjectSymbols>, CompileError> {
    static SYMBOLS: OnceLock<Result<Arc<ObjectSymbols>, String>> = OnceLock::new();
    SYMBOLS
        .get_or_init(|| {
            let object = runtime_wasm_object().map_err(|e| e.to_string())?;
            symbols::inspect_object(&object).map(Arc::new)
        })
        .clone()
        .map_err(CompileError::Runtime)
}

/// The compiler's helper routines: the names the builtins archive that
/// wasm-ld links defines ([`wasm::Toolchain::builtins`]), read from its
/// symbol map once per process.
pub fn compiler_helpers() -> Result<Arc<Helpers>, CompileError> {
    Ok(helpers_and_archive()?.0)
}

/// The archive [`compiler_helpers`] were read from.
pub(super) fn helpers_archive() -> Result<PathBuf, CompileError> {
    Ok(helpers_and_archive()?.1)
}

fn helpers_and_archive() -> Result<(Arc<Helpers>, PathBuf), CompileError> {
    static HELPERS: OnceLock<Result<(Arc<Helpers>, PathBuf), String>> = OnceLock::new();
    HELPERS
        .get_or_init(|| {
            let tools = wasm::Toolchain::find().ok_or(wasm::Toolchain::MISSING)?;
            let archive = std::fs::read(&tools.builtins)
                .map_err(|e| format!("{}: {e}", tools.builtins.display()))?;
            let helpers = symbols::archive_symbols(&archive)?;
            Ok((Arc::new(helpers), tools.builtins))
        })
        .clone()
        .map_err(CompileError::Runtime)
}

/// The contest runtime compiled by clang for wasm32 (in the jail, with
/// the strategies' flags), once per process: every module links the same
/// bytes.
pub fn runtime_wasm_object() -> Result<Arc<Vec<u8>>, CompileError> {
    static OBJECT: OnceLock<Result<Arc<Vec<u8>>, String>> = OnceLock::new();
    OBJECT
        .get_or_init(|| {
            let tools = wasm::Toolchain::find().ok_or(wasm::Toolchain::MISSING)?;
            build_runtime(|gcc, out| tools.compile(gcc, Input::Source, "knobellib.c", out))
        })
        .clone()
        .map_err(CompileError::Runtime)
}

/// Compiles `knobellib.c` in a jail of its own with `compile`; the object.
fn build_runtime(
    compile: impl FnOnce(&Gcc<'_>, &str) -> Result<GccRun, JailError>,
) -> Result<Arc<Vec<u8>>, String> {
    let jail = Jail::new().map_err(|e| e.to_string())?;
    let gcc = Gcc::new(&jail, JailLimits::default());
    gcc.put("knobellib.c", RUNTIME_C.as_bytes())
        .map_err(|e| e.to_string())?;
    let rt = compile(&gcc, "knobellib.o").map_err(|e| e.to_string())?;
    if !rt.ok {
        return Err(rt.messages);
    }
    gcc.get("knobellib.o")
        .map(Arc::new)
        .map_err(|e| e.to_string())
}
