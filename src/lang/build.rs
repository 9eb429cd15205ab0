//! Compiling a bot submission: one source file in, a [`BotProgram`] (the
//! files the bot runs from) or a rejection with the compiler's words out.
//!
//! The compiler runs in the compile jail ([`crate::sandbox::jail`]), the
//! same one gcc runs in for KNOBELN, with the language's own limits: more
//! memory and threads for javac and rustc, a control group for memory and
//! processes where the machine has one (then no address-space limit, which
//! the JVM's reservations would exceed without using the memory), and the
//! language's extra read-only paths. The program is then held as bytes, so
//! that what runs is what was built, wherever it is stored.
//!
//! A participant's mistake (no such language, too large, a syntax error, a
//! compiler that runs out of time or memory) is a [`Build::Rejected`] with a
//! report; `Err` is the server's trouble.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{glob_match, Toolchain};
use crate::sandbox::bot::BotFile;
use crate::sandbox::cgroup::{Group, GroupLimits};
use crate::sandbox::jail::{Jail, JailError, JailExit, JailLimits};

/// A bot ready to run: its language and the files of `/bot`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BotProgram {
    pub language: String,
    /// The stem the run command uses (Java: the main class).
    pub stem: String,
    pub files: Vec<BotFile>,
}

/// Caps of one build.
#[derive(Debug, Clone, Copy)]
pub struct BuildLimits {
    pub source_bytes: usize,
    /// All program files together.
    pub program_bytes: u64,
    pub program_files: usize,
    /// Wall clock for the compiler.
    pub wall: Duration,
}

impl Default for BuildLimits {
    fn default() -> Self {
        BuildLimits {
            source_bytes: 256 << 10,
            program_bytes: 64 << 20,
            program_files: 256,
            wall: Duration::from_secs(120),
        }
    }
}

/// What the participant is told about a build.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BuildReport {
    pub language: String,
    /// How the language was decided (e.g. "Python 3, from the file name bot.py").
    pub assumed: String,
    /// The file name the source was compiled as.
    pub saved_as: String,
    pub compiler: String,
    pub compiler_output: String,
    /// Why the build was rejected (empty when accepted).
    pub problems: Vec<String>,
}

impl BuildReport {
    /// The report as text for a mail or the terminal.
    pub fn text(&self) -> String {
        let mut t = format!(
            "Language: {}\nCompiled as: {} with {}\n",
            self.assumed, self.saved_as, self.compiler
        );
        if self.problems.is_empty() {
            t.push_str("Result: accepted\n");
        } else {
            t.push_str("Result: rejected\n");
            for p in &self.problems {
                t.push_str(&format!("- {p}\n"));
            }
        }
        if !self.compiler_output.trim().is_empty() {
            t.push_str("\nCompiler output:\n");
            t.push_str(&self.compiler_output);
            if !self.compiler_output.ends_with('\n') {
                t.push('\n');
            }
        }
        t
    }
}

/// The outcome of a build.
#[derive(Debug, Clone)]
pub enum Build {
    Built {
        program: BotProgram,
        report: BuildReport,
    },
    Rejected {
        report: BuildReport,
    },
}

impl Build {
    pub fn report(&self) -> &BuildReport {
        match self {
            Build::Built { report, .. } | Build::Rejected { report } => report,
        }
    }
}

/// Compiles `source` with `toolchain`; `assumed` says how the language was chosen.
pub fn build(
    toolchain: &Toolchain,
    assumed: &str,
    source: &[u8],
    limits: &BuildLimits,
) -> Result<Build, JailError> {
    let lang = &toolchain.language;
    let text = String::from_utf8_lossy(source);
    let stem = lang
        .stem_pattern
        .as_ref()
        .and_then(|p| regex::Regex::new(p).ok())
        .and_then(|re| re.captures(&text).and_then(|c| c.get(1)))
        .map(|m| m.as_str().to_string())
        .unwrap_or_else(|| lang.default_stem.clone());
    let saved_as = lang.source.replace("{stem}", &stem);
    let compiler = if lang.compile.is_empty() {
        "no compiler (run from source)".to_string()
    } else {
        toolchain.version.clone()
    };
    let mut report = BuildReport {
        language: lang.name.clone(),
        assumed: assumed.to_string(),
        saved_as: saved_as.clone(),
        compiler,
        compiler_output: String::new(),
        problems: Vec::new(),
    };
    if source.len() > limits.source_bytes {
        report.problems.push(format!(
            "the source has {} bytes; at most {} are allowed",
            source.len(),
            limits.source_bytes
        ));
        return Ok(Build::Rejected { report });
    }
    if source.contains(&0) {
        report
            .problems
            .push("the source contains a NUL byte: send it as plain text".into());
        return Ok(Build::Rejected { report });
    }
    let mut jail = Jail::new()?;
    jail.mount_proc()?;
    for p in &toolchain.read_only {
        jail.bind_read_only(p)?;
    }
    let group = Group::create(&GroupLimits {
        memory_bytes: Some(lang.compile_memory_mb << 20),
        processes: Some(lang.compile_processes),
    })
    .map_err(|source| JailError::Prepare {
        path: "cgroup".into(),
        source,
    })?;
    if let Some(g) = &group {
        jail.join_cgroup(&g.join_fds())?;
    }
    let work = jail.work_dir();
    let src_path = work.join(&saved_as);
    fs::write(&src_path, source).map_err(|source| JailError::Prepare {
        path: src_path.clone(),
        source,
    })?;
    if !lang.compile.is_empty() {
        let argv = match toolchain.command(&lang.compile, &stem, 0) {
            Ok(a) => a,
            Err(e) => {
                return Err(JailError::Prepare {
                    path: lang.compile[0].clone().into(),
                    source: std::io::Error::new(std::io::ErrorKind::NotFound, e),
                })
            }
        };
        let memory_by_cgroup = group.as_ref().is_some_and(|g| g.controllers().memory);
        let jail_limits = JailLimits {
            cpu_secs: lang.compile_cpu_secs,
            address_space: if lang.address_space_limit && !memory_by_cgroup {
                lang.compile_memory_mb << 20
            } else {
                u64::MAX
            },
            file_size: limits.program_bytes,
            wall: limits.wall,
            output_cap: 64 << 10,
            processes: lang.compile_processes,
        };
        let refs: Vec<&str> = argv.iter().map(String::as_str).collect();
        let out = jail.run(&refs, &jail_limits)?;
        report.compiler_output = out.output.clone();
        if out.output_dropped > 0 {
            report.compiler_output.push_str(&format!(
                "\n[{} more bytes of compiler output dropped]\n",
                out.output_dropped
            ));
        }
        let oom = group.as_ref().is_some_and(|g| g.oom_killed());
        match out.exit {
            JailExit::Exited(0) => {}
            _ if oom => report.problems.push(format!(
                "the compiler needed more than {} MB of memory",
                lang.compile_memory_mb
            )),
            JailExit::WallClock => report.problems.push(format!(
                "compiling took longer than {} s",
                limits.wall.as_secs()
            )),
            JailExit::Signaled(s) if s == libc::SIGXCPU || s == libc::SIGKILL => {
                report.problems.push(format!(
                    "the compiler used more than {} s of CPU time (or was killed)",
                    lang.compile_cpu_secs
                ))
            }
            JailExit::Signaled(s) => report
                .problems
                .push(format!("the compiler died with signal {s}")),
            JailExit::Exited(code) => report.problems.push(format!(
                "the compiler reported errors (exit status {code}); see its output below"
            )),
        }
        if !report.problems.is_empty() {
            return Ok(Build::Rejected { report });
        }
    }
    let mut files = Vec::new();
    let mut total = 0u64;
    collect(&work, "", &lang.artifacts, &mut files, 0).map_err(|source| JailError::Io {
        program: "collecting the program".into(),
        source,
    })?;
    for f in &files {
        total += f.bytes().len() as u64;
    }
    if files.is_empty() {
        report.problems.push(format!(
            "the compiler made none of the program files ({})",
            lang.artifacts.join(", ")
        ));
    } else if files.len() > limits.program_files || total > limits.program_bytes {
        report.problems.push(format!(
            "the program is too large: {} files, {} bytes (at most {} files, {} bytes)",
            files.len(),
            total,
            limits.program_files,
            limits.program_bytes
        ));
    }
    if !report.problems.is_empty() {
        return Ok(Build::Rejected { report });
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(Build::Built {
        program: BotProgram {
            language: lang.name.clone(),
            stem,
            files,
        },
        report,
    })
}

/// Regular files under `dir` whose relative path matches a pattern
/// (component by component); symlinks are ignored.
fn collect(
    dir: &Path,
    prefix: &str,
    patterns: &[String],
    out: &mut Vec<BotFile>,
    depth: usize,
) -> std::io::Result<()> {
    if depth > 8 || out.len() > 4096 {
        return Ok(());
    }
    for e in fs::read_dir(dir)? {
        let e = e?;
        let Some(name) = e.file_name().to_str().map(str::to_string) else {
            continue;
        };
        let rel = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}/{name}")
        };
        let meta = fs::symlink_metadata(e.path())?;
        if meta.is_dir() {
            collect(&e.path(), &rel, patterns, out, depth + 1)?;
        } else if meta.is_file() && patterns.iter().any(|p| path_match(p, &rel)) {
            out.push(BotFile::new(
                rel,
                fs::read(e.path())?,
                meta.permissions().mode() & 0o111 != 0,
            ));
        }
    }
    Ok(())
}

fn path_match(pattern: &str, path: &str) -> bool {
    let p: Vec<&str> = pattern.split('/').collect();
    let n: Vec<&str> = path.split('/').collect();
    p.len() == n.len() && p.iter().zip(&n).all(|(a, b)| glob_match(a, b))
}
