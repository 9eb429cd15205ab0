//! The language table: which languages bots may be written in, how each is
//! compiled and run.
//!
//! Built in: C (gcc -O2), C++ (g++ -O2), Python 3, Java (javac / java) and
//! Rust (rustc -O). The organizer adds or replaces a language in the config
//! (`[[language]]`, see `deploy/knobeln.toml`): a language is data, never
//! code. Commands are argument vectors with placeholders:
//! `{source}` (the file the submission is saved as), `{stem}` (its name
//! without extension, e.g. Java's public class), `{toolchain}` (the folder
//! printed by the language's `toolchain` probe, e.g. the Rust sysroot),
//! `{memory_mb}` (the bot's memory limit, for runtimes that need to be told,
//! like `java -Xmx`).
//!
//! [`Toolchains::resolve`] finds each language's programs on this machine
//! (`/usr/local/bin:/usr/bin:/bin`, symlinks followed, so that
//! `/usr/bin/java → /etc/alternatives/java → /usr/lib/jvm/…` runs inside a
//! sandbox that has no `/etc/alternatives`); a language whose toolchain is
//! missing is reported as missing, never a crash. [`choose`] decides the
//! language of a submission from its file name or a `language:` line and
//! says what it assumed.
//!
//! Compiling is [`build`]; running is [`crate::sandbox::bot`]. This module
//! runs nothing but the version and toolchain probes, on the host, with
//! fixed arguments.

pub mod build;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// One language of the table.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Language {
    /// Short name (`c`, `cpp`, `python`, `java`, `rust`): lower case.
    pub name: String,
    /// What people call it, for reports.
    pub title: String,
    /// File name endings without the dot (`py`).
    pub extensions: Vec<String>,
    /// Other words a `language:` line may use (`python3`, `c++`).
    #[serde(default)]
    pub aliases: Vec<String>,
    /// The file name the submission is saved as (may use `{stem}`).
    pub source: String,
    /// A regular expression whose first group is the stem, searched in the
    /// source (Java: the public class); the stem is `default_stem` otherwise.
    #[serde(default)]
    pub stem_pattern: Option<String>,
    #[serde(default = "default_stem")]
    pub default_stem: String,
    /// A command run on the host whose output is a folder made visible
    /// read-only to the compiler (not the bot) at the neutral path
    /// `/toolchain`, which `{toolchain}` names in the compile command.
    #[serde(default)]
    pub toolchain: Vec<String>,
    /// The compile command, run in the compile jail with the source in the
    /// working folder (empty: nothing to compile).
    #[serde(default)]
    pub compile: Vec<String>,
    /// Which files of the working folder after compiling make up the bot
    /// (`*` matches within one path component).
    pub artifacts: Vec<String>,
    /// The run command; the bot's files are in `/bot`, the working folder
    /// is `/work`.
    pub run: Vec<String>,
    /// Extra environment of the bot (`KEY=value`).
    #[serde(default)]
    pub env: Vec<String>,
    /// The command that prints the toolchain's version.
    pub version: Vec<String>,
    /// Host paths shown read-only to compiler and bot (a `*` in the last
    /// component matches several, e.g. `/etc/java-*-openjdk`).
    #[serde(default)]
    pub paths: Vec<String>,
    /// Memory the runtime gets on top of the game's limit, in MiB.
    #[serde(default)]
    pub memory_extra_mb: u64,
    /// Threads and processes a bot may have at once.
    #[serde(default = "default_processes")]
    pub processes: u64,
    /// Whether an address-space limit may stand in for memory where there
    /// are no control groups (false for the JVM, whose reservations are not use).
    #[serde(default = "yes")]
    pub address_space_limit: bool,
    #[serde(default = "default_compile_memory")]
    pub compile_memory_mb: u64,
    #[serde(default = "default_compile_cpu")]
    pub compile_cpu_secs: u64,
    #[serde(default = "default_compile_processes")]
    pub compile_processes: u64,
    /// The largest program a build may make, in KiB (all its files):
    /// every stored version and every match carries it.
    #[serde(default = "default_program_kb")]
    pub program_kb: u64,
    /// Whether the compiler gets a `/proc` (of its own PID namespace; the
    /// JVM behind `javac` needs one). Without it a build cannot read even
    /// its own mounts.
    #[serde(default)]
    pub compile_proc: bool,
    /// Whether the bot gets a `/proc` (of its own PID namespace). Off for
    /// every built-in: a `/proc` shows even a bot of its own namespace
    /// figures of the machine (`/proc/self/net/sockstat` counts the host's
    /// TCP sockets, `/proc/self/mountinfo` its mounts). A runtime that
    /// finds itself through `/proc/self/exe` (the `java` launcher's
    /// `$ORIGIN`) is given `LD_ORIGIN_PATH` instead. Turn it on only for a
    /// runtime that cannot start without one.
    #[serde(default)]
    pub run_proc: bool,
    /// Host paths the bot's runtime reads besides its program and the
    /// shared libraries (found by themselves): a standard library, the
    /// JVM's `lib`. `{run_home}` is the folder above the run program's
    /// (`/usr` for `/usr/bin/python3`); a `*` in the last component
    /// matches several. A match shows bots these from the runtime image
    /// ([`crate::sandbox::image`]), not the host's `/usr`.
    #[serde(default)]
    pub run_files: Vec<String>,
    /// Shared libraries every program of the language may need (by name,
    /// as the loader looks for them), put into the runtime image ahead of
    /// the first bot: a server that cannot fill the image itself (not
    /// root) finds them there.
    #[serde(default)]
    pub run_libraries: Vec<String>,
}

fn default_stem() -> String {
    "bot".into()
}
fn default_processes() -> u64 {
    32
}
fn yes() -> bool {
    true
}
fn default_compile_memory() -> u64 {
    1024
}
fn default_compile_cpu() -> u64 {
    30
}
fn default_compile_processes() -> u64 {
    64
}
/// 4 MiB: a Rust bot with its standard library is about 0.4 MB, a C bot a
/// few dozen kB; a program larger than this is data, not a strategy.
fn default_program_kb() -> u64 {
    4096
}

fn v(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

/// The built-in languages.
pub fn builtin() -> Vec<Language> {
    let base = |name: &str, title: &str| Language {
        name: name.into(),
        title: title.into(),
        extensions: Vec::new(),
        aliases: Vec::new(),
        source: String::new(),
        stem_pattern: None,
        default_stem: default_stem(),
        toolchain: Vec::new(),
        compile: Vec::new(),
        artifacts: Vec::new(),
        run: Vec::new(),
        env: Vec::new(),
        version: Vec::new(),
        paths: Vec::new(),
        memory_extra_mb: 0,
        processes: default_processes(),
        address_space_limit: true,
        compile_memory_mb: default_compile_memory(),
        compile_cpu_secs: default_compile_cpu(),
        compile_proc: false,
        run_proc: false,
        run_files: Vec::new(),
        run_libraries: Vec::new(),
        program_kb: default_program_kb(),
        compile_processes: default_compile_processes(),
    };
    vec![
        Language {
            extensions: v(&["c"]),
            source: "bot.c".into(),
            compile: v(&["gcc", "-O2", "-std=gnu17", "-o", "bot", "{source}", "-lm"]),
            artifacts: v(&["bot"]),
            run: v(&["/bot/bot"]),
            version: v(&["gcc", "--version"]),
            // glibc loads libgcc_s for pthread_exit and pthread_cancel.
            run_libraries: v(&["libc.so.6", "libm.so.6", "libgcc_s.so.1"]),
            ..base("c", "C (gcc -O2)")
        },
        Language {
            extensions: v(&["cpp", "cc", "cxx", "c++"]),
            aliases: v(&["c++", "cxx"]),
            source: "bot.cpp".into(),
            compile: v(&["g++", "-O2", "-std=gnu++17", "-o", "bot", "{source}"]),
            artifacts: v(&["bot"]),
            run: v(&["/bot/bot"]),
            version: v(&["g++", "--version"]),
            run_libraries: v(&["libc.so.6", "libm.so.6", "libstdc++.so.6", "libgcc_s.so.1"]),
            ..base("cpp", "C++ (g++ -O2)")
        },
        Language {
            extensions: v(&["py"]),
            aliases: v(&["python3", "py"]),
            source: "bot.py".into(),
            // A syntax check; the bot runs from its source.
            compile: v(&["python3", "-m", "py_compile", "{source}"]),
            artifacts: v(&["bot.py"]),
            run: v(&["python3", "-B", "-I", "/bot/bot.py"]),
            version: v(&["python3", "--version"]),
            // The standard library (not the system's dist-packages).
            run_files: v(&["{run_home}/lib/python3.*"]),
            // glibc loads libgcc_s when a thread ends (daemon threads at exit).
            run_libraries: v(&["libgcc_s.so.1"]),
            memory_extra_mb: 32,
            ..base("python", "Python 3")
        },
        Language {
            extensions: v(&["java"]),
            source: "{stem}.java".into(),
            stem_pattern: Some(
                r"(?m)^\s*public\s+(?:final\s+|abstract\s+)*class\s+([A-Za-z_][A-Za-z0-9_]*)"
                    .into(),
            ),
            default_stem: "Main".into(),
            compile: v(&[
                "javac",
                "-J-Xmx512m",
                "-J-XX:+UseSerialGC",
                "-J-XX:TieredStopAtLevel=1",
                "-encoding",
                "UTF-8",
                "{source}",
            ]),
            artifacts: v(&["*.class"]),
            run: v(&[
                "java",
                "-Xmx{memory_mb}m",
                // The machine's memory is not the bot's to read (no
                // sysinfo): the JVM's ergonomics size from this instead.
                "-XX:MaxRAM={memory_mb}m",
                "-Xss16m",
                "-XX:+UseSerialGC",
                "-XX:ReservedCodeCacheSize=64m",
                "-XX:MaxMetaspaceSize=128m",
                "-Xshare:auto",
                "-cp",
                "/bot",
                "{stem}",
            ]),
            version: v(&["java", "-version"]),
            paths: v(&["/etc/java-*-openjdk"]),
            run_files: v(&["{run_home}/lib", "{run_home}/conf", "{run_home}/release"]),
            run_libraries: v(&["libgcc_s.so.1"]),
            memory_extra_mb: 256,
            processes: 64,
            address_space_limit: false,
            compile_memory_mb: 1024,
            compile_processes: 256,
            compile_proc: true,
            ..base("java", "Java (javac / java)")
        },
        Language {
            extensions: v(&["rs"]),
            source: "bot.rs".into(),
            toolchain: v(&["rustc", "--print", "sysroot"]),
            compile: v(&[
                "{toolchain}/bin/rustc",
                // Without a /proc, rustc cannot find itself.
                "--sysroot",
                "{toolchain}",
                "-O",
                "--edition",
                "2021",
                "-C",
                "strip=symbols",
                // `cc` is a link into /etc/alternatives, which the jail hides.
                "-C",
                "linker=gcc",
                "-o",
                "bot",
                "{source}",
            ]),
            artifacts: v(&["bot"]),
            run: v(&["/bot/bot"]),
            version: v(&["rustc", "--version"]),
            run_libraries: v(&["libc.so.6", "libm.so.6", "libgcc_s.so.1"]),
            compile_memory_mb: 2048,
            compile_processes: 128,
            ..base("rust", "Rust (rustc -O)")
        },
    ]
}

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

fn validate(l: &Language) -> Result<(), String> {
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

/// Which language a submission is in, and how that was decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    pub language: String,
    /// For the report, e.g. "Python 3, from the file name bot.py".
    pub assumed: String,
}

/// The `language:` line of a mail text: the first line that starts with
/// `language:` (any case), its value trimmed.
pub fn language_line(text: &str) -> Option<String> {
    text.lines().take(2000).find_map(|l| {
        let l = l.trim_start();
        let (key, value) = l.split_once(':')?;
        key.trim()
            .eq_ignore_ascii_case("language")
            .then(|| value.trim().chars().take(40).collect())
    })
}

/// Decides the language of a submission from an explicit `language:` value
/// (which wins) or the file name's extension. The error is a sentence for
/// the participant.
pub fn choose(
    table: &LanguageTable,
    file_name: Option<&str>,
    declared: Option<&str>,
) -> Result<Choice, String> {
    let known = || {
        table
            .languages
            .iter()
            .map(|l| format!("{} (.{})", l.name, l.extensions.join(", .")))
            .collect::<Vec<_>>()
            .join("; ")
    };
    let by_ext = file_name.and_then(|f| {
        let ext = f.rsplit_once('.')?.1.to_ascii_lowercase();
        table
            .languages
            .iter()
            .find(|l| l.extensions.iter().any(|e| e.eq_ignore_ascii_case(&ext)))
    });
    if let Some(word) = declared {
        let w: String = word
            .to_ascii_lowercase()
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        let found = table.languages.iter().find(|l| {
            l.name == w
                || l.aliases.iter().any(|a| a.eq_ignore_ascii_case(&w))
                || l.extensions.iter().any(|e| e.eq_ignore_ascii_case(&w))
                || l.title
                    .to_ascii_lowercase()
                    .split_whitespace()
                    .next()
                    .is_some_and(|t| t == w)
        });
        return match found {
            None => Err(format!(
                "the line \"language: {word}\" names no language this contest knows; \
                 write one of: {}",
                known()
            )),
            Some(l) => {
                let mut assumed = format!("{}, from the line \"language: {word}\"", l.title);
                if let (Some(f), Some(e)) = (file_name, by_ext) {
                    if e.name != l.name {
                        assumed.push_str(&format!(
                            " (the file name {f} would have meant {}; the line wins)",
                            e.title
                        ));
                    }
                }
                Ok(Choice {
                    language: l.name.clone(),
                    assumed,
                })
            }
        };
    }
    match (file_name, by_ext) {
        (Some(f), Some(l)) => Ok(Choice {
            language: l.name.clone(),
            assumed: format!("{}, from the file name {f}", l.title),
        }),
        (Some(f), None) => Err(format!(
            "the file name {f} does not say the language; rename the file or add a line \
             \"language: NAME\" to the mail. Known: {}",
            known()
        )),
        (None, _) => Err(format!(
            "the language is not said; attach the source as a file with its extension \
             or add a line \"language: NAME\" to the mail. Known: {}",
            known()
        )),
    }
}

/// Where a build sees its toolchain folder (`{toolchain}`).
pub const SANDBOX_TOOLCHAIN: &str = "/toolchain";

/// The locale of every bot's `LANG=C.UTF-8`, shown to it from the runtime
/// image.
pub const BOT_LOCALE: &str = "/usr/lib/locale/C.utf8";

/// Where a sandbox looks for programs.
pub const SANDBOX_PATH: [&str; 3] = ["/usr/local/bin", "/usr/bin", "/bin"];

/// A language's toolchain as found on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Toolchain {
    pub language: Language,
    /// `{toolchain}`, if the language has a probe.
    pub toolchain_dir: Option<PathBuf>,
    /// Host paths shown read-only to the compiler (`paths` and the
    /// toolchain folder).
    pub read_only: Vec<PathBuf>,
    /// Host paths shown read-only to the bot (`paths` only: a compiled bot
    /// needs no compiler, and a toolchain under `/root` is not readable by
    /// the bot's user anyway).
    pub run_read_only: Vec<PathBuf>,
    /// The run command's program on the host (`None` for a program of the
    /// bot's own, `/bot/...`).
    pub run_program: Option<PathBuf>,
    /// `run_files` found on this machine.
    pub run_files: Vec<PathBuf>,
    /// First line of the version command.
    pub version: String,
}

/// Every language with its toolchain, or why it is missing.
#[derive(Debug, Clone)]
pub struct Toolchains {
    pub entries: Vec<(Language, Result<Toolchain, String>)>,
}

impl Toolchains {
    /// Looks for every language's toolchain (runs each version probe once).
    pub fn resolve(table: &LanguageTable) -> Toolchains {
        Toolchains {
            entries: table
                .languages
                .iter()
                .map(|l| (l.clone(), resolve_one(l)))
                .collect(),
        }
    }

    /// Looks for the toolchains of the named languages only (one version
    /// probe each); the others are left out.
    pub fn resolve_only(table: &LanguageTable, names: &[&str]) -> Toolchains {
        Toolchains {
            entries: table
                .languages
                .iter()
                .filter(|l| names.contains(&l.name.as_str()))
                .map(|l| (l.clone(), resolve_one(l)))
                .collect(),
        }
    }

    pub fn get(&self, name: &str) -> Option<&Result<Toolchain, String>> {
        self.entries
            .iter()
            .find(|(l, _)| l.name == name)
            .map(|(_, t)| t)
    }
}

/// A program name as the sandbox finds it: absolute paths stay, bare names
/// are looked up in [`SANDBOX_PATH`] and their symlinks followed.
pub fn find_program(name: &str) -> Option<PathBuf> {
    if name.contains('/') {
        let p = Path::new(name);
        return p.is_file().then(|| p.canonicalize().ok()).flatten();
    }
    SANDBOX_PATH
        .iter()
        .map(|d| Path::new(d).join(name))
        .find(|p| p.is_file())
        .and_then(|p| p.canonicalize().ok())
}

/// Host paths matching `pattern` (a `*` allowed in the last component).
fn expand_path(pattern: &str) -> Vec<PathBuf> {
    let p = Path::new(pattern);
    let Some(last) = p.file_name().and_then(|n| n.to_str()) else {
        return Vec::new();
    };
    if !last.contains('*') {
        return if p.exists() {
            vec![p.to_path_buf()]
        } else {
            Vec::new()
        };
    }
    let parent = p.parent().unwrap_or(Path::new("/"));
    let Ok(entries) = std::fs::read_dir(parent) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| e.file_name().to_str().is_some_and(|n| glob_match(last, n)))
        .map(|e| e.path())
        .collect();
    out.sort();
    out
}

/// `*` matches any run of characters (within one component).
pub fn glob_match(pattern: &str, name: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == name;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !name.starts_with(first) || name.len() < first.len() + last.len() || !name.ends_with(last) {
        return false;
    }
    let mut rest = &name[first.len()..name.len() - last.len()];
    for mid in &parts[1..parts.len() - 1] {
        match rest.find(mid) {
            Some(i) => rest = &rest[i + mid.len()..],
            None => return false,
        }
    }
    true
}

/// Runs a trusted probe on the host (no participant input), with a time
/// limit; returns its output (stdout, then stderr).
fn probe(argv: &[String]) -> Result<String, String> {
    let mut child = Command::new(&argv[0])
        .args(&argv[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{} not found ({e})", argv[0]))?;
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if std::time::Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(5))
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("{} did not answer within 20 s", argv[0]));
            }
        }
    }
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    if !out.status.success() {
        return Err(format!(
            "{} failed: {}",
            argv.join(" "),
            text.lines().next().unwrap_or("")
        ));
    }
    Ok(text)
}

fn resolve_one(l: &Language) -> Result<Toolchain, String> {
    let toolchain_dir = if l.toolchain.is_empty() {
        None
    } else {
        let out = probe(&l.toolchain)?;
        let dir = PathBuf::from(out.lines().next().unwrap_or("").trim());
        if !dir.is_absolute() || !dir.is_dir() {
            return Err(format!(
                "{} printed {:?}, not a folder",
                l.toolchain.join(" "),
                dir
            ));
        }
        Some(dir)
    };
    let run_read_only: Vec<PathBuf> = l.paths.iter().flat_map(|p| expand_path(p)).collect();
    let mut read_only = run_read_only.clone();
    read_only.extend(toolchain_dir.clone());
    let mut tc = Toolchain {
        language: l.clone(),
        toolchain_dir,
        read_only,
        run_read_only,
        run_program: None,
        run_files: Vec::new(),
        version: String::new(),
    };
    if let Some(first) = l.run.first() {
        let prog = tc.expand(first, "bot", 0);
        if !prog.starts_with("/bot/") {
            tc.run_program = find_program(&prog);
        }
    }
    let run_home = tc
        .run_program
        .as_deref()
        .and_then(Path::parent)
        .and_then(Path::parent)
        .map(|p| p.display().to_string());
    tc.run_files = l
        .run_files
        .iter()
        .filter_map(|f| match &run_home {
            Some(home) => Some(f.replace("{run_home}", home)),
            None if f.contains("{run_home}") => None,
            None => Some(f.clone()),
        })
        .flat_map(|p| expand_path(&p))
        .chain(
            l.run_libraries
                .iter()
                .filter_map(|n| crate::sandbox::image::find_library(n)),
        )
        // Every bot runs with LANG=C.UTF-8 (the sandbox's environment): its
        // locale comes along, for setlocale and C++'s std::locale("").
        .chain(
            [BOT_LOCALE]
                .iter()
                .map(PathBuf::from)
                .filter(|p| p.exists()),
        )
        .collect();
    // Every program must be there (for `{toolchain}` and absolute paths too).
    for argv in [&l.compile, &l.run] {
        let Some(first) = argv.first() else { continue };
        let prog = tc.expand(first, "bot", 0);
        if prog.starts_with("/bot/") {
            continue;
        }
        if find_program(&prog).is_none() {
            return Err(format!("{prog} not found"));
        }
    }
    let mut version_argv = l.version.clone();
    if let Some(p) = find_program(&tc.expand(&version_argv[0], "bot", 0)) {
        version_argv[0] = p.display().to_string();
    }
    let version = probe(&version_argv)?
        .lines()
        .map(str::trim)
        .find(|s| !s.is_empty())
        .unwrap_or("")
        .chars()
        .take(120)
        .collect();
    Ok(Toolchain { version, ..tc })
}

impl Toolchain {
    /// One argument with its placeholders filled in.
    pub fn expand(&self, arg: &str, stem: &str, memory_mb: u64) -> String {
        let source = self.language.source.replace("{stem}", stem);
        let dir = self
            .toolchain_dir
            .as_ref()
            .map(|d| d.display().to_string())
            .unwrap_or_default();
        arg.replace("{source}", &source)
            .replace("{stem}", stem)
            .replace("{toolchain}", &dir)
            .replace("{memory_mb}", &memory_mb.to_string())
    }

    /// The compile command as the build sandbox runs it: `{toolchain}` is
    /// `/toolchain` there; a program not under `/toolchain` is found on the
    /// host (in `/usr`, the same inside).
    pub fn compile_command(&self, stem: &str) -> Result<Vec<String>, String> {
        let mut out: Vec<String> = self
            .language
            .compile
            .iter()
            .map(|a| self.expand(&a.replace("{toolchain}", SANDBOX_TOOLCHAIN), stem, 0))
            .collect();
        if let Some(first) = out.first_mut() {
            if !first.starts_with(SANDBOX_TOOLCHAIN) {
                let p = find_program(first).ok_or_else(|| format!("{first} not found"))?;
                *first = p.display().to_string();
            }
        }
        Ok(out)
    }

    /// A command with placeholders filled in and its program found
    /// (programs in `/bot` stay as they are).
    pub fn command(
        &self,
        argv: &[String],
        stem: &str,
        memory_mb: u64,
    ) -> Result<Vec<String>, String> {
        let mut out: Vec<String> = argv
            .iter()
            .map(|a| self.expand(a, stem, memory_mb))
            .collect();
        if let Some(first) = out.first_mut() {
            if !first.starts_with("/bot/") {
                let p = find_program(first).ok_or_else(|| format!("{first} not found"))?;
                *first = p.display().to_string();
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests;
