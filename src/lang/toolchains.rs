//! Finding each language's toolchain on this machine ([`Toolchains`]):
//! its programs on the sandbox's path (symlinks followed), its version and
//! toolchain probes, and the commands with their placeholders filled in
//! ([`Toolchain`]). A missing toolchain is reported, never a crash.
//!
//! Runs nothing but the version and toolchain probes, on the host, with
//! fixed arguments; compiling is `build.rs`, running `crate::sandbox::bot`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use super::language::Language;
use super::table::LanguageTable;

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
