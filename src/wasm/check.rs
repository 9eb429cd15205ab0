//! The structural wall every module passes before it is stored or played:
//! exactly the referee's imports, only `main`, `knobeln_start` and the
//! memory exported, one memory within the limit and its static data inside
//! it, no start function, bounded sizes (pure, wasmparser, linear in the
//! module's size). The compile service checks what it built with it, and
//! the engine checks again before it compiles ([`super::modules`]). Building
//! modules is `crate::toolchain::wasm`'s; this file runs nothing.

use wasmtime::wasmparser::{
    DataKind, Export, ExternalKind, FuncType, Import, Operator, Parser, Payload, TypeRef, ValType,
    Validator, WasmFeatures,
};

/// The largest `.wasm` accepted. A strategy of 10000 lexical elements
/// makes a few kB to some tens of kB (forced inlining is refused); these
/// limits bound the work and memory of the engine's compiler (Cranelift),
/// which runs in the server's process: `knobeln bench compile` measures
/// it at [`MAX_FUNCTION_BYTES`] and the book (docs/src/security.md) states
/// the figure.
pub const MAX_MODULE_BYTES: usize = 1 << 20;

/// The largest body of one function, in bytes of its code.
pub const MAX_FUNCTION_BYTES: usize = 64 << 10;

/// How many functions at [`MAX_FUNCTION_BYTES`] fit into a module of
/// [`MAX_MODULE_BYTES`].
pub const MODULE_FUNCTIONS_AT_LIMIT: usize = MAX_MODULE_BYTES / MAX_FUNCTION_BYTES - 1;

/// The most functions a module may define.
pub const MAX_FUNCTIONS: u32 = 4096;

/// The most local variables one function may declare.
pub const MAX_FUNCTION_LOCALS: u32 = 4096;

/// The most table elements a module may declare (function pointers).
pub const MAX_TABLE_ELEMENTS: u64 = 16 * 1024;

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
    /// Where the static data the module writes into its memory ends (the
    /// end of its last data segment; zero-initialised data and the stack
    /// are laid out by wasm-ld within the memory, which they must fit).
    pub data_bytes: u64,
    /// The bytes of code of all its functions.
    pub code_bytes: u64,
    /// The parameters of `main` (0 to 3, all `int`).
    pub main_params: usize,
    /// Made by [`check_module`] alone: a `Shape` anywhere is what the check
    /// learnt of a module it accepted (the module spill keeps one as the
    /// proof that its module was checked).
    checked: Accepted,
}

/// The mark only [`check_module`] puts on a [`Shape`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Accepted;

/// Checks that `wasm` is a module of the contest's shape with at most
/// `max_memory_bytes` of linear memory, its static data within it. Linear
/// in the module's size.
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
    // Which of the referee's functions the module imports: all of them
    // (a strategy that defined `knobeln_referee_seed` itself would link
    // without the import and pick its own seed).
    let mut imported = [false; IMPORTS.len()];
    let (mut data_bytes, mut code_bytes) = (0u64, 0u64);
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
                    if let Some(i) = check_import(&import, &types, &mut problems) {
                        imported[i] = true;
                    }
                    match import.ty {
                        TypeRef::Func(t) => func_types.push(t),
                        TypeRef::Memory(_) => problems
                            .push("imports its memory; a strategy has a memory of its own".into()),
                        _ => {}
                    }
                }
            }
            Payload::FunctionSection(r) => {
                if r.count() > MAX_FUNCTIONS {
                    problems.push(format!(
                        "has {} functions; at most {MAX_FUNCTIONS} are allowed",
                        r.count()
                    ));
                }
                func_types.extend(r.into_iter().flatten())
            }
            Payload::CodeSectionEntry(body) => {
                let bytes = body.range().len();
                code_bytes += bytes as u64;
                if bytes > MAX_FUNCTION_BYTES {
                    problems.push(format!(
                        "has a function of {} kB of code; at most {} kB are allowed (split it \
                         into smaller functions)",
                        bytes.div_ceil(1024),
                        MAX_FUNCTION_BYTES / 1024
                    ));
                }
                let locals: u64 = body
                    .get_locals_reader()
                    .into_iter()
                    .flatten()
                    .flatten()
                    .map(|(n, _)| u64::from(n))
                    .sum();
                if locals > u64::from(MAX_FUNCTION_LOCALS) {
                    problems.push(format!(
                        "has a function with {locals} local variables; at most \
                         {MAX_FUNCTION_LOCALS} are allowed"
                    ));
                }
            }
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
            Payload::DataSection(r) => {
                for data in r.into_iter().flatten() {
                    let DataKind::Active { offset_expr, .. } = data.kind else {
                        continue;
                    };
                    let offset = match offset_expr.get_operators_reader().read() {
                        Ok(Operator::I32Const { value }) => Some(u64::from(value as u32)),
                        _ => None,
                    };
                    match offset {
                        Some(at) => data_bytes = data_bytes.max(at + data.data.len() as u64),
                        None => problems
                            .push("has static data at an address that is not a constant".into()),
                    }
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
            let bytes = max.saturating_mul(super::engine::PAGE_BYTES);
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
    if data_bytes > memory_bytes && memory_bytes > 0 {
        problems.push(format!(
            "has static data up to byte {data_bytes}, beyond its memory of {} kB",
            memory_bytes / 1024
        ));
    }
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
    for ((name, _, _), seen) in IMPORTS.iter().zip(imported) {
        if !seen {
            problems.push(format!(
                "does not import the referee's `{IMPORT_MODULE}.{name}`: a strategy reaches \
                 the referee only through the contest runtime (knobellib.c), which imports it; \
                 does the program define a name of the runtime's?"
            ));
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
            checked: Accepted,
            memory_bytes,
            data_bytes,
            code_bytes,
            main_params: main_params.unwrap_or(0),
        })
    } else {
        Err(problems)
    }
}

/// Checks one import; `Some(i)`: it is the referee's function `IMPORTS[i]`.
fn check_import(
    import: &Import<'_>,
    types: &[FuncType],
    problems: &mut Vec<String>,
) -> Option<usize> {
    let allowed = IMPORTS.iter().position(|(name, _, _)| *name == import.name);
    let ok = import.module == IMPORT_MODULE
        && match (allowed.map(|i| IMPORTS[i]), import.ty) {
            (Some((_, params, results)), TypeRef::Func(t)) => types
                .get(t as usize)
                .is_some_and(|f| f.params() == params && f.results() == results),
            _ => false,
        };
    if !ok {
        problems.push(format!(
            "imports `{}.{}`; a strategy may import only the referee's make_throw and seed \
             (through the five library routines)",
            import.module, import.name
        ));
    }
    allowed.filter(|_| ok)
}

/// The code of a synthetic function ([`straight_line_module`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StraightLine {
    /// A chain: a local plus a load from memory, again and again (one
    /// value live at a time).
    Chain,
    /// As many loads as fit, all live at once, then added up (the most
    /// values live at once: the register allocator's worst case).
    Wide,
}

/// A module of the contest's shape with `functions` straight-line
/// functions of about `body_bytes` bytes of code each, the first of them
/// `main`: what the engine's compiler is measured and tested on at
/// [`MAX_FUNCTION_BYTES`] and [`MAX_MODULE_BYTES`]. Loads from memory keep
/// the compiler from folding the code away.
pub fn straight_line_module(shape: StraightLine, functions: usize, body_bytes: usize) -> Vec<u8> {
    straight_line_module_importing(shape, functions, body_bytes, &["make_throw", "seed"])
}

/// [`straight_line_module`] importing only the referee's functions named
/// in `imports` (from `make_throw` and `seed`).
pub fn straight_line_module_importing(
    shape: StraightLine,
    functions: usize,
    body_bytes: usize,
    imports: &[&str],
) -> Vec<u8> {
    fn leb(mut n: usize, out: &mut Vec<u8>) {
        loop {
            let byte = (n & 0x7f) as u8;
            n >>= 7;
            if n == 0 {
                out.push(byte);
                return;
            }
            out.push(byte | 0x80);
        }
    }
    fn section(id: u8, content: &[u8], out: &mut Vec<u8>) {
        out.push(id);
        leb(content.len(), out);
        out.extend_from_slice(content);
    }
    let mut main = vec![0x01, 0x01, 0x7f]; // one i32 local
    let room = body_bytes.saturating_sub(main.len() + 9);
    match shape {
        StraightLine::Chain => {
            // local.get 0; i32.load offset=k; local.get 0; i32.add; local.set 0
            for k in 0..room / 10 {
                let k = (k % 128) as u8;
                main.extend_from_slice(&[0x20, 0x00, 0x28, 0x02, k, 0x20, 0x00, 0x6a, 0x21, 0x00]);
            }
        }
        StraightLine::Wide => {
            // n × (local.get 0; i32.load offset=k), (n-1) × i32.add, local.set 0
            let n = ((room.saturating_sub(2)) / 6).max(1);
            for k in 0..n {
                main.extend_from_slice(&[0x20, 0x00, 0x28, 0x02, (k % 128) as u8]);
            }
            main.extend(std::iter::repeat_n(0x6a, n - 1));
            main.extend_from_slice(&[0x21, 0x00]);
        }
    }
    // i32.store of the local at address 0: nothing is dead code.
    main.extend_from_slice(&[0x41, 0x00, 0x20, 0x00, 0x36, 0x02, 0x00]);
    main.push(0x0b);
    let mut out = b"\0asm\x01\0\0\0".to_vec();
    // type 0: () -> (), type 1: (i32) -> i32, type 2: () -> i64
    section(
        1,
        &[
            0x03, 0x60, 0x00, 0x00, 0x60, 0x01, 0x7f, 0x01, 0x7f, 0x60, 0x00, 0x01, 0x7e,
        ],
        &mut out,
    );
    let mut imported = vec![imports.len() as u8];
    for name in imports {
        let ty = if *name == "seed" { 2 } else { 1 };
        leb(IMPORT_MODULE.len(), &mut imported);
        imported.extend_from_slice(IMPORT_MODULE.as_bytes());
        leb(name.len(), &mut imported);
        imported.extend_from_slice(name.as_bytes());
        imported.extend_from_slice(&[0x00, ty]);
    }
    section(2, &imported, &mut out);
    let first = imports.len() as u8; // the index of the first defined function
    let mut declared = Vec::new();
    leb(functions + 1, &mut declared);
    declared.extend(std::iter::repeat_n(0u8, functions + 1)); // all of type 0
    section(3, &declared, &mut out);
    section(5, &[0x01, 0x01, 0x10, 0x10], &mut out); // memory: 16 pages, fixed
    let mut exports = vec![0x03];
    for (name, kind, index) in [
        ("memory", 2u8, 0u8),
        ("knobeln_start", 0, first),
        ("main", 0, first + 1),
    ] {
        leb(name.len(), &mut exports);
        exports.extend_from_slice(name.as_bytes());
        exports.extend_from_slice(&[kind, index]);
    }
    section(7, &exports, &mut out);
    let mut code = Vec::new();
    leb(functions + 1, &mut code);
    code.extend_from_slice(&[0x02, 0x00, 0x0b]); // knobeln_start: no locals, end
    for _ in 0..functions {
        leb(main.len(), &mut code);
        code.extend_from_slice(&main);
    }
    section(10, &code, &mut out);
    out
}
