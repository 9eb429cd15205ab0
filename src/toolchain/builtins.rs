//! The builtins a strategy may name: every `__builtin_` name gcc 12 (which
//! checks the text) and clang (zig's 22, which builds the program that
//! plays; Debian's 14) both know with the same meaning, whose result is
//! the same on every machine under WebAssembly. Check 6 refuses every other
//! `__builtin_` name in the preprocessed text, wherever it is written
//! (inside `__typeof__` or `sizeof` too, where gcc evaluates nothing and an
//! unknown name would be a call it never makes: red team E13): the list
//! is what both compilers were shown to agree on, not a list of names
//! known to be bad. `builtins_on_the_list_mean_the_same_to_gcc_and_clang`
//! (`tests/it/toolchain.rs`) builds every name on it with gcc and with the
//! clang that builds the module, and compares their values and types.
//!
//! The same holds for every other reserved identifier (one that begins
//! with two underscores, or with an underscore and a capital letter):
//! check 6 accepts only the keywords and keyword spellings on [`KEYWORDS`],
//! which gcc 12 and both clangs read alike in gnu17 on wasm32 and x86-64;
//! clang's builtins outside `__builtin_` (`__c11_atomic_load`,
//! `__arithmetic_fence`, the `__is_*` type traits, `__datasizeof`, …) are
//! in no object of gcc's when written inside `__typeof__` or `sizeof`, so
//! only a list of what is known alike closes them (H13, H14).
//!
//! Pure data.

/// The builtins a strategy may name (sorted).
///
/// Left out on purpose, though both compilers know them: the floating
/// point ones (`__builtin_inf`, `__builtin_nan`, …: their bits and
/// NaN payloads are the machine's), `__builtin_alloca` (the stack is
/// fixed), `__builtin_object_size` and `__builtin_classify_type` (what
/// the optimiser or the compiler's own classes answer),
/// `__builtin_frame_address`, `__builtin___clear_cache` (clang cannot build
/// it for WebAssembly), `__builtin_prefetch` (nothing to say),
/// `__builtin_LINE`/`FILE`/`FUNCTION` (the compilers' own notion of the
/// place); the ones check 2 already refuses with its own words
/// (`__builtin_ia32_…`, `__builtin_cpu_…`, `__builtin_apply`,
/// `__builtin_return…`, the cycle counter) and WebAssembly's
/// (`__builtin_wasm_…`: check 6's own words).
pub const BUILTINS: &[&str] = &[
    "__builtin_abs",
    "__builtin_add_overflow",
    "__builtin_bswap16",
    "__builtin_bswap32",
    "__builtin_bswap64",
    "__builtin_choose_expr",
    "__builtin_clrsb",
    "__builtin_clrsbl",
    "__builtin_clrsbll",
    "__builtin_clz",
    "__builtin_clzl",
    "__builtin_clzll",
    "__builtin_constant_p",
    "__builtin_ctz",
    "__builtin_ctzl",
    "__builtin_ctzll",
    "__builtin_expect",
    "__builtin_ffs",
    "__builtin_ffsl",
    "__builtin_ffsll",
    "__builtin_labs",
    "__builtin_llabs",
    "__builtin_memcmp",
    "__builtin_memcpy",
    "__builtin_memmove",
    "__builtin_memset",
    "__builtin_mul_overflow",
    "__builtin_offsetof",
    "__builtin_parity",
    "__builtin_parityl",
    "__builtin_parityll",
    "__builtin_popcount",
    "__builtin_popcountl",
    "__builtin_popcountll",
    "__builtin_sadd_overflow",
    "__builtin_saddl_overflow",
    "__builtin_saddll_overflow",
    "__builtin_smul_overflow",
    "__builtin_smull_overflow",
    "__builtin_smulll_overflow",
    "__builtin_ssub_overflow",
    "__builtin_ssubl_overflow",
    "__builtin_ssubll_overflow",
    "__builtin_sub_overflow",
    "__builtin_trap",
    "__builtin_types_compatible_p",
    "__builtin_uadd_overflow",
    "__builtin_uaddl_overflow",
    "__builtin_uaddll_overflow",
    "__builtin_umul_overflow",
    "__builtin_umull_overflow",
    "__builtin_umulll_overflow",
    "__builtin_unreachable",
    "__builtin_usub_overflow",
    "__builtin_usubl_overflow",
    "__builtin_usubll_overflow",
    "__builtin_va_arg",
    "__builtin_va_copy",
    "__builtin_va_end",
    "__builtin_va_list",
    "__builtin_va_start",
];

/// The reserved identifiers other than `__builtin_` names a strategy may
/// write (sorted): keywords and keyword spellings gcc 12 and clang (zig's
/// 22, Debian's 14) both accept in gnu17 with the same meaning on x86-64
/// and wasm32. `__int128` (and its typedef names) is 16 bytes aligned to
/// 16 on both; `_Thread_local` and `__thread` are plain globals in a
/// program of one thread (clang builds no TLS for wasm32 without
/// atomics); `__FUNCTION__` is `__func__` in C to both. The probe of
/// `builtins_on_the_list_mean_the_same_to_gcc_and_clang` uses them too.
///
/// Left out on purpose: `__PRETTY_FUNCTION__` (gcc writes `f`, clang
/// `int f(void)`), `__float128`, `_Decimal32`/`64`/`128`, `_FloatN`
/// (types one compiler knows and the other does not or not alike), the
/// `__`-spelled attribute names (`__unused__`: write `unused`), every
/// builtin outside `__builtin_` (`__c11_atomic_*`, `__scoped_atomic_*`,
/// `__atomic_*`, `__sync_*`, `__arithmetic_fence`, `__is_*`, `__has_*`,
/// `__datasizeof`, …).
pub const KEYWORDS: &[&str] = &[
    "_Alignas",
    "_Alignof",
    "_Atomic",
    "_Bool",
    "_Complex",
    "_Generic",
    "_Noreturn",
    "_Static_assert",
    "_Thread_local",
    "__FUNCTION__",
    "__alignof",
    "__alignof__",
    "__asm",
    "__asm__",
    "__attribute",
    "__attribute__",
    "__complex__",
    "__const",
    "__const__",
    "__extension__",
    "__func__",
    "__imag",
    "__imag__",
    "__inline",
    "__inline__",
    "__int128",
    "__int128_t",
    "__label__",
    "__real",
    "__real__",
    "__restrict",
    "__restrict__",
    "__signed",
    "__signed__",
    "__thread",
    "__typeof",
    "__typeof__",
    "__uint128_t",
    "__volatile",
    "__volatile__",
];

/// Whether `name` is reserved for the compiler in C: it begins with two
/// underscores, or with an underscore and a capital letter.
pub fn reserved(name: &str) -> bool {
    let b = name.as_bytes();
    b.len() > 1 && b[0] == b'_' && (b[1] == b'_' || b[1].is_ascii_uppercase())
}

/// Whether `name` is on [`KEYWORDS`].
pub fn keyword(name: &str) -> bool {
    KEYWORDS.binary_search(&name).is_ok()
}

/// Whether `name` is on [`BUILTINS`].
pub fn allowed(name: &str) -> bool {
    BUILTINS.binary_search(&name).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_is_sorted_and_every_name_a_builtin() {
        assert!(BUILTINS.windows(2).all(|w| w[0] < w[1]));
        assert!(BUILTINS
            .iter()
            .all(|n| n.starts_with("__builtin_") && !n.starts_with("__builtin_wasm_")));
        assert!(allowed("__builtin_popcount") && !allowed("__builtin_elementwise_abs"));
    }

    #[test]
    fn the_keywords_are_sorted_reserved_and_no_builtin() {
        assert!(KEYWORDS.windows(2).all(|w| w[0] < w[1]));
        assert!(KEYWORDS
            .iter()
            .all(|n| reserved(n) && !n.starts_with("__builtin_")));
        assert!(keyword("__typeof__") && !keyword("__c11_atomic_load"));
        assert!(reserved("_Foo") && reserved("__x") && !reserved("_foo") && !reserved("_"));
    }
}
