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
}
