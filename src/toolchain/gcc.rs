//! Running gcc on a submitted source, inside the [`Jail`].
//!
//! Knows the flags of check 5 ("must be compilable with gcc"): pure
//! freestanding C, no headers, no builtins (so that `log2` is the
//! runtime's integer routine), no stack protector or PIC; gcc's object
//! does not play (the program that plays is clang's, [`super::wasm`]):
//! its messages are what a participant reads, and the size of its static
//! data ([`static_data_bytes`]) is a cheap guard before clang. It turns gcc's fate (exit
//! status, signals, limits) into words a participant understands, but does
//! not decide what a rejection is: that is [`super::compile`].

use crate::sandbox::jail::{
    Jail, JailError, JailExit, JailLimits, JailOutput, WorkFull, JAIL_ENV, WORK_BYTES, WORK_INODES,
};

/// The file name of the source inside the jail (gcc's messages show it).
pub const SOURCE_NAME: &str = "strategy.c";

/// The preprocessed source inside the jail: the one text that the checks
/// read and both compilers build.
pub const PREPROCESSED_NAME: &str = "strategy.i";

/// The contest runtime, linked with every strategy.
pub const RUNTIME_C: &str = include_str!("../runtime/knobellib.c");
/// The header documenting the five routines (participant kit).
pub const RUNTIME_H: &str = include_str!("../runtime/knobellib.h");

/// The gcc the jail runs.
pub const GCC: &str = "/usr/bin/gcc";

/// How `gcc -E` is started in the jail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GccStart {
    /// The driver, which starts `cc1 -E` as its child: kept for
    /// comparisons, and what a `cc1` run that ended other than by its exit
    /// 0 or 1 is run again through, for the driver's words on it.
    Driver,
    /// `cc1 -E` itself, with the arguments the driver gives it (asked once
    /// per process, [`cc1_preprocess_argv`]): one program started instead
    /// of two, about 2 ms of CPU a compile less. A run that ends other than
    /// by `cc1`'s exit 0 or 1 (a signal, a limit, an internal error) is run
    /// again through the driver, whose words on it the report quotes.
    ///
    /// The compile's again since the jail's init is the first process of
    /// the jail's PID namespace. It had been taken off when `cc1` was that
    /// process, which the kernel gives no signal of default action (red
    /// team E14: a macro bomb's `cc1` wrote its 16 MiB and went on
    /// expanding, its writes refused, until the jail's memory ended it,
    /// 1.7 s of CPU where the driver's `cc1` was stopped after 0.09 s). As
    /// the init's child, `cc1` started directly meets the file size and CPU
    /// limits by their signals as the driver's does
    /// (`the_compiles_gcc_e_is_stopped_by_the_file_size_limit`), and gives
    /// every test source the driver's report
    /// (`cc1_directly_gives_every_test_source_the_report_of_the_driver`).
    #[default]
    Cc1,
}

/// What a gcc run reads: C to preprocess, or the preprocessed text that
/// the checks read, which is compiled as it is (no macro expanded again,
/// no directive obeyed: `-x cpp-output`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    Source,
    Preprocessed,
}

impl Input {
    /// gcc's `-x` language of this input (clang always reads `-x c`:
    /// its driver would skip `-E` for `cpp-output`, see
    /// [`super::wasm::Toolchain::compile`]).
    pub fn language(self) -> &'static str {
        match self {
            Input::Source => "c",
            Input::Preprocessed => "cpp-output",
        }
    }
}

/// Flags for compiling C into an object for the contest runtime (after
/// `-x LANGUAGE`).
const CFLAGS: &[&str] = &[
    "-O2",
    "-ffreestanding",
    "-fno-builtin",
    "-nostdinc",
    "-fno-stack-protector",
    "-fno-pie",
    "-fno-pic",
    "-fcf-protection=none",
    "-fno-asynchronous-unwind-tables",
    "-fno-tree-loop-distribute-patterns",
    "-fdiagnostics-plain-output",
    "-fno-diagnostics-show-caret",
    "-fmax-errors=30",
    // K&R style and implicit declarations of the five routines are fine, as in 1994.
    "-Wno-implicit-int",
    "-Wno-implicit-function-declaration",
    "-Wno-builtin-declaration-mismatch",
    "-Wno-error=int-conversion",
    "-Wno-error=incompatible-pointer-types",
];

/// The `cc1` command gcc's driver runs for `driver` (a `gcc -E` of the
/// source), as the driver itself gives it (`gcc -###`, in the jail's
/// environment), asked once per process: the same program, flags and
/// files, without the driver's own start. `None`: the driver runs
/// anything but one `cc1` (another gcc), or could not be asked.
pub fn cc1_preprocess_argv(driver: &[&str]) -> Option<&'static [String]> {
    // Asked for the one `gcc -E` a compile runs; another is not answered.
    if driver != preprocess_command().as_slice() {
        return None;
    }
    static ARGV: std::sync::OnceLock<Option<Vec<String>>> = std::sync::OnceLock::new();
    ARGV.get_or_init(|| {
        let out = std::process::Command::new(driver[0])
            .arg("-###")
            .args(&driver[1..])
            .env_clear()
            .envs(JAIL_ENV.iter().filter_map(|kv| kv.split_once('=')))
            .stdin(std::process::Stdio::null())
            .output()
            .ok()?;
        driver_commands(&String::from_utf8_lossy(&out.stderr))
    })
    .as_deref()
}

/// The one command in `gcc -###`'s output (its lines that start with a
/// space: the programs it would run, an argument with a character of
/// the shell's in double quotes), if it is a `cc1`.
fn driver_commands(text: &str) -> Option<Vec<String>> {
    let mut commands = text.lines().filter(|l| l.starts_with(' '));
    let line = commands.next()?;
    if commands.next().is_some() {
        return None;
    }
    let mut argv = Vec::new();
    let mut chars = line.trim().chars().peekable();
    while let Some(&c) = chars.peek() {
        if c == ' ' {
            chars.next();
            continue;
        }
        let mut arg = String::new();
        let mut quoted = false;
        while let Some(c) = chars.next() {
            match c {
                '"' => quoted = !quoted,
                '\\' if quoted => arg.push(chars.next()?),
                ' ' if !quoted => break,
                c => arg.push(c),
            }
        }
        if quoted {
            return None;
        }
        argv.push(arg);
    }
    let program = argv.first()?;
    (program.starts_with('/') && program.ends_with("/cc1")).then_some(argv)
}

/// The bytes of static data (initialised, zero-initialised and read-only:
/// the sections that occupy memory and hold no code) of gcc's x86-64 ELF
/// object. `None`: not such an object. Reads only the section headers.
pub fn static_data_bytes(elf: &[u8]) -> Option<u64> {
    use object::elf::{SHF_ALLOC, SHF_EXECINSTR};
    use object::{Object, ObjectSection, SectionFlags};
    let file = object::File::parse(elf).ok()?;
    if file.format() != object::BinaryFormat::Elf {
        return None;
    }
    let data =
        |flags: u64| flags & u64::from(SHF_ALLOC) != 0 && flags & u64::from(SHF_EXECINSTR) == 0;
    Some(
        file.sections()
            .filter(|s| matches!(s.flags(), SectionFlags::Elf { sh_flags } if data(sh_flags)))
            .fold(0u64, |total, s| total.saturating_add(s.size())),
    )
}

/// The names under `__builtin_` that gcc's x86-64 ELF object calls
/// without defining: names gcc does not know as builtins (one it knows it
/// builds in place, or calls by its library name, never by this one), so
/// it took each for an implicitly declared function. `None`: not such an
/// object. Reads only the symbol table.
pub fn unknown_builtins(elf: &[u8]) -> Option<Vec<String>> {
    use object::{Object, ObjectSymbol};
    let file = object::File::parse(elf).ok()?;
    if file.format() != object::BinaryFormat::Elf {
        return None;
    }
    let mut names: Vec<String> = file
        .symbols()
        .filter(|s| s.is_undefined())
        .filter_map(|s| s.name().ok())
        .filter(|n| n.starts_with("__builtin_"))
        .map(str::to_string)
        .collect();
    names.sort();
    names.dedup();
    Some(names)
}

/// What happened to one gcc run, in participant's terms.
#[derive(Debug, Clone)]
pub struct GccRun {
    pub ok: bool,
    /// gcc's messages (capped), with a final note if something was cut or a limit hit.
    pub messages: String,
    /// Set when gcc was stopped by a limit: which, and a sentence saying it.
    pub limit_hit: Option<LimitHit>,
    /// The CPU time the run cost (the tool and the processes it started).
    pub cpu: std::time::Duration,
}

/// A limit a compiler run met, and the sentence a participant reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimitHit {
    pub limit: ToolLimit,
    pub sentence: String,
}

/// Which limit of the jail stopped a compiler run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolLimit {
    WallClock,
    Cpu,
    /// Its output file grew past the jail's file size.
    OutputSize,
    /// It ran out of memory: the jail's (the kernel's OOM killer ended
    /// it, counted by the jail's control group), or its address space
    /// (and said so).
    Memory,
    /// It was killed at its limits (CPU or memory, the kernel's kill).
    Killed,
    /// It crashed on a signal of its own.
    Crashed,
    /// Its work folder (the jail's tmpfs) was full: its bytes or its files.
    WorkFolder,
}

impl LimitHit {
    fn new(limit: ToolLimit, sentence: String) -> Option<LimitHit> {
        Some(LimitHit { limit, sentence })
    }

    /// Whether the tool stopped at the size of what it writes out (its
    /// output file or its memory): static data too large to write.
    pub fn is_size(&self) -> bool {
        matches!(self.limit, ToolLimit::OutputSize | ToolLimit::Memory)
    }
}

/// gcc in a jail, with the limits for one compile.
pub struct Gcc<'j> {
    jail: &'j Jail,
    limits: JailLimits,
}

/// `head… -x LANGUAGE CFLAGS… src -o out`.
fn cc_argv<'a>(head: &[&'a str], input: Input, src: &'a str, out: &'a str) -> Vec<&'a str> {
    let mut argv = head.to_vec();
    argv.extend_from_slice(&["-x", input.language()]);
    argv.extend_from_slice(CFLAGS);
    argv.extend_from_slice(&[src, "-o", out]);
    argv
}

/// The compile's `gcc -E` command, through the driver: `strategy.c` into
/// `strategy.i` (what [`Gcc::preprocess`] runs for the compile's own files;
/// tests compare it with the `cc1` start).
pub fn preprocess_command() -> Vec<&'static str> {
    cc_argv(&[GCC, "-E"], Input::Source, SOURCE_NAME, PREPROCESSED_NAME)
}

impl<'j> Gcc<'j> {
    pub fn new(jail: &'j Jail, limits: JailLimits) -> Self {
        Gcc { jail, limits }
    }

    /// Writes a file into the jail's work folder, dated at the start of
    /// 1970 (what `__TIMESTAMP__` shows: a build never depends on when it
    /// ran; the jail's `SOURCE_DATE_EPOCH` fixes `__DATE__` and `__TIME__`).
    pub fn put(&self, name: &str, contents: &[u8]) -> std::io::Result<()> {
        self.jail.write_file(name, contents, std::time::UNIX_EPOCH)
    }

    /// The size of a file in the jail's work folder, in bytes.
    pub fn size(&self, name: &str) -> std::io::Result<u64> {
        Ok(std::fs::symlink_metadata(self.jail.work_dir().join(name))?.len())
    }

    /// Reads a regular file from the jail's work folder, at most the
    /// limit of a file the tools may write ([`JailLimits::file_size`]):
    /// a larger one, or a link, is an error, never read.
    pub fn get(&self, name: &str) -> std::io::Result<Vec<u8>> {
        self.jail.read_file(name, self.limits.file_size)
    }

    /// `gcc -E`: the preprocessed source with line markers, in `out`,
    /// started as `start` says (the same text and messages either way;
    /// `cc1` directly only for [`SOURCE_NAME`] into [`PREPROCESSED_NAME`]).
    pub fn preprocess(&self, src: &str, out: &str, start: GccStart) -> Result<GccRun, JailError> {
        let driver = cc_argv(&[GCC, "-E"], Input::Source, src, out);
        let cc1 = match start {
            GccStart::Cc1 => cc1_preprocess_argv(&driver),
            GccStart::Driver => None,
        };
        let Some(cc1) = cc1 else {
            return self.run(&driver);
        };
        let cc1: Vec<&str> = cc1.iter().map(String::as_str).collect();
        let (run, exit) = self.run_tool_exit("gcc", &cc1)?;
        if matches!(exit, JailExit::Exited(0 | 1)) && run.limit_hit.is_none() {
            if !run.ok {
                // As the driver does: a failed run leaves no output.
                match std::fs::remove_file(self.jail.work_dir().join(out)) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                        return Err(JailError::Io {
                            program: "gcc".into(),
                            source: e,
                        })
                    }
                    _ => {}
                }
            }
            return Ok(run);
        }
        // What the driver says of a signal or an internal error is the
        // report's: the run again through it, both runs' CPU counted.
        let mut again = self.run(&driver)?;
        again.cpu += run.cpu;
        Ok(again)
    }

    /// `gcc -c`: an object file.
    pub fn compile(&self, input: Input, src: &str, out: &str) -> Result<GccRun, JailError> {
        self.run(&cc_argv(&[GCC, "-c"], input, src, out))
    }

    /// `gcc -c -w`: an object file, errors only (no warnings).
    pub fn compile_quiet(&self, input: Input, src: &str, out: &str) -> Result<GccRun, JailError> {
        self.run(&cc_argv(&[GCC, "-c", "-w"], input, src, out))
    }

    fn run(&self, argv: &[&str]) -> Result<GccRun, JailError> {
        self.run_tool("gcc", argv)
    }

    /// Runs another tool of the toolchain (clang, wasm-ld) in the jail with
    /// the same limits; its fate is told with its `name`.
    ///
    /// The CPU limit decides a verdict, never the clock: a run the
    /// wall-clock limit ended (and not for its memory) is
    /// [`JailError::Overloaded`], a problem of the server's, not the
    /// program's (a C source runs no code while it is compiled, so nothing
    /// of it can make a tool wait). Whatever CPU the run used: the limit
    /// is each process's (`RLIMIT_CPU`), a process past it ends by
    /// `SIGXCPU` before the wall, and the run's CPU is its finished
    /// processes' together (`cc1` then `as` may pass 10 s between them
    /// with each under it: red team E12).
    pub fn run_tool(&self, name: &str, argv: &[&str]) -> Result<GccRun, JailError> {
        Ok(self.run_tool_exit(name, argv)?.0)
    }

    /// [`Gcc::run_tool`], and how its process ended.
    fn run_tool_exit(&self, name: &str, argv: &[&str]) -> Result<(GccRun, JailExit), JailError> {
        let out = self.jail.run(argv, &self.limits)?;
        if out.oom_kills > 0 && !out.oom_kill_is_the_jails(self.limits.memory) {
            return Err(JailError::KilledFromOutside {
                program: name.to_string(),
                peak: out.memory_peak.unwrap_or(0),
                limit: self.limits.memory,
            });
        }
        if out.exit == JailExit::WallClock && out.oom_kills == 0 {
            return Err(JailError::Overloaded {
                program: name.to_string(),
                wall: self.limits.wall,
                cpu: out.cpu,
                cpu_count: out.cpu_count,
            });
        }
        let exit = out.exit;
        Ok((self.interpret(out, name), exit))
    }

    fn interpret(&self, out: JailOutput, tool: &str) -> GccRun {
        let lim = &self.limits;
        let text = out.output.replace("/work/", "");
        let work_full = out.work_full.filter(|_| !out.success()).map(|full| {
            let what = match full {
                WorkFull::Bytes => format!("its {} MB", WORK_BYTES >> 20),
                WorkFull::Inodes => format!("its {WORK_INODES} files"),
            };
            LimitHit {
                limit: ToolLimit::WorkFolder,
                sentence: format!(
                    "{tool} filled its work folder ({what}) and failed: the program makes the \
                     compiler write far more than a strategy needs; simplify it"
                ),
            }
        });
        // The kernel's own count is the evidence, never the tool's words:
        // its OOM killer ended a process of the run at the jail's memory.
        let out_of_memory = (out.oom_kills > 0).then(|| LimitHit {
            limit: ToolLimit::Memory,
            sentence: format!(
                "{tool} needed more than {mib} MiB of memory and was stopped: your program made \
                 the compiler use more than {mib} MiB (its work folder included), far more than a \
                 strategy needs (huge initialisers, macros that expand without end?); simplify it",
                mib = lim.memory >> 20
            ),
        });
        let limit_hit = match out.exit {
            _ if out_of_memory.is_some() => out_of_memory,
            JailExit::WallClock => LimitHit::new(ToolLimit::WallClock, format!(
                "{tool} did not finish within {} s and was stopped",
                lim.wall.as_secs()
            )),
            // The soft limit's `SIGXCPU` (every tool gets it: the jail's
            // init is the namespace's first process, which would not). A
            // tool that ignored it meets the hard limit's `SIGKILL` one
            // second above; the CPU the run used is then the verdict's
            // evidence, as for every process (red team E14).
            JailExit::Signaled(s)
                if s == libc::SIGXCPU
                    || (s == libc::SIGKILL && out.cpu.as_secs() >= lim.cpu_secs) =>
            {
                LimitHit::new(
                    ToolLimit::Cpu,
                    format!("{tool} used more than {} s of CPU time and was stopped", lim.cpu_secs),
                )
            }
            JailExit::Signaled(s) if s == libc::SIGXFSZ => LimitHit::new(ToolLimit::OutputSize, format!(
                "{tool}'s output grew beyond {} MB and was stopped (a macro that expands without end?)",
                lim.file_size >> 20
            )),
            JailExit::Signaled(s) if s == libc::SIGKILL => LimitHit::new(ToolLimit::Killed, format!(
                "{tool} was stopped because it needed more than its limits ({} s of CPU time, \
                 {} MB of memory): the program makes the compiler work far harder than its \
                 length explains (huge expressions or initialisers, deep nesting); simplify it",
                lim.cpu_secs,
                lim.address_space >> 20
            )),
            JailExit::Signaled(s) => LimitHit::new(ToolLimit::Crashed, format!(
                "{tool} crashed (signal {s}); this is a fault of the compiler on this program, \
                 not a rule of the contest: write the part it chokes on differently"
            )),
            // A child of the driver (`cc1`, `as`) ended by a limit: the
            // driver's own line says so, never a diagnostic of the
            // program's, whose words are its own (`tool_says`).
            JailExit::Exited(_) => {
                if tool_says(&text, "File size limit exceeded") {
                    LimitHit::new(ToolLimit::OutputSize, format!(
                        "{tool}'s output grew beyond {} MB and was stopped (a macro that expands without end?)",
                        lim.file_size >> 20
                    ))
                } else if tool_says(&text, "CPU time limit exceeded") {
                    LimitHit::new(ToolLimit::Cpu, format!(
                        "{tool} used more than {} s of CPU time and was stopped",
                        lim.cpu_secs
                    ))
                } else if tool_says(&text, "out of memory")
                    || tool_says(&text, "memory exhausted")
                {
                    LimitHit::new(ToolLimit::Memory, format!(
                        "{tool} needed more than {} MB of memory and was stopped",
                        lim.address_space >> 20
                    ))
                } else {
                    None
                }
            }
        };
        // A full folder says why the tool failed; another limit it met
        // (the file size, CPU) is what stopped it.
        let limit_hit = limit_hit.or(work_full);
        let cpu = out.cpu;
        let mut messages = text;
        if out.output_dropped > 0 {
            messages.push_str(&format!(
                "\n[... {} more bytes of compiler messages cut]\n",
                out.output_dropped
            ));
        }
        GccRun {
            ok: out.success() && limit_hit.is_none(),
            messages,
            limit_hit,
            cpu,
        }
    }
}

/// Whether a tool itself said `words` (the driver's "gcc: fatal error:
/// CPU time limit exceeded signal terminated program cc1", `cc1`'s "cc1:
/// out of memory allocating …"): on a line of the messages that is no
/// diagnostic of the program's text. Those name the file they are about
/// first (`strategy.c:3:2: warning: #warning …`, `strategy.c: In function
/// …`; plain output, no source lines shown, and no line marker can rename
/// the file: check 2), and whatever else they carry is the program's own
/// (an `#warning`, an `#error`, a static assertion's string): red team
/// G18, as F9's "No space left on device" before it.
fn tool_says(text: &str, words: &str) -> bool {
    text.lines()
        .filter(|line| !line.starts_with(WORK_FILE_PREFIX))
        .any(|line| line.contains(words))
}

/// What every file of the compile's work folder that a diagnostic can
/// name starts with ([`SOURCE_NAME`], [`PREPROCESSED_NAME`], the objects).
const WORK_FILE_PREFIX: &str = "strategy.";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_tools_own_line_says_a_limit() {
        let driver = "gcc: fatal error: CPU time limit exceeded signal terminated program cc1\n\
                      compilation terminated.\n";
        assert!(tool_says(driver, "CPU time limit exceeded"));
        assert!(tool_says(
            "cc1: out of memory allocating 65536 bytes after a total of 1 bytes\n",
            "out of memory"
        ));
        for program in [
            "strategy.c:2:2: warning: #warning CPU time limit exceeded [-Wcpp]\n",
            "strategy.c:2:2: error: #error out of memory\n",
            "strategy.c: In function 'main':\nstrategy.c:4:1: error: static assertion failed: \
             \"File size limit exceeded\"\n",
        ] {
            for words in [
                "CPU time limit exceeded",
                "out of memory",
                "File size limit exceeded",
            ] {
                assert!(!tool_says(program, words), "{program}");
            }
        }
    }

    #[test]
    fn the_drivers_one_cc1_command_is_read_with_its_quotes() {
        let text = "Using built-in specs.\nCOLLECT_GCC=gcc\n \
            /usr/lib/gcc/x86_64-linux-gnu/12/cc1 -E -quiet strategy.c -o strategy.i \
            \"-fmax-errors=30\" \"-D\\\"a b\\\\\" -O2\nCOLLECT_GCC_OPTIONS='-E'\n";
        assert_eq!(
            driver_commands(text).unwrap(),
            [
                "/usr/lib/gcc/x86_64-linux-gnu/12/cc1",
                "-E",
                "-quiet",
                "strategy.c",
                "-o",
                "strategy.i",
                "-fmax-errors=30",
                "-D\"a b\\",
                "-O2"
            ]
        );
        // Two programs (cc1 and as), another program, an open quote: the driver runs.
        assert_eq!(driver_commands(" /x/cc1 a\n /usr/bin/as b\n"), None);
        assert_eq!(driver_commands(" /usr/bin/cpp -E a\n"), None);
        assert_eq!(driver_commands(" /x/cc1 \"a\n"), None);
        assert_eq!(driver_commands("no command\n"), None);
    }

    #[test]
    fn cc1_is_asked_for_the_compiles_own_files_only() {
        let driver = cc_argv(&[GCC, "-E"], Input::Source, SOURCE_NAME, PREPROCESSED_NAME);
        let cc1 = cc1_preprocess_argv(&driver).expect("gcc's driver names its cc1");
        // The file the checks read is the one cc1 writes, from the source.
        assert!(cc1[0].ends_with("/cc1"));
        let at = |a: &str| cc1.iter().position(|x| x == a);
        assert!(at("-E").is_some());
        assert_eq!(cc1[at("-o").unwrap() + 1], PREPROCESSED_NAME);
        assert!(at(SOURCE_NAME).is_some());
        for flag in CFLAGS
            .iter()
            .filter(|f| f.starts_with("-W") || f.starts_with("-fmax"))
        {
            assert!(at(flag).is_some(), "{flag} not passed to cc1: {cc1:?}");
        }
        let other = cc_argv(&[GCC, "-E"], Input::Source, "probe.c", PREPROCESSED_NAME);
        assert_eq!(cc1_preprocess_argv(&other), None);
    }
}
