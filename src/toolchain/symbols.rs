//! What a compiled strategy needs and defines, read from the symbol table
//! of clang's `wasm32` object: the object that is linked into the module
//! that plays (its `linking` custom section, read with wasmparser; no
//! external `nm`).
//!
//! Requirement 1 of 1994: no library routines except the five. The
//! compiler may emit calls to `memcpy`, `memset`, `memmove` and `memcmp`
//! on its own, and to compiler-rt's arithmetic helpers (names like
//! `__divti3`, `__multf3` for `long double`); the runtime and the builtins
//! library provide those. Which names are the compiler's helpers is read
//! from the builtins archive itself ([`archive_symbols`]), not guessed from
//! their shape. This module only reads symbols (it opens no file); wording
//! the rejection is [`super::compile`]'s job.

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

    /// Undefined symbols that are neither the five routines, nor `mem*`,
    /// nor one of the compiler's `helpers`.
    pub fn forbidden_calls(&self, helpers: &Helpers) -> Vec<&str> {
        self.undefined
            .iter()
            .map(String::as_str)
            .filter(|s| !is_allowed_undefined(s, helpers))
            .collect()
    }
}

/// Whether an undefined symbol is allowed in a strategy object.
pub fn is_allowed_undefined(name: &str, helpers: &Helpers) -> bool {
    LIBRARY_ROUTINES.contains(&name) || COMPILER_ROUTINES.contains(&name) || helpers.contains(name)
}

/// The compiler's helper routines: exactly the names the builtins archive
/// that wasm-ld links (compiler-rt's `libclang_rt.builtins-wasm32.a`)
/// defines, read from the archive's own symbol map ([`archive_symbols`]),
/// so that no name pattern decides what is a helper.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Helpers(std::collections::BTreeSet<String>);

impl Helpers {
    pub fn new(names: impl IntoIterator<Item = String>) -> Helpers {
        Helpers(names.into_iter().collect())
    }

    pub fn contains(&self, name: &str) -> bool {
        self.0.contains(name)
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The names an `ar` archive's symbol map says its members define (what
/// wasm-ld looks a missing symbol up in). `Err`: no archive, or no map.
pub fn archive_symbols(archive: &[u8]) -> Result<Helpers, String> {
    let file = object::read::archive::ArchiveFile::parse(archive)
        .map_err(|e| format!("the builtins archive cannot be read: {e}"))?;
    let map = file
        .symbols()
        .map_err(|e| format!("the builtins archive's symbol map cannot be read: {e}"))?
        .ok_or("the builtins archive has no symbol map")?;
    let mut names = Vec::new();
    for symbol in map {
        let symbol = symbol.map_err(|e| format!("the builtins archive's symbol map: {e}"))?;
        names.push(String::from_utf8_lossy(symbol.name()).into_owned());
    }
    if names.is_empty() {
        return Err("the builtins archive's symbol map is empty".into());
    }
    Ok(Helpers::new(names))
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
        let helpers = Helpers::new(["__divti3", "__multf3"].map(String::from));
        for s in LIBRARY_ROUTINES.iter().chain(COMPILER_ROUTINES.iter()) {
            assert!(is_allowed_undefined(s, &helpers), "{s}");
        }
        for s in ["__divti3", "__multf3"] {
            assert!(is_allowed_undefined(s, &helpers), "{s}");
        }
        // Shaped like a helper, but not in the archive: not allowed.
        for s in [
            "__udivti3",
            "printf",
            "malloc",
            "__libc_start_main",
            "__stack_chk_fail",
        ] {
            assert!(!is_allowed_undefined(s, &helpers), "{s}");
        }
    }

    /// A GNU `ar` archive with a symbol map, as llvm-ar writes it.
    #[test]
    fn the_symbol_map_of_an_archive_is_read() {
        let names = ["__powidf2", "__multi3"];
        let mut table = Vec::new();
        table.extend_from_slice(&(names.len() as u32).to_be_bytes());
        for _ in names {
            table.extend_from_slice(&0u32.to_be_bytes());
        }
        for n in names {
            table.extend_from_slice(n.as_bytes());
            table.push(0);
        }
        if table.len() % 2 == 1 {
            table.push(b'\n');
        }
        let mut ar = b"!<arch>\n".to_vec();
        ar.extend_from_slice(
            format!(
                "{:<16}{:<12}{:<6}{:<6}{:<8}{:<10}`\n",
                "/",
                0,
                0,
                0,
                0,
                table.len()
            )
            .as_bytes(),
        );
        ar.extend_from_slice(&table);
        let helpers = archive_symbols(&ar).expect("an archive with a map");
        assert_eq!(helpers.len(), 2);
        assert!(helpers.contains("__powidf2") && helpers.contains("__multi3"));
        assert!(archive_symbols(b"!<arch>\n").is_err());
        assert!(archive_symbols(b"not an archive").is_err());
    }
}
