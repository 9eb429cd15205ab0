//! What a compiled strategy needs and defines, read from the symbol table
//! of clang's `wasm32` object: the object that is linked into the module
//! that plays (its `linking` custom section, read with wasmparser; no
//! external `nm`).
//!
//! Requirement 1 of 1994: no library routines except the five. The
//! compiler may emit calls to `memcpy`, `memset`, `memmove` and `memcmp`
//! on its own, and to compiler-rt's arithmetic helpers (names like
//! `__divti3`, `__multf3` for `long double`); the runtime and the builtins
//! library provide those. This module only reads symbols; wording the
//! rejection is [`super::compile`]'s job.

use wasmtime::wasmparser::{
    KnownCustom, Linking, Parser, Payload, SymbolFlags, SymbolInfo, TypeRef,
};

/// The five library routines of the rules.
pub const LIBRARY_ROUTINES: [&str; 5] = [
    "init_random",
    "log2",
    "next_random",
    "make_throw",
    "count_points",
];

/// Routines the compiler may call by itself, provided by the runtime.
pub const COMPILER_ROUTINES: [&str; 4] = ["memcpy", "memset", "memmove", "memcmp"];

/// What the participant's object file needs and defines.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ObjectSymbols {
    /// Undefined symbols (what it calls or uses from elsewhere), sorted.
    pub undefined: Vec<String>,
    /// Global symbols it defines, sorted.
    pub defined: Vec<String>,
    /// Those of them that are data (variables), sorted.
    pub defined_data: Vec<String>,
    /// Whether it has constructors (the `linking` section's init functions).
    pub constructors: bool,
}

impl ObjectSymbols {
    pub fn defines(&self, name: &str) -> bool {
        self.defined.iter().any(|d| d == name)
    }

    /// Undefined symbols that are neither the five routines nor compiler helpers.
    pub fn forbidden_calls(&self) -> Vec<&str> {
        self.undefined
            .iter()
            .map(String::as_str)
            .filter(|s| !is_allowed_undefined(s))
            .collect()
    }
}

/// Whether an undefined symbol is allowed in a strategy object.
pub fn is_allowed_undefined(name: &str) -> bool {
    LIBRARY_ROUTINES.contains(&name)
        || COMPILER_ROUTINES.contains(&name)
        || is_compiler_helper(name)
}

/// The compiler's arithmetic helpers (compiler-rt's, named as libgcc's):
/// `__` and lowercase letters and digits, ending in a digit (`__divti3`,
/// `__multf3`), or the `__float…`/`__fix…` conversions.
pub fn is_compiler_helper(name: &str) -> bool {
    let Some(rest) = name.strip_prefix("__") else {
        return false;
    };
    let simple = !rest.is_empty()
        && rest
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
    simple
        && (rest.ends_with(|c: char| c.is_ascii_digit())
            || rest.starts_with("float")
            || rest.starts_with("fix"))
}

/// Symbols the linker itself provides: the shadow stack's pointer and the
/// table of function pointers (a global and a table; a C variable of that
/// name is the participant's and is read as such).
pub const LINKER_SYMBOLS: [&str; 2] = ["__stack_pointer", "__indirect_function_table"];

/// Reads the symbols of clang's wasm32 object. `Err`: the object cannot be
/// read (the server's fault: clang made it).
pub fn inspect_object(object: &[u8]) -> Result<ObjectSymbols, String> {
    let mut out = ObjectSymbols::default();
    // The names of imported functions, globals and tables, by index: an
    // undefined symbol without an explicit name has its import's.
    let (mut funcs, mut globals, mut tables) = (Vec::new(), Vec::new(), Vec::new());
    let mut symbols = None;
    for payload in Parser::new(0).parse_all(object) {
        match payload.map_err(|e| format!("clang's object cannot be read: {e}"))? {
            Payload::ImportSection(r) => {
                for import in r.into_imports() {
                    let import = import.map_err(|e| e.to_string())?;
                    match import.ty {
                        TypeRef::Func(_) => funcs.push(import.name),
                        TypeRef::Global(_) => globals.push(import.name),
                        TypeRef::Table(_) => tables.push(import.name),
                        _ => {}
                    }
                }
            }
            Payload::CustomSection(c) => {
                if let KnownCustom::Linking(l) = c.as_known() {
                    for sub in l.subsections() {
                        match sub.map_err(|e| e.to_string())? {
                            Linking::InitFuncs(map) => out.constructors |= map.count() > 0,
                            Linking::SymbolTable(map) => {
                                let all: Result<Vec<_>, _> = map.into_iter().collect();
                                symbols = Some(all.map_err(|e| e.to_string())?);
                            }
                            _ => {}
                        }
                    }
                }
            }
            _ => {}
        }
    }
    let imported = |names: &[&str], index: u32, name: Option<&str>| -> String {
        name.or_else(|| names.get(index as usize).copied())
            .unwrap_or("?")
            .to_string()
    };
    for symbol in symbols.ok_or("clang's object has no symbol table")? {
        // (flags, name, whether it is the linker's kind of symbol, data)
        let (flags, name, linkers, data) = match symbol {
            SymbolInfo::Func { flags, index, name } => {
                (flags, imported(&funcs, index, name), false, false)
            }
            SymbolInfo::Data { flags, name, .. } => (flags, name.to_string(), false, true),
            SymbolInfo::Global { flags, index, name } => {
                (flags, imported(&globals, index, name), true, false)
            }
            SymbolInfo::Table { flags, index, name } => {
                (flags, imported(&tables, index, name), true, false)
            }
            SymbolInfo::Section { .. } | SymbolInfo::Event { .. } => continue,
        };
        if flags.contains(SymbolFlags::UNDEFINED) {
            if !(linkers && LINKER_SYMBOLS.contains(&name.as_str())) {
                out.undefined.push(name);
            }
        } else if !flags.contains(SymbolFlags::BINDING_LOCAL) {
            if data {
                out.defined_data.push(name.clone());
            }
            out.defined.push(name);
        }
    }
    out.undefined.sort();
    out.undefined.dedup();
    out.defined.sort();
    out.defined.dedup();
    out.defined_data.sort();
    out.defined_data.dedup();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allowed_undefined_symbols() {
        for s in LIBRARY_ROUTINES.iter().chain(COMPILER_ROUTINES.iter()) {
            assert!(is_allowed_undefined(s), "{s}");
        }
        for s in [
            "__divti3",
            "__udivti3",
            "__popcountdi2",
            "__floatuntidf",
            "__fixdfti",
        ] {
            assert!(is_allowed_undefined(s), "{s}");
        }
        for s in [
            "printf",
            "malloc",
            "open",
            "__libc_start_main",
            "__stack_chk_fail",
            "fork",
            "_exit",
        ] {
            assert!(!is_allowed_undefined(s), "{s}");
        }
    }
}
