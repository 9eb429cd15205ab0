//! The book (issue 37): its config reference, `docs/src/config.md`, names
//! every key of the config and no key the config does not have, so it
//! cannot go stale. The keys come from the config's own definitions:
//! `Config::default()` serialized to TOML, and each section's fields as
//! serde knows them (which also names the keys whose default is unset:
//! `[imap]`, `[smtp]`, `[[language]]`, `[site] dir`, `[engine] nats`, …).

use std::collections::{BTreeMap, BTreeSet};

use knobeln::config::Config;

/// A section as the chapter writes it: `""` (top level), `"[contest]"`,
/// `"[[language]]"`.
type Keys = BTreeMap<String, BTreeSet<String>>;

/// The sections of the bot disciplines, which the chapter's row
/// "every section: `reply_ms`, …" speaks of.
const BOT_SECTIONS: [&str; 4] = ["[ultimatum]", "[flooding]", "[footsteps]", "[morabaraba]"];

fn chapter() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/src/config.md"))
        .expect("the book's config reference")
}

/// The fields serde knows at `probe`'s place: it names them when it
/// refuses an unknown one.
fn serde_fields(probe: &str) -> BTreeSet<String> {
    let err = toml::from_str::<Config>(probe)
        .expect_err("an unknown key is refused")
        .to_string();
    let at = err
        .find("expected one of ")
        .or_else(|| err.find("expected "))
        .unwrap_or_else(|| panic!("serde names the fields: {err}"));
    err[at..]
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

fn config_keys() -> Keys {
    let text = toml::to_string(&Config::default()).expect("the default config serializes");
    let default: toml::Table = text.parse().expect("and reads back");
    let mut keys = Keys::new();
    for field in serde_fields("zz_no_such_key = 0\n") {
        let (section, probe) = match default.get(&field) {
            Some(toml::Value::Table(t)) => {
                let section = format!("[{field}]");
                keys.entry(section.clone())
                    .or_default()
                    .extend(t.keys().cloned());
                (section, format!("[{field}]\nzz_no_such_key = 0\n"))
            }
            Some(toml::Value::Array(_)) => (
                format!("[[{field}]]"),
                format!("[[{field}]]\nzz_no_such_key = 0\n"),
            ),
            // An optional section, unset by default.
            None => (
                format!("[{field}]"),
                format!("[{field}]\nzz_no_such_key = 0\n"),
            ),
            Some(_) => {
                keys.entry(String::new()).or_default().insert(field);
                continue;
            }
        };
        let fields = serde_fields(&probe);
        keys.entry(section).or_default().extend(fields);
    }
    keys
}

/// The keys the chapter documents: the first column of its tables
/// (`` `[section] key`, `more`, `keys` ``, a top-level `` `key` ``, or
/// "every section: `key`, …" for the bot sections), and every
/// `` `[section] key` `` written anywhere. The second map holds the keys
/// of the "every section" row.
fn documented(text: &str) -> (Keys, BTreeSet<String>) {
    let mut keys = Keys::new();
    let mut every = BTreeSet::new();
    let section_key = |s: &str| -> Option<(String, String)> {
        let s = s.strip_prefix('`')?;
        let (section, rest) = s.split_once(' ')?;
        let key = rest.strip_suffix('`')?;
        let plain =
            |w: &str| !w.is_empty() && w.chars().all(|c| c.is_ascii_lowercase() || c == '_');
        let name = section.trim_start_matches('[').trim_end_matches(']');
        (section.starts_with('[') && section.ends_with(']') && plain(name) && plain(key))
            .then(|| (section.to_string(), key.to_string()))
    };
    for line in text.lines() {
        // Inline `[section] key` anywhere.
        for (i, _) in line.match_indices("`[") {
            if let Some(end) = line[i + 1..].find('`') {
                if let Some((s, k)) = section_key(&line[i..i + end + 2]) {
                    keys.entry(s).or_default().insert(k);
                }
            }
        }
        let Some(row) = line.strip_prefix('|') else {
            continue;
        };
        let cell = row.split('|').next().unwrap_or("").trim();
        let words: Vec<&str> = cell.split('`').skip(1).step_by(2).collect();
        if cell.starts_with("every section:") {
            every.extend(words.iter().map(|w| w.to_string()));
            continue;
        }
        let Some(first) = words.first() else {
            continue;
        };
        let section = match section_key(&format!("`{first}`")) {
            Some((s, k)) => {
                keys.entry(s.clone()).or_default().insert(k);
                s
            }
            None if first.chars().all(|c| c.is_ascii_lowercase() || c == '_') => {
                keys.entry(String::new())
                    .or_default()
                    .insert(first.to_string());
                String::new()
            }
            None => continue, // a header row
        };
        for w in &words[1..] {
            keys.entry(section.clone())
                .or_default()
                .insert(w.to_string());
        }
    }
    (keys, every)
}

#[test]
fn the_config_reference_names_every_key_of_the_config_and_no_other() {
    let config = config_keys();
    // The probe worked: sections with and without defaults, top-level keys.
    for (section, key) in [
        ("", "database"),
        ("[contest]", "discipline"),
        ("[site]", "dir"),
        ("[imap]", "idle_renew_secs"),
        ("[smtp]", "password_file"),
        ("[[language]]", "run_libraries"),
        ("[flooding]", "drawn_islands"),
    ] {
        assert!(
            config.get(section).is_some_and(|k| k.contains(key)),
            "{section} {key} not found in the config: {config:#?}"
        );
    }
    let (doc, every) = documented(&chapter());

    let mut missing = Vec::new();
    for (section, keys) in &config {
        for key in keys {
            let in_every = BOT_SECTIONS.contains(&section.as_str()) && every.contains(key);
            if !in_every && !doc.get(section).is_some_and(|k| k.contains(key)) {
                missing.push(format!("`{section} {key}`").replace("` ", "`"));
            }
        }
    }

    let mut unknown = Vec::new();
    for (section, keys) in &doc {
        for key in keys {
            if !config.get(section).is_some_and(|k| k.contains(key)) {
                unknown.push(format!("`{section} {key}`"));
            }
        }
    }
    for key in &every {
        if !BOT_SECTIONS
            .iter()
            .any(|s| config.get(*s).is_some_and(|k| k.contains(key)))
        {
            unknown.push(format!("every section: `{key}`"));
        }
    }
    assert!(
        missing.is_empty() && unknown.is_empty(),
        "docs/src/config.md does not document: {}\n\
         docs/src/config.md documents keys the config does not have: {}",
        missing.join(", "),
        unknown.join(", ")
    );
}
