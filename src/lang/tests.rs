//! Unit tests of the language table: the built-in table, config entries,
//! toolchain folders, choosing a language, file-name globs.

use super::table::validate;
use super::*;

#[test]
fn a_compiler_with_a_toolchain_folder_gets_no_proc() {
    let mut rust = builtin().into_iter().find(|l| l.name == "rust").unwrap();
    assert!(validate(&rust).is_ok());
    rust.compile_proc = true;
    assert!(validate(&rust).unwrap_err().contains("mountinfo"));
}

#[test]
fn the_built_in_table_is_valid() {
    let t = LanguageTable::with(&[]).unwrap();
    let names: Vec<&str> = t.languages.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(names, ["c", "cpp", "python", "java", "rust"]);
}

#[test]
fn a_config_entry_replaces_or_adds() {
    let mut pascal = builtin()[0].clone();
    pascal.name = "pascal".into();
    pascal.title = "Free Pascal".into();
    pascal.extensions = vec!["pas".into()];
    let t = LanguageTable::with(&[pascal]).unwrap();
    assert_eq!(t.languages.len(), 6);
    let mut clash = builtin()[0].clone();
    clash.name = "c89".into();
    assert!(LanguageTable::with(&[clash]).unwrap_err().contains(".c"));
    let mut bad = builtin()[0].clone();
    bad.run = vec!["{nonsense}".into()];
    assert!(LanguageTable::with(&[bad])
        .unwrap_err()
        .contains("placeholder"));
}

#[test]
fn the_language_comes_from_the_line_or_the_file_name() {
    let t = LanguageTable::builtin();
    let c = choose(&t, Some("Bot.PY"), None).unwrap();
    assert_eq!(c.language, "python");
    assert!(c.assumed.contains("file name Bot.PY"));
    let c = choose(&t, Some("bot.c"), Some("C++")).unwrap();
    assert_eq!(c.language, "cpp");
    assert!(c.assumed.contains("the line wins"), "{}", c.assumed);
    let c = choose(&t, None, Some("Java")).unwrap();
    assert_eq!(c.language, "java");
    assert!(choose(&t, Some("bot.txt"), None)
        .unwrap_err()
        .contains("rename the file"));
    assert!(choose(&t, None, Some("cobol"))
        .unwrap_err()
        .contains("names no language"));
    assert!(choose(&t, None, None).unwrap_err().contains("not said"));
    assert_eq!(
        language_line("Hi,\n  Language:  Python 3\nbye"),
        Some("Python 3".into())
    );
    assert_eq!(language_line("no such line"), None);
}

#[test]
fn globs_match_within_a_component() {
    assert!(glob_match("java-*-openjdk", "java-17-openjdk"));
    assert!(!glob_match("java-*-openjdk", "java-17-openjdk-x"));
    assert!(glob_match("*.class", "Main$1.class"));
    assert!(!glob_match("*.class", "Main.java"));
    assert!(glob_match("bot", "bot"));
}
