//! What a compiled strategy object needs and defines, read from its ELF
//! symbol table (no external `nm`).
//!
//! Requirement 1 of 1994: no library routines except the five. gcc may emit
//! calls to `memcpy`, `memset`, `memmove` and `memcmp` on its own, and to
//! libgcc's arithmetic helpers (names like `__divti3`); the runtime and
//! libgcc provide those. This module only reads symbols; wording the
//! rejection is [`super::compile`]'s job.

use object::{Object, ObjectSection, ObjectSegment, ObjectSymbol, SymbolKind};

/// The five library routines of the rules.
pub const LIBRARY_ROUTINES: [&str; 5] = [
    "init_random",
    "log2",
    "next_random",
    "make_throw",
    "count_points",
];

/// Routines gcc may call by itself, provided by the runtime.
pub const COMPILER_ROUTINES: [&str; 4] = ["memcpy", "memset", "memmove", "memcmp"];

/// What the participant's object file needs and defines.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ObjectSymbols {
    /// Undefined symbols (what it calls or uses from elsewhere), sorted.
    pub undefined: Vec<String>,
    /// Global symbols it defines, sorted.
    pub defined: Vec<String>,
    /// Whether it has constructor sections (`.init_array`, `.ctors`, `.preinit_array`).
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
    LIBRARY_ROUTINES.contains(&name) || COMPILER_ROUTINES.contains(&name) || is_libgcc_helper(name)
}

/// libgcc's helpers: `__` and lowercase letters and digits, ending in a digit
/// (`__divti3`, `__popcountdi2`), or the `__float…`/`__fix…` conversions.
fn is_libgcc_helper(name: &str) -> bool {
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

/// Reads the symbols of an ELF object.
pub fn inspect_object(bytes: &[u8]) -> Result<ObjectSymbols, object::Error> {
    let file = object::File::parse(bytes)?;
    let mut out = ObjectSymbols::default();
    for sym in file.symbols() {
        let Ok(name) = sym.name() else { continue };
        if name.is_empty() || sym.kind() == SymbolKind::File || sym.kind() == SymbolKind::Section {
            continue;
        }
        if sym.is_undefined() {
            out.undefined.push(name.to_string());
        } else if sym.is_global() {
            out.defined.push(name.to_string());
        }
    }
    out.undefined.sort();
    out.undefined.dedup();
    out.defined.sort();
    out.defined.dedup();
    out.constructors = file.sections().any(|s| {
        let n = s.name().unwrap_or("");
        n.starts_with(".init_array") || n.starts_with(".ctors") || n.starts_with(".preinit_array")
    });
    Ok(out)
}

/// The memory a linked executable maps at start: the sum of its loadable
/// segments' sizes in memory (code, data, bss), rounded up to pages.
pub fn image_size(bytes: &[u8]) -> Result<u64, object::Error> {
    let file = object::File::parse(bytes)?;
    let page = 4096u64;
    Ok(file
        .segments()
        .map(|s| {
            let start = s.address() & !(page - 1);
            let end = (s.address() + s.size()).div_ceil(page) * page;
            end - start
        })
        .sum())
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
