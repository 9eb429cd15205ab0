//! The program that plays: a checked source compiled by clang for `wasm32`
//! and linked with the contest runtime, and the structural check of the
//! module that comes out.
//!
//! gcc keeps its role in check 5 (the announcement: "must be compilable
//! with gcc"); this module builds the same source a second time, with
//! clang and wasm-ld from Debian's `clang`, `lld` and
//! `libclang-rt-*-dev-wasm32`, inside the same jail. The module's shape is
//! the wall: [`check_module`] accepts only a module that imports exactly
//! the referee's functions, exports only `knobeln_start`, `main` and its
//! memory, has one memory no larger than the contest's limit, no start
//! function and no table or global shared with the outside. What a module
//! can do is then fixed by the WebAssembly semantics; no scan of code is
//! needed.
//!
//! Pure except for [`Toolchain`], which runs the tools in the jail.

use std::path::{Path, PathBuf};

use wasmtime::wasmparser::{
    Export, ExternalKind, FuncType, Import, Parser, Payload, TypeRef, ValType, Validator,
    WasmFeatures,
};

use super::gcc::{Gcc, GccRun};
use crate::sandbox::jail::JailError;

/// The shadow stack in the module's linear memory (arrays and variables
/// whose address is taken): the 64 kB every accepted strategy may use, as
/// the native runtime's start-up probe promised.
pub const SHADOW_STACK_BYTES: u64 = 64 * 1024;

/// The largest `.wasm` accepted (a strategy of 10000 lexical elements is
/// far smaller; this only bounds the work of a check).
pub const MAX_MODULE_BYTES: usize = 4 << 20;

/// The most table elements a module may declare (function pointers).
pub const MAX_TABLE_ELEMENTS: u64 = 16 * 1024;

/// Where the wasm tools are: one LLVM of Debian's with clang, wasm-ld and
/// the compiler-rt builtins for wasm32 (`long double`, 64-bit division
/// helpers, …). The paths are under `/usr`, which the jail shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Toolchain {
    pub clang: PathBuf,
    pub wasm_ld: PathBuf,
    pub builtins: PathBuf,
}

impl Toolchain {
    /// The newest LLVM under `/usr/lib/llvm-*` that has all three.
    pub fn find() -> Option<Toolchain> {
        let mut found: Vec<(u32, Toolchain)> = Vec::new();
        for entry in std::fs::read_dir("/usr/lib").ok()?.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some(version) = name
                .strip_prefix("llvm-")
                .and_then(|v| v.parse::<u32>().ok())
            else {
                continue;
            };
            let dir = entry.path();
            let clang = dir.join("bin/clang");
            let wasm_ld = dir.join("bin/wasm-ld");
            let Some(builtins) = builtins_under(&dir.join("lib/clang")) else {
                continue;
            };
            if clang.exists() && wasm_ld.exists() {
                found.push((
                    version,
                    Toolchain {
                        clang,
                        wasm_ld,
                        builtins,
                    },
                ));
            }
        }
        found.sort_by_key(|(v, _)| *v);
        found.pop().map(|(_, t)| t)
    }

    /// What to install when [`Toolchain::find`] finds nothing.
    pub const MISSING: &'static str = "clang, wasm-ld and the wasm32 builtins are missing \
         (Debian: apt-get install clang lld libclang-rt-14-dev-wasm32)";

    /// `clang -c` for wasm32: `src` into the object `out`.
    pub fn compile(&self, gcc: &Gcc<'_>, src: &str, out: &str) -> Result<GccRun, JailError> {
        let clang = self.clang.to_string_lossy();
        let mut argv: Vec<&str> = vec![&clang, "-c"];
        argv.extend_from_slice(CLANG_FLAGS);
        argv.extend_from_slice(&[src, "-o", out]);
        gcc.run_tool("clang", &argv)
    }

    /// wasm-ld: the objects and the builtins into the module `out`, with
    /// `memory_bytes` of linear memory (whole pages), fixed.
    pub fn link(
        &self,
        gcc: &Gcc<'_>,
        objects: &[&str],
        out: &str,
        memory_bytes: u64,
    ) -> Result<GccRun, JailError> {
        let wasm_ld = self.wasm_ld.to_string_lossy();
        let builtins = self.builtins.to_string_lossy();
        let memory = format!(
            "{}",
            memory_bytes / crate::wasm::PAGE_BYTES * crate::wasm::PAGE_BYTES
        );
        let initial = format!("--initial-memory={memory}");
        let max = format!("--max-memory={memory}");
        let stack = format!("stack-size={SHADOW_STACK_BYTES}");
        let mut argv: Vec<&str> = vec![
            &wasm_ld,
            "--no-entry",
            "--export=main",
            &initial,
            &max,
            "-z",
            &stack,
            "--stack-first",
            "--strip-all",
            "-o",
            out,
        ];
        argv.extend_from_slice(objects);
        argv.push(&builtins);
        gcc.run_tool("wasm-ld", &argv)
    }
}

fn builtins_under(dir: &Path) -> Option<PathBuf> {
    std::fs::read_dir(dir).ok()?.flatten().find_map(|v| {
        let p = v.path().join("lib/wasi/libclang_rt.builtins-wasm32.a");
        p.exists().then_some(p)
    })
}

/// clang's flags for a strategy: freestanding C for WebAssembly 1.0 (no
/// bulk memory, no sign-extension operators: `-mcpu=mvp`), no headers, no
/// builtins (`log2` is the runtime's), errors only (gcc's warnings are in
/// the report already).
pub const CLANG_FLAGS: &[&str] = &[
    "--target=wasm32",
    "-mcpu=mvp",
    "-x",
    "c",
    "-O2",
    "-ffreestanding",
    "-fno-builtin",
    "-nostdinc",
    "-nostdlib",
    "-w",
    "-fno-color-diagnostics",
    "-fno-caret-diagnostics",
    "-ferror-limit=30",
];

/// What wasm-ld said that a participant can act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkProblem {
    /// Static data and the shadow stack need more than the memory limit.
    Memory { needed_bytes: u64 },
    /// A function is called with other arguments than it takes (wasm-ld
    /// would link a trap in its place).
    Signature { function: String },
}

/// The problems in wasm-ld's messages.
pub fn link_problems(messages: &str) -> Vec<LinkProblem> {
    let mut out = Vec::new();
    for line in messages.lines() {
        if let Some(rest) = line.split("initial memory too small, ").nth(1) {
            if let Some(n) = rest
                .split_whitespace()
                .next()
                .and_then(|n| n.parse::<u64>().ok())
            {
                out.push(LinkProblem::Memory { needed_bytes: n });
            }
        } else if let Some(name) = line.split("function signature mismatch: ").nth(1) {
            let function = name.trim().to_string();
            if function != "main" {
                out.push(LinkProblem::Signature { function });
            }
        }
    }
    out
}

/// The referee's functions a module may import: (name, parameters, results).
const IMPORTS: &[(&str, &[ValType], &[ValType])] = &[
    ("make_throw", &[ValType::I32], &[ValType::I32]),
    ("seed", &[], &[ValType::I64]),
];

/// The import module of the referee's functions.
pub const IMPORT_MODULE: &str = "knobeln";

/// What the structural check learnt of an accepted module.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// The linear memory's size, in bytes.
    pub memory_bytes: u64,
    /// The parameters of `main` (0 to 3, all `int`).
    pub main_params: usize,
}

/// Checks that `wasm` is a module of the contest's shape with at most
/// `max_memory_bytes` of linear memory. Linear in the module's size.
/// `Err`: every problem, in words for the participant.
pub fn check_module(wasm: &[u8], max_memory_bytes: u64) -> Result<Shape, Vec<String>> {
    if wasm.len() > MAX_MODULE_BYTES {
        return Err(vec![format!(
            "the program is {} bytes long; at most {MAX_MODULE_BYTES} are accepted",
            wasm.len()
        )]);
    }
    let mut validator = Validator::new_with_features(WasmFeatures::WASM1);
    if let Err(e) = validator.validate_all(wasm) {
        return Err(vec![format!(
            "the program is not a valid WebAssembly 1.0 module: {e}"
        )]);
    }
    let mut problems = Vec::new();
    let mut types: Vec<FuncType> = Vec::new();
    let mut func_types: Vec<u32> = Vec::new(); // type index of every function, imports first
    let mut memories: Vec<(u64, Option<u64>)> = Vec::new();
    let mut exports: Vec<(String, ExternalKind, u32)> = Vec::new();
    for payload in Parser::new(0).parse_all(wasm) {
        let Ok(payload) = payload else {
            problems.push("the program cannot be read as a WebAssembly module".into());
            break;
        };
        match payload {
            Payload::TypeSection(r) => {
                for group in r.into_iter().flatten() {
                    for t in group.types() {
                        types.push(t.unwrap_func().clone());
                    }
                }
            }
            Payload::ImportSection(r) => {
                for import in r.into_imports().flatten() {
                    check_import(&import, &types, &mut problems);
                    match import.ty {
                        TypeRef::Func(t) => func_types.push(t),
                        TypeRef::Memory(_) => problems
                            .push("imports its memory; a strategy has a memory of its own".into()),
                        _ => {}
                    }
                }
            }
            Payload::FunctionSection(r) => func_types.extend(r.into_iter().flatten()),
            Payload::MemorySection(r) => {
                for m in r.into_iter().flatten() {
                    memories.push((m.initial, m.maximum));
                }
            }
            Payload::TableSection(r) => {
                for t in r.into_iter().flatten() {
                    if t.ty.initial > MAX_TABLE_ELEMENTS {
                        problems.push(format!(
                            "has a table of {} function pointers; at most {MAX_TABLE_ELEMENTS} \
                             are allowed",
                            t.ty.initial
                        ));
                    }
                }
            }
            Payload::ExportSection(r) => {
                for Export { name, kind, index } in r.into_iter().flatten() {
                    exports.push((name.to_string(), kind, index));
                }
            }
            Payload::StartSection { .. } => {
                problems.push("has a start function; no code may run before main()".into())
            }
            _ => {}
        }
    }
    let memory_bytes = match memories.as_slice() {
        [(initial, Some(max))] => {
            let bytes = max.saturating_mul(crate::wasm::PAGE_BYTES);
            if bytes > max_memory_bytes || initial > max {
                problems.push(format!(
                    "declares {} kB of memory; a strategy may use {} kB",
                    bytes / 1024,
                    max_memory_bytes / 1024
                ));
            }
            bytes
        }
        [_] => {
            problems.push("its memory has no maximum; the runtime's link fixes it".into());
            0
        }
        [] => {
            problems.push("has no memory of its own".into());
            0
        }
        _ => {
            problems.push("has more than one memory".into());
            0
        }
    };
    let func_type = |index: u32| -> Option<&FuncType> {
        func_types
            .get(index as usize)
            .and_then(|t| types.get(*t as usize))
    };
    let mut main_params = None;
    let mut has_knobeln_start = false;
    for (name, kind, index) in &exports {
        match (name.as_str(), kind) {
            ("memory", ExternalKind::Memory) => {}
            ("knobeln_start", ExternalKind::Func) => {
                has_knobeln_start = func_type(*index).is_some_and(|t| t.params().is_empty());
            }
            ("main", ExternalKind::Func) => {
                let t = func_type(*index);
                let ok = t.is_some_and(|t| {
                    t.params().len() <= 3
                        && t.params().iter().all(|p| *p == ValType::I32)
                        && t.results().len() <= 1
                });
                if ok {
                    main_params = t.map(|t| t.params().len());
                } else {
                    problems.push(
                        "main must be `int main()` or `int main(int argc, char **argv)`".into(),
                    );
                }
            }
            _ => problems.push(format!(
                "exports `{name}`; a strategy exports nothing but main (the runtime's \
                 knobeln_start and memory aside)"
            )),
        }
    }
    if !has_knobeln_start {
        problems.push("lacks the runtime's entry knobeln_start (link it with knobellib.c)".into());
    }
    if main_params.is_none() && !problems.iter().any(|p| p.starts_with("main must")) {
        problems.push("defines no function main".into());
    }
    if problems.is_empty() {
        Ok(Shape {
            memory_bytes,
            main_params: main_params.unwrap_or(0),
        })
    } else {
        Err(problems)
    }
}

fn check_import(import: &Import<'_>, types: &[FuncType], problems: &mut Vec<String>) {
    let allowed = IMPORTS.iter().find(|(name, _, _)| *name == import.name);
    let ok = import.module == IMPORT_MODULE
        && match (allowed, import.ty) {
            (Some((_, params, results)), TypeRef::Func(t)) => types
                .get(t as usize)
                .is_some_and(|f| f.params() == *params && f.results() == *results),
            _ => false,
        };
    if !ok {
        problems.push(format!(
            "imports `{}.{}`; a strategy may import only the referee's make_throw and seed \
             (through the five library routines)",
            import.module, import.name
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wasm_ld_messages_become_problems() {
        let m = "wasm-ld: error: initial memory too small, 1065544 bytes needed\n\
                 wasm-ld: warning: function signature mismatch: next_random\n\
                 >>> defined as (i32) -> i32 in strategy.o\n\
                 wasm-ld: warning: function signature mismatch: main\n";
        assert_eq!(
            link_problems(m),
            vec![
                LinkProblem::Memory {
                    needed_bytes: 1_065_544
                },
                LinkProblem::Signature {
                    function: "next_random".into()
                }
            ]
        );
    }
}
