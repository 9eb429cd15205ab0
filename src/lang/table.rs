//! [`LanguageTable`], the table in force: the built-ins with the
//! config's entries, each entry checked (names, placeholders, commands).
//!
//! Not here: whether an entry's programs exist on this machine
//! (`toolchains.rs`).

use super::builtin::builtin;
use super::language::Language;

/// The table in force: the built-ins with the config's entries (an entry
/// with a built-in's name replaces it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LanguageTable {
    pub languages: Vec<Language>,
}

const PLACEHOLDERS: [&str; 4] = ["{source}", "{stem}", "{toolchain}", "{memory_mb}"];

impl LanguageTable {
    pub fn builtin() -> LanguageTable {
        LanguageTable {
            languages: builtin(),
        }
    }

    /// The built-ins with `overrides`, validated.
    pub fn with(overrides: &[Language]) -> Result<LanguageTable, String> {
        let mut languages = builtin();
        for o in overrides {
            match languages.iter_mut().find(|l| l.name == o.name) {
                Some(l) => *l = o.clone(),
                None => languages.push(o.clone()),
            }
        }
        for l in &languages {
            validate(l).map_err(|e| format!("language {:?}: {e}", l.name))?;
        }
        for (i, a) in languages.iter().enumerate() {
            for b in &languages[i + 1..] {
                if let Some(e) = a.extensions.iter().find(|e| b.extensions.contains(e)) {
                    return Err(format!(
                        "languages {:?} and {:?} both claim the extension .{e}",
                        a.name, b.name
                    ));
                }
            }
        }
        Ok(LanguageTable { languages })
    }

    pub fn get(&self, name: &str) -> Option<&Language> {
        self.languages.iter().find(|l| l.name == name)
    }
}

pub(super) fn validate(l: &Language) -> Result<(), String> {
    let name_ok = !l.name.is_empty()
        && l.name.len() <= 20
        && l.name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "+-_".contains(c));
    if !name_ok {
        return Err("the name must be 1-20 lower-case letters, digits, + - _".into());
    }
    if l.run.is_empty() {
        return Err("run is empty".into());
    }
    if l.version.is_empty() {
        return Err("version is empty".into());
    }
    if l.artifacts.is_empty() {
        return Err("artifacts is empty".into());
    }
    if l.compile_proc && !l.toolchain.is_empty() {
        return Err(
            "compile_proc with a toolchain folder: the folder's host path would show in the \
             build's /proc/self/mountinfo (put the compiler under /usr, or go without /proc)"
                .into(),
        );
    }
    let safe_name =
        |s: &str| !s.is_empty() && !s.contains('/') && !s.contains("..") && !s.starts_with('.');
    if !safe_name(&l.source.replace("{stem}", "x")) {
        return Err(format!("source {:?} must be a plain file name", l.source));
    }
    for e in &l.extensions {
        if e.is_empty() || e.contains('.') || e.contains('/') {
            return Err(format!("extension {e:?}: without the dot, please"));
        }
    }
    for arg in l.compile.iter().chain(&l.run).chain(&l.toolchain) {
        let mut rest = arg.as_str();
        while let Some(i) = rest.find('{') {
            let tail = &rest[i..];
            let Some(p) = PLACEHOLDERS.iter().find(|p| tail.starts_with(**p)) else {
                return Err(format!(
                    "unknown placeholder in {arg:?} (known: {})",
                    PLACEHOLDERS.join(" ")
                ));
            };
            rest = &tail[p.len()..];
        }
    }
    if let Some(p) = &l.stem_pattern {
        let re = regex::Regex::new(p).map_err(|e| format!("stem_pattern: {e}"))?;
        if re.captures_len() < 2 {
            return Err("stem_pattern needs a group".into());
        }
    }
    if !safe_name(&l.default_stem) {
        return Err("default_stem must be a plain name".into());
    }
    Ok(())
}
