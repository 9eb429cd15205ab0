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
use std::os::fd::AsRawFd;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{glob_match, Toolchain};
use crate::sandbox::bot::{
    BotFile, BotLimits, BotProcess, BotSpec, FirstProcess, Network, NewProcesses, ProcFs,
    WorkFolder,
};
use crate::sandbox::jail::{CpuCount, InitReport, JailError, REAP_BOUND};

/// A bot ready to run: its language and the files of `/bot`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BotProgram {
    pub language: String,
    /// The stem the run command uses (Java: the main class).
    pub stem: String,
    pub files: Vec<BotFile>,
}

/// The first bytes of a stored program ([`BotProgram::encode`]).
const PROGRAM_MAGIC: &[u8; 4] = b"KBP\x01";

/// Why stored bytes are not a program.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("not a bot's program: {0}")]
pub struct NotAProgram(String);

impl BotProgram {
    /// The program as stored and shipped to workers: bytes, not JSON (a
    /// JSON array of numbers took 3.5 bytes per byte of a program).
    /// `KBP\x01`, then little-endian: the language and the stem (u32
    /// length, UTF-8), the number of files (u32), and per file its path
    /// (u32 length, UTF-8), whether it is executable (u8) and its bytes
    /// (u64 length).
    pub fn encode(&self) -> Vec<u8> {
        let total: usize = self
            .files
            .iter()
            .map(|f| f.bytes().len() + f.path.len() + 13)
            .sum();
        let mut out = Vec::with_capacity(16 + self.language.len() + self.stem.len() + total);
        out.extend_from_slice(PROGRAM_MAGIC);
        for s in [&self.language, &self.stem] {
            out.extend_from_slice(&(s.len() as u32).to_le_bytes());
            out.extend_from_slice(s.as_bytes());
        }
        out.extend_from_slice(&(self.files.len() as u32).to_le_bytes());
        for f in &self.files {
            out.extend_from_slice(&(f.path.len() as u32).to_le_bytes());
            out.extend_from_slice(f.path.as_bytes());
            out.push(u8::from(f.executable));
            out.extend_from_slice(&(f.bytes().len() as u64).to_le_bytes());
            out.extend_from_slice(f.bytes());
        }
        out
    }

    /// A stored program: [`BotProgram::encode`]'s bytes, or the JSON that
    /// versions before it stored. Every length is checked against what is
    /// left (linear, no allocation beyond the input's size).
    pub fn decode(bytes: &[u8]) -> Result<BotProgram, NotAProgram> {
        if bytes.first() == Some(&b'{') {
            return serde_json::from_slice(bytes).map_err(|e| NotAProgram(e.to_string()));
        }
        let mut r = Reader { rest: bytes };
        if r.take(4)? != PROGRAM_MAGIC {
            return Err(NotAProgram("no KBP header".into()));
        }
        let language = r.text()?;
        let stem = r.text()?;
        let n = r.u32()? as usize;
        let mut files = Vec::with_capacity(n.min(4096));
        for _ in 0..n {
            let path = r.text()?;
            let executable = match r.take(1)?[0] {
                0 => false,
                1 => true,
                x => return Err(NotAProgram(format!("executable flag {x}"))),
            };
            let len = u64::from_le_bytes(r.take(8)?.try_into().expect("8 bytes"));
            let len = usize::try_from(len).map_err(|_| NotAProgram("a file too long".into()))?;
            files.push(BotFile::new(path, r.take(len)?.to_vec(), executable));
        }
        if !r.rest.is_empty() {
            return Err(NotAProgram(format!(
                "{} bytes after the last file",
                r.rest.len()
            )));
        }
        Ok(BotProgram {
            language,
            stem,
            files,
        })
    }
}

/// Reads a stored program front to back.
struct Reader<'a> {
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], NotAProgram> {
        if n > self.rest.len() {
            return Err(NotAProgram("cut short".into()));
        }
        let (head, tail) = self.rest.split_at(n);
        self.rest = tail;
        Ok(head)
    }

    fn u32(&mut self) -> Result<u32, NotAProgram> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }

    fn text(&mut self) -> Result<String, NotAProgram> {
        let n = self.u32()? as usize;
        String::from_utf8(self.take(n)?.to_vec())
            .map_err(|_| NotAProgram("a name is not UTF-8".into()))
    }
}

/// Caps of one build.
#[derive(Debug, Clone, Copy)]
pub struct BuildLimits {
    pub source_bytes: usize,
    /// All program files together.
    pub program_bytes: u64,
    pub program_files: usize,
    /// Wall clock for the compiler: a guard, never a verdict (a build it
    /// ends before the language's `compile_cpu_secs` is
    /// [`JailError::Overloaded`], the server's problem).
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
            t.push_str("Build: passed\n");
        } else {
            t.push_str("Build: failed\n");
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
    let source_file = BotFile::new(saved_as.clone(), source.to_vec(), false);
    // The program's files: read only once their number and size are known
    // to be within the caps (a build can make a file of many megabytes).
    let mut found: Vec<Found> = Vec::new();
    let mut work_dir = None;
    let mut files = Vec::new();
    if lang.compile.is_empty() {
        // Nothing to compile: the source is the program.
        if lang.artifacts.iter().any(|p| path_match(p, &saved_as)) {
            files.push(source_file);
        }
    } else {
        let argv = toolchain
            .compile_command(&stem)
            .map_err(|e| JailError::Prepare {
                path: lang.compile[0].clone().into(),
                source: std::io::Error::new(std::io::ErrorKind::NotFound, e),
            })?;
        let run = compile_in_sandbox(toolchain, &argv, source_file, limits)?;
        report.compiler_output = run.output.clone();
        if run.dropped > 0 {
            report.compiler_output.push_str(&format!(
                "\n[{} more bytes of compiler output dropped]\n",
                run.dropped
            ));
        }
        match run.end {
            CompileEnd::Exited(0) => {}
            CompileEnd::OutOfMemory => report.problems.push(format!(
                "the compiler needed more than {} MB of memory",
                lang.compile_memory_mb
            )),
            // The clock gives no verdict (it depends on the machine's
            // load as much as on the build): a build the wall ended before
            // its CPU limit is the server's problem, answered "not
            // compiled (server problem)" and counted apart from the team's
            // compiles (`server_problems_per_team_per_hour`), so a build
            // script that sleeps gets neither a verdict nor unbounded
            // builds.
            CompileEnd::WallClock => {
                return Err(JailError::Overloaded {
                    program: argv[0].clone(),
                    wall: limits.wall,
                    cpu: run.cpu,
                    cpu_count: run.cpu_count,
                })
            }
            CompileEnd::CpuTime => report.problems.push(format!(
                "the compiler used more than {} s of CPU time (or was killed)",
                lang.compile_cpu_secs
            )),
            CompileEnd::FileSize => report.problems.push(format!(
                "the compiler (or a build script of the source) wrote a file larger than {} \
                 bytes, the build's limit of a file, and was stopped",
                build_file_bytes(limits)
            )),
            CompileEnd::ForbiddenCall => report.problems.push(
                "the compiler (or a build script or macro of the source) made a system call \
                 the build sandbox forbids"
                    .into(),
            ),
            CompileEnd::Signaled(s) => report
                .problems
                .push(format!("the compiler died with signal {s}")),
            CompileEnd::Exited(code) => report.problems.push(format!(
                "the compiler reported errors (exit status {code}); see its output below"
            )),
        }
        if !report.problems.is_empty() {
            return Ok(Build::Rejected { report });
        }
        let work = format!("/proc/self/fd/{}", run.work.as_raw_fd());
        collect(Path::new(&work), "", &lang.artifacts, &mut found, 0).map_err(|source| {
            JailError::Io {
                program: "collecting the program".into(),
                source,
            }
        })?;
        work_dir = Some(run.work);
    }
    let n_files = files.len() + found.len();
    let total: u64 = files.iter().map(|f| f.bytes().len() as u64).sum::<u64>()
        + found.iter().map(|f| f.len).sum::<u64>();
    if n_files == 0 {
        report.problems.push(format!(
            "the compiler made none of the program files ({})",
            lang.artifacts.join(", ")
        ));
    } else if n_files > limits.program_files || total > program_cap(lang, limits) {
        report.problems.push(format!(
            "the program is too large: {} files, {} bytes (at most {} files, {} bytes for \
             {}); large initialized arrays or tables belong in code that computes them",
            n_files,
            total,
            limits.program_files,
            program_cap(lang, limits),
            lang.title
        ));
    }
    if !report.problems.is_empty() {
        return Ok(Build::Rejected { report });
    }
    for f in found {
        let bytes = fs::read(&f.path).map_err(|source| JailError::Io {
            program: "collecting the program".into(),
            source,
        })?;
        // The build is gone: nothing can have grown the file since.
        files.push(BotFile::new(f.rel, bytes, f.executable));
    }
    drop(work_dir);
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

/// The largest program `lang` may make: its `program_kb`, within the
/// server's overall cap.
fn program_cap(lang: &super::Language, limits: &BuildLimits) -> u64 {
    limits.program_bytes.min(lang.program_kb << 10)
}

/// The largest file a build may write, in bytes (its `RLIMIT_FSIZE`),
/// and the size of its `/tmp` and `/work`.
fn build_file_bytes(limits: &BuildLimits) -> u64 {
    limits.program_bytes.max(limits.source_bytes as u64 * 4)
}

/// How a compile in the build sandbox ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CompileEnd {
    Exited(i32),
    Signaled(i32),
    OutOfMemory,
    CpuTime,
    /// A process of the build wrote past its file size limit (`SIGXFSZ`).
    FileSize,
    WallClock,
    ForbiddenCall,
}

/// A finished compile: how it ended, the first 64 KiB of its output
/// (standard output and error as they came), how much more there was, and
/// its `/work` (the bot's own tmpfs, kept open).
struct CompileRun {
    end: CompileEnd,
    /// The CPU time of the build's processes together.
    cpu: Duration,
    /// Whether `cpu` counts every process of the build.
    cpu_count: CpuCount,
    output: String,
    dropped: u64,
    work: std::os::fd::OwnedFd,
}

/// Output of a compile kept for the report.
const OUTPUT_CAP: usize = 64 << 10;

/// Runs `argv` in the bot sandbox with `source` in `/work`: the same
/// confinement as a match (user, PID, network, mount, IPC, UTS and cgroup
/// namespaces, its own root, seccomp, a control group) with the language's
/// compile limits, the toolchain folder at `/toolchain`, `/proc` only for
/// languages that need one, and `/work` kept for collecting the program.
/// The first process of its PID namespace is the compile jail's init
/// ([`FirstProcess::Init`]), never the compiler: the compiler, PID 2,
/// gets `SIGXFSZ` at its file size limit (a tool as PID 1 saw only
/// `EFBIG` and went on in its own words), the init reports how it ended
/// (an exit status the build chooses never reads as a signal), and every
/// process the build left is killed and reaped by the init, its CPU
/// counted, when the compiler ends or a limit or the wall ends the build.
fn compile_in_sandbox(
    toolchain: &Toolchain,
    argv: &[String],
    source: BotFile,
    limits: &BuildLimits,
) -> Result<CompileRun, JailError> {
    let lang = &toolchain.language;
    let sources = [source];
    // Without a /proc the loader cannot resolve `$ORIGIN`: a toolchain's
    // own libraries are named to it.
    let env: Vec<String> = match &toolchain.toolchain_dir {
        Some(_) => vec![format!("LD_LIBRARY_PATH={}/lib", super::SANDBOX_TOOLCHAIN)],
        None => Vec::new(),
    };
    let spec = BotSpec {
        argv,
        env: &env,
        files: &[],
        read_only: &toolchain.run_read_only,
        limits: BotLimits {
            memory_bytes: lang.compile_memory_mb << 20,
            address_space_fallback: lang
                .address_space_limit
                .then_some(lang.compile_memory_mb << 20),
            processes: lang.compile_processes,
            // The verdict is the loop's below: the tree's CPU time as the
            // control group counts it, past `compile_cpu_secs`. The
            // kernel's `RLIMIT_CPU` is a backstop a second beyond: it
            // counts in ticks (a process it ends at 1 s had 0.91-0.97 s by
            // its group's count, measured here), so at the same value it
            // ended a build with a `SIGKILL` its group's count could not
            // explain ("died with signal 9", not the CPU limit).
            cpu_secs: lang.compile_cpu_secs.saturating_add(1),
            disk_bytes: build_file_bytes(limits),
            work_bytes: build_file_bytes(limits),
            open_files: 256,
        },
        network: Network::Own,
        cpu: None,
        work_files: &sources,
        work_dirs: &[],
        work: WorkFolder::Returned,
        proc: if lang.compile_proc {
            ProcFs::Mounted
        } else {
            ProcFs::Hidden
        },
        toolchain: toolchain.toolchain_dir.as_deref(),
        // The compiler reads the host's /usr (it runs no participant code
        // that could time it).
        image: None,
        first: FirstProcess::Init,
        // The compiler runs its assembler and linker; without a control
        // group the init reaps and counts all of them at the build's end.
        processes: NewProcesses::Always,
    };
    let spawn_err = |e: crate::sandbox::bot::BotSpawnError| JailError::Spawn {
        program: argv[0].clone(),
        source: std::io::Error::other(e.to_string()),
    };
    let io_err = |source| JailError::Io {
        program: argv[0].clone(),
        source,
    };
    let mut bot = BotProcess::spawn(&spec).map_err(spawn_err)?;
    let work = bot.take_work().ok_or_else(|| JailError::Prepare {
        path: "/work".into(),
        source: std::io::Error::other("the build's /work was not kept"),
    })?;
    // Nothing to read: the compiler's standard input is closed.
    drop(std::mem::replace(
        &mut bot.stdin,
        null_fd().map_err(io_err)?,
    ));
    let deadline = std::time::Instant::now() + limits.wall;
    let cpu_limit = Duration::from_secs(lang.compile_cpu_secs);
    let mut output = Vec::new();
    let mut dropped = 0u64;
    let mut open = [true, true];
    let mut end = None;
    while open.iter().any(|o| *o) {
        let now = std::time::Instant::now();
        if now >= deadline {
            end = Some(CompileEnd::WallClock);
            break;
        }
        if bot.cpu_time() > cpu_limit {
            end = Some(CompileEnd::CpuTime);
            break;
        }
        let fds = [bot.stdout.as_raw_fd(), bot.stderr.as_raw_fd()];
        let mut pfds: Vec<libc::pollfd> = fds
            .iter()
            .zip(open)
            .filter(|(_, o)| *o)
            .map(|(&fd, _)| libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            })
            .collect();
        let ms = (deadline - now).as_millis().clamp(1, 100) as i32;
        // SAFETY: a valid array of pollfds.
        unsafe { libc::poll(pfds.as_mut_ptr(), pfds.len() as libc::nfds_t, ms) };
        for (k, fd) in fds.into_iter().enumerate() {
            if !open[k] {
                continue;
            }
            let mut buf = [0u8; 8192];
            loop {
                // SAFETY: read into a stack buffer from our pipe end.
                let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
                if n == 0 {
                    open[k] = false;
                    break;
                }
                if n < 0 {
                    let e = std::io::Error::last_os_error();
                    if e.raw_os_error() != Some(libc::EAGAIN)
                        && e.kind() != std::io::ErrorKind::Interrupted
                    {
                        open[k] = false;
                    }
                    break;
                }
                let n = n as usize;
                let keep = OUTPUT_CAP.saturating_sub(output.len()).min(n);
                output.extend_from_slice(&buf[..keep]);
                dropped += (n - keep) as u64;
            }
        }
    }
    // Output closed (or a limit struck): the init ends the build when the
    // compiler ends; else it is asked to (it kills and reaps every process
    // of the build), and killed from outside if it does not answer.
    let status = match end {
        Some(_) => None,
        None => wait_for_exit(&mut bot, deadline).map_err(io_err)?,
    };
    if status.is_none() {
        bot.end_run(REAP_BOUND).map_err(io_err)?;
    }
    let oom = bot.out_of_memory();
    let group_cpu = bot.group().and_then(|g| g.cpu_time());
    bot.finish().map_err(io_err)?;
    let records = bot.init_report().map_err(io_err)?;
    // The compiler's own status, as the init reported it.
    let status = match records.map(|r| r.command) {
        Some(InitReport::Ended(st)) => status.map(|_| st),
        Some(InitReport::NotStarted(errno)) => {
            return Err(JailError::Spawn {
                program: argv[0].clone(),
                source: std::io::Error::from_raw_os_error(errno),
            })
        }
        Some(InitReport::None) | None => status,
    };
    // Every process's CPU: the init's count of what it reaped (all of
    // the build's, when it says so), or the control group's where larger.
    let (cpu, cpu_count) = match (group_cpu, records.map(|r| r.count)) {
        (Some(g), _) => (g.max(bot.reaped_cpu()), CpuCount::Complete),
        (None, Some(count)) => (bot.reaped_cpu(), count),
        (None, None) => (bot.reaped_cpu(), CpuCount::Partial),
    };
    let cpu_over = cpu > cpu_limit;
    use std::os::unix::process::ExitStatusExt;
    let end = match (end, status) {
        (Some(e), _) => e,
        (None, None) => CompileEnd::WallClock,
        _ if oom => CompileEnd::OutOfMemory,
        (None, Some(st)) => match (st.code(), st.signal()) {
            (Some(c), _) => CompileEnd::Exited(c),
            (None, Some(libc::SIGSYS)) => CompileEnd::ForbiddenCall,
            (None, Some(libc::SIGXFSZ)) => CompileEnd::FileSize,
            (None, Some(s)) if s == libc::SIGXCPU || (s == libc::SIGKILL && cpu_over) => {
                CompileEnd::CpuTime
            }
            (None, Some(s)) => CompileEnd::Signaled(s),
            _ => CompileEnd::Exited(-1),
        },
    };
    // The CPU limit decides whenever it was passed, even when the clock
    // ran out between two looks at it.
    let end = match end {
        CompileEnd::WallClock if cpu_over => CompileEnd::CpuTime,
        end => end,
    };
    Ok(CompileRun {
        end,
        cpu,
        cpu_count,
        output: String::from_utf8_lossy(&output).into_owned(),
        dropped,
        work,
    })
}

/// Waits (polling) until the bot's main process has ended, at most until
/// `deadline`.
fn wait_for_exit(
    bot: &mut BotProcess,
    deadline: std::time::Instant,
) -> std::io::Result<Option<std::process::ExitStatus>> {
    loop {
        if let Some(st) = bot.try_status()? {
            return Ok(Some(st));
        }
        if std::time::Instant::now() >= deadline {
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// `/dev/null`, to stand in for the compiler's closed standard input.
fn null_fd() -> std::io::Result<std::os::fd::OwnedFd> {
    Ok(fs::File::open("/dev/null")?.into())
}

/// Regular files under `dir` whose relative path matches a pattern
/// (component by component), with their sizes; symlinks are ignored.
fn collect(
    dir: &Path,
    prefix: &str,
    patterns: &[String],
    out: &mut Vec<Found>,
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
            out.push(Found {
                rel,
                path: e.path(),
                len: meta.len(),
                executable: meta.permissions().mode() & 0o111 != 0,
            });
        }
    }
    Ok(())
}

/// A program file a build made, not read yet (its size is checked first).
struct Found {
    rel: String,
    path: std::path::PathBuf,
    len: u64,
    executable: bool,
}

fn path_match(pattern: &str, path: &str) -> bool {
    let p: Vec<&str> = pattern.split('/').collect();
    let n: Vec<&str> = path.split('/').collect();
    p.len() == n.len() && p.iter().zip(&n).all(|(a, b)| glob_match(a, b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_is_stored_as_bytes_and_read_back_also_from_old_json() {
        let p = BotProgram {
            language: "c".into(),
            stem: "bot".into(),
            files: vec![
                BotFile::new("bot".into(), vec![0x7f, b'E', b'L', b'F', 0, 255], true),
                BotFile::new("data/x.txt".into(), b"hello".to_vec(), false),
            ],
        };
        let bytes = p.encode();
        assert_eq!(&bytes[..4], b"KBP\x01");
        // Bytes, not a JSON array of numbers: a few dozen bytes of framing.
        assert!(bytes.len() < 6 + 5 + 64, "{}", bytes.len());
        assert_eq!(BotProgram::decode(&bytes).unwrap(), p);
        let json = serde_json::to_vec(&p).unwrap();
        assert_eq!(BotProgram::decode(&json).unwrap(), p);
        // Every cut and a length that points past the end are refused.
        for cut in 0..bytes.len() {
            assert!(BotProgram::decode(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        let mut long = bytes.clone();
        long.push(0);
        assert!(BotProgram::decode(&long).is_err());
        let mut huge = p.encode();
        let at = huge.len() - 5 - 8;
        huge[at..at + 8].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(BotProgram::decode(&huge).is_err());
    }
}
