//! Running gcc on a submitted source, inside the [`Jail`].
//!
//! Knows the flags of check 5 ("must be compilable with gcc"): pure
//! freestanding C, no headers, no builtins (so that `log2` is the
//! runtime's integer routine), no stack protector or PIC. Check 5 is
//! gcc's front end on the preprocessed text ([`check_command`],
//! `-fsyntax-only`): gcc's object would not play (the program that plays
//! is clang's, [`super::wasm`]), its messages are what a participant
//! reads. `gcc -c` is run only by the tests; the builtins gcc does not
//! know (a rejection's words) are asked of its front end on a text of the
//! server's making ([`Gcc::unknown_builtins`]). It turns gcc's fate (exit
//! status, signals, limits) into words a participant understands, but does
//! not decide what a rejection is: that is [`super::compile`].
//!
//! gcc's programs (`cc1`; for `gcc -c` then `as`) are started directly, as
//! its driver names them ([`GccStart::Cc1`]), so that a limit is read from
//! the wait status of the program that met it; the driver is asked, outside
//! the jail and once per process, only for its commands and for its words
//! on a signal, never given a program's source.
//!
//! clang and wasm-ld run in the same jail with the same limits
//! ([`Gcc::run_clang`], [`Gcc::run_tool`]), each one process as the
//! jail's command, so their limits too are their own wait status; no word
//! of a tool's output chooses a limit but where the program's text cannot
//! put it (`Told`).

use std::sync::Arc;

use super::memo::Memo;
use crate::sandbox::jail::{
    CpuCount, Jail, JailError, JailExit, JailLimits, JailOutput, WorkFull, JAIL_ENV, WORK_BYTES,
    WORK_INODES,
};

/// The file name of the source inside the jail (gcc's messages show it).
pub const SOURCE_NAME: &str = "strategy.c";

/// The preprocessed source inside the jail: the one text that the checks
/// read and both compilers build.
pub const PREPROCESSED_NAME: &str = "strategy.i";

/// gcc's object in the work folder (of the tests' `gcc -c`).
pub const OBJECT_NAME: &str = "strategy.o";

/// The contest runtime, linked with every strategy.
pub const RUNTIME_C: &str = include_str!("../runtime/knobellib.c");
/// The header documenting the five routines (participant kit).
pub const RUNTIME_H: &str = include_str!("../runtime/knobellib.h");

/// The gcc the jail runs.
pub const GCC: &str = "/usr/bin/gcc";

/// How gcc is started in the jail, for `gcc -E`, check 5's
/// `gcc -fsyntax-only` and `gcc -c` alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GccStart {
    /// The driver, which starts `cc1` (and for `gcc -c` then `as`) as its
    /// children: kept for comparisons, for a command whose programs the
    /// driver does not name plainly, and what a program that exited with
    /// a status other than 0 or 1 (an internal error) is run again through.
    Driver,
    /// The driver's programs themselves, one after the other as the
    /// jail's commands, with the arguments the driver gives them (asked
    /// once per process, `gcc -###`: [`cc1_preprocess_argv`],
    /// [`cc1_check_argv`], [`compile_programs`]): `cc1 -E` for `gcc -E`;
    /// `cc1 -fsyntax-only` for check 5; `cc1` to assembler text, then
    /// `as`, for `gcc -c`. One program started fewer, about
    /// 2 ms of CPU a run less. Each is the jail init's child, so a limit
    /// it meets is told by its own wait status, as the kernel gave it
    /// (`SIGXFSZ`, `SIGXCPU`), never by words; the words the driver would
    /// have added ("gcc: internal compiler error: File size limit exceeded
    /// signal terminated program cc1", …) are the driver's own, asked of it
    /// once per program and signal ([`drivers_words`]), so the report is
    /// the driver's.
    ///
    /// `gcc -E`'s since the jail's init is the first process of the
    /// jail's PID namespace. It had been taken off when `cc1` was that
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
    // Kept for the process's life: computed once, so leaked once.
    static ARGV: Memo<(), Option<&'static [String]>> = Memo::new();
    ARGV.get_or_compute((), || {
        driver_commands(&drivers_plan(driver)?).map(|argv| &*argv.leak())
    })
}

/// What `gcc -###` says it would run for `driver` (its standard error),
/// asked in the jail's environment.
fn drivers_plan(driver: &[&str]) -> Option<String> {
    let out = std::process::Command::new(driver[0])
        .arg("-###")
        .args(&driver[1..])
        .env_clear()
        .envs(JAIL_ENV.iter().filter_map(|kv| kv.split_once('=')))
        .stdin(std::process::Stdio::null())
        .output()
        .ok()?;
    Some(String::from_utf8_lossy(&out.stderr).into_owned())
}

/// The one command in `gcc -###`'s output, if it is a `cc1`.
fn driver_commands(text: &str) -> Option<Vec<String>> {
    let mut commands = commands_of(text)?;
    if commands.len() != 1 {
        return None;
    }
    let argv = commands.pop()?;
    let program = argv.first()?;
    (program.starts_with('/') && program.ends_with("/cc1")).then_some(argv)
}

/// The commands in `gcc -###`'s output: its lines that start with a
/// space (the programs it would run, an argument with a character of the
/// shell's in double quotes). `None`: an open quote.
fn commands_of(text: &str) -> Option<Vec<Vec<String>>> {
    let mut commands = Vec::new();
    for line in text.lines().filter(|l| l.starts_with(' ')) {
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
        commands.push(argv);
    }
    Some(commands)
}

/// The two programs gcc's driver runs for a `gcc -c` (C, or its
/// preprocessed text, into an object), as it gives them: `cc1` writing
/// assembler text, then `as` reading it and writing the object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompilePrograms {
    /// `cc1`, its output the assembler text `asm_file`.
    pub cc1: Vec<String>,
    /// `as`, found on the jail's `PATH` as the driver finds it, reading
    /// `asm_file`.
    pub assembler: Vec<String>,
    /// The assembler text in the work folder: the object's file name with
    /// `.s` for `.o`, in the work folder wherever the object is written
    /// (the driver's is a temporary file of a random name there, which it
    /// removes; so is this one).
    pub asm_file: String,
}

/// The programs gcc's driver runs for `driver` (a `gcc -c` writing an
/// object `….o`), as the driver itself gives them (`gcc -###`, in the
/// jail's environment), asked once per process and command: the same
/// programs, flags and files, the driver's temporary assembler file
/// named after the object. `None`: the driver runs anything but `cc1`
/// and then `as` on cc1's text, or could not be asked.
pub fn compile_programs(driver: &[&str]) -> Option<Arc<CompilePrograms>> {
    static KNOWN: Memo<Vec<String>, Option<Arc<CompilePrograms>>> = Memo::new();
    KNOWN.get_or_compute(driver.iter().map(|a| a.to_string()).collect(), || {
        drivers_plan(driver)
            .and_then(|text| compile_programs_of(&text, driver, &jail_path()))
            .map(Arc::new)
    })
}

/// The folders of the jail's `PATH`.
fn jail_path() -> Vec<String> {
    JAIL_ENV
        .iter()
        .find_map(|kv| kv.strip_prefix("PATH="))
        .map(|p| p.split(':').map(str::to_string).collect())
        .unwrap_or_default()
}

/// [`compile_programs`] read from `gcc -###`'s `text` for `driver`, a
/// program without a folder looked for in `path` (the jail's `/usr` is the
/// host's).
fn compile_programs_of(text: &str, driver: &[&str], path: &[String]) -> Option<CompilePrograms> {
    let commands = commands_of(text)?;
    let [cc1, assembler] = commands.as_slice() else {
        return None;
    };
    let object = driver.get(driver.iter().position(|a| *a == "-o")? + 1)?;
    // In the work folder, as the driver's temporary, wherever the object.
    let asm_file = format!(
        "{}.s",
        std::path::Path::new(object)
            .file_name()?
            .to_str()?
            .strip_suffix(".o")?
    );
    if driver.contains(&asm_file.as_str()) {
        return None;
    }
    let program = cc1.first()?;
    if !(program.starts_with('/') && program.ends_with("/cc1")) {
        return None;
    }
    // cc1 writes the driver's temporary file, `as` reads it (its last
    // argument) and writes the object; the temporary appears nowhere else.
    let temporary = cc1.get(cc1.iter().position(|a| a == "-o")? + 1)?;
    let name = assembler.first()?;
    let uses = |argv: &[String]| argv.iter().filter(|a| *a == temporary).count();
    if !temporary.ends_with(".s")
        || std::path::Path::new(name).file_name()? != "as"
        || assembler.last()? != temporary
        || !assembler
            .windows(2)
            .any(|w| w[0] == "-o" && w[1] == *object)
        || uses(cc1) != 1
        || uses(assembler) != 1
    {
        return None;
    }
    let rename = |argv: &[String]| -> Vec<String> {
        argv.iter()
            .map(|a| {
                if a == temporary {
                    asm_file.clone()
                } else {
                    a.clone()
                }
            })
            .collect()
    };
    let mut assembler = rename(assembler);
    if !name.starts_with('/') {
        // As the driver's `execvp`: the first of the PATH's folders that has it.
        assembler[0] = path.iter().find_map(|dir| {
            use std::os::unix::fs::PermissionsExt;
            let at = std::path::Path::new(dir).join(name);
            let meta = std::fs::metadata(&at).ok()?;
            (meta.is_file() && meta.permissions().mode() & 0o111 != 0)
                .then(|| at.to_string_lossy().into_owned())
        })?;
    }
    Some(CompilePrograms {
        cc1: rename(cc1),
        assembler,
        asm_file,
    })
}

/// What gcc's driver says (its standard error) when `program` (`cc1`,
/// `as`), which it started for `driver`, ends by `signal`: asked of the
/// driver itself, once per process, command, program and signal, outside
/// the jail with a stand-in of that name that ends by that signal at once
/// (`-B`, a folder of stand-ins: the others exit 0), on an empty input.
/// So a report of a program started directly has the driver's words on
/// its end, whatever the gcc: the kind ("internal compiler error", "fatal
/// error"), the signal's name, the lines that follow. `None`: it could
/// not be asked, or said nothing.
pub fn drivers_words(driver: &[&str], program: &str, signal: i32) -> Option<String> {
    static KNOWN: Memo<(Vec<String>, String, i32), Option<String>> = Memo::new();
    let key = (
        driver.iter().map(|a| a.to_string()).collect::<Vec<_>>(),
        program.to_string(),
        signal,
    );
    KNOWN.get_or_compute(key, || ask_drivers_words(driver, program, signal))
}

fn ask_drivers_words(driver: &[&str], program: &str, signal: i32) -> Option<String> {
    use std::os::unix::fs::PermissionsExt;
    let n = driver.len();
    // The input: before `-o OUT`, or last where nothing is written
    // (check 5's `-fsyntax-only`).
    let input = if n >= 4 && driver[n - 2] == "-o" {
        driver[n - 3]
    } else if n >= 2 && driver.contains(&"-fsyntax-only") {
        driver[n - 1]
    } else {
        return None;
    };
    let dir = tempfile::tempdir().ok()?;
    let stand_in = concat!(
        "#!/bin/sh\n",
        "if [ \"${0##*/}\" = \"$KNOBELN_STAND_IN\" ]; then kill -\"$KNOBELN_SIGNAL\" $$; exit 125; fi\n",
        "exit 0\n"
    );
    for name in ["cc1", "as"] {
        let at = dir.path().join(name);
        std::fs::write(&at, stand_in).ok()?;
        std::fs::set_permissions(&at, std::fs::Permissions::from_mode(0o755)).ok()?;
    }
    std::fs::write(dir.path().join(input), b"").ok()?;
    let out = std::process::Command::new(driver[0])
        .arg(format!("-B{}/", dir.path().display()))
        .args(&driver[1..])
        .current_dir(dir.path())
        .env_clear()
        .envs(
            JAIL_ENV
                .iter()
                .filter_map(|kv| kv.split_once('='))
                .filter(|(k, _)| *k != "TMPDIR"),
        )
        .env("TMPDIR", dir.path())
        .env("KNOBELN_STAND_IN", program)
        .env("KNOBELN_SIGNAL", signal.to_string())
        .stdin(std::process::Stdio::null())
        .output()
        .ok()?;
    let words = String::from_utf8_lossy(&out.stderr).into_owned();
    (!out.status.success() && !words.is_empty()).then_some(words)
}

/// The file of [`builtins_probe`] in the jail's work folder.
pub const PROBE_NAME: &str = "builtins-probe.c";

/// The most names one [`Gcc::unknown_builtins`] asks gcc about: a text
/// naming more gets its first ones' words chosen by what gcc knows, the
/// rest the general words (check 6 refuses each all the same).
pub const MAX_PROBED_NAMES: usize = 64;

/// A C text that calls each of `names` with no argument, one function a
/// line (line `i + 1` for `names[i]`): gcc's front end says "implicit
/// declaration of function" of a name it does not know, and of a builtin
/// it knows says nothing or that the arguments are wrong. The names are
/// identifiers (the lexer's); any other is left out (an empty line).
pub fn builtins_probe(names: &[&str]) -> String {
    let mut text = String::new();
    for (i, name) in names.iter().enumerate() {
        let identifier = !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
        if identifier {
            text.push_str(&format!("void knobeln_probe_{i}(void) {{ {name}(); }}"));
        }
        text.push('\n');
    }
    text
}

/// What [`Gcc::unknown_builtins`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownBuiltins {
    /// The names gcc does not know; `None`: gcc met a limit on the probe.
    pub names: Option<Vec<String>>,
    /// The probe's CPU (its driver's and `cc1`'s).
    pub cpu: std::time::Duration,
}

/// The names of [`builtins_probe`]`(names)` that gcc's front end (its
/// `messages`) declared implicitly: those it does not know. Read by the
/// probe's line numbers, not by gcc's quotes (which follow the locale).
pub fn unknown_in_probe(messages: &str, names: &[&str]) -> Vec<String> {
    let mut unknown: Vec<String> = messages
        .lines()
        .filter(|l| l.contains("implicit declaration of function"))
        .filter_map(|l| l.strip_prefix(PROBE_NAME)?.strip_prefix(':'))
        .filter_map(|rest| rest.split(':').next()?.parse::<usize>().ok())
        .filter_map(|line| names.get(line.checked_sub(1)?))
        .map(|name| name.to_string())
        .collect();
    unknown.sort();
    unknown.dedup();
    unknown
}

/// The words after the count of bytes a run's messages lost to the
/// jail's cap (`[... N more bytes of compiler messages cut]`): where they
/// are, the errors may have drowned in warnings.
pub const MESSAGES_CUT: &str = "more bytes of compiler messages cut";

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
    /// How check 5's gcc and `gcc -c` start ([`Gcc::started`]); `gcc -E`
    /// is told at each call.
    start: GccStart,
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

/// Which of gcc's messages a run gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Messages {
    /// Its errors and its warnings.
    All,
    /// Its errors alone (`-w`): asked again when the errors drowned in
    /// warnings.
    ErrorsOnly,
}

/// Check 5's gcc: its front end reads the preprocessed text
/// (`-fsyntax-only`), as `gcc -c` reads it, and writes nothing. The
/// same messages as `gcc -c` for every test source
/// (`gccs_front_end_gives_every_test_source_the_messages_of_gcc_c`) but
/// those gcc gives only while building an object, at `-O0` too (a loop
/// past an array's end, a `noreturn` function that returns, an ignored
/// `warn_unused_result`, `-Wstringop-overflow`, …, of which clang says
/// those [`super::wasm::CLANG_WARNINGS`] name; a call of a function
/// declared `__attribute__((error))`, an attribute check 2 refuses
/// before): about a third of `gcc -c`'s CPU, no back end started, no
/// `as`.
pub fn check_command(messages: Messages) -> Vec<&'static str> {
    let mut argv = vec![GCC, "-fsyntax-only"];
    if messages == Messages::ErrorsOnly {
        argv.push("-w");
    }
    argv.extend_from_slice(&["-x", Input::Preprocessed.language()]);
    argv.extend_from_slice(CFLAGS);
    argv.push(PREPROCESSED_NAME);
    argv
}

/// The `cc1` command gcc's driver runs for `driver`, one of the two
/// [`check_command`]s, as the driver gives it (`gcc -###`, in the jail's
/// environment), asked once per process and command. `None`: another
/// command, or the driver runs anything but one `cc1` reading the
/// preprocessed text without writing a file.
pub fn cc1_check_argv(driver: &[&str]) -> Option<&'static [String]> {
    let messages = [Messages::All, Messages::ErrorsOnly]
        .into_iter()
        .find(|m| driver == check_command(*m).as_slice())?;
    static ARGV: Memo<Messages, Option<&'static [String]>> = Memo::new();
    ARGV.get_or_compute(messages, || {
        let argv = driver_commands(&drivers_plan(driver)?)?;
        let at = |a: &str| argv.iter().position(|x| x == a);
        // cc1 reads the checked text and writes nothing: its only file
        // argument after `-o` is the null device, never the work folder.
        at("-fsyntax-only")?;
        at(PREPROCESSED_NAME)?;
        (argv.get(at("-o")? + 1)? == "/dev/null").then_some(())?;
        Some(&*argv.leak())
    })
}

/// The `cc1` programs a compile starts directly, as gcc's driver names
/// them for [`preprocess_command`] and [`check_command`]: one program
/// (named by the same path) on every gcc seen. Found once per process,
/// as the driver's answers are ([`cc1_preprocess_argv`],
/// [`cc1_check_argv`]). The `gcc -c` a rejection's words may need is
/// not asked of the driver at start-up for it: its `cc1` is the same.
pub fn cc1_programs() -> &'static [std::path::PathBuf] {
    static FOUND: std::sync::OnceLock<Vec<std::path::PathBuf>> = std::sync::OnceLock::new();
    FOUND.get_or_init(|| {
        let preprocess = cc1_preprocess_argv(&preprocess_command()).and_then(|argv| argv.first());
        let check = cc1_check_argv(&check_command(Messages::All)).and_then(|argv| argv.first());
        let mut found: Vec<std::path::PathBuf> = preprocess
            .into_iter()
            .chain(check)
            .map(std::path::PathBuf::from)
            .collect();
        found.dedup();
        found
    })
}

/// Has the jail run gcc's `cc1` (which every compile starts twice: its
/// preprocessing and its compile) from a copy in huge pages
/// ([`crate::sandbox::held`]), made on a thread of its own once per
/// process; the runs that start the driver (which starts `cc1` from the
/// disk) are unchanged.
pub fn hold_cc1_in_memory() {
    for cc1 in cc1_programs() {
        crate::sandbox::held::hold_in_background(cc1);
    }
}

impl<'j> Gcc<'j> {
    pub fn new(jail: &'j Jail, limits: JailLimits) -> Self {
        Gcc {
            jail,
            limits,
            start: GccStart::default(),
        }
    }

    /// This gcc with check 5's gcc and `gcc -c` started as `start` says
    /// (the same object and report either way).
    pub fn started(self, start: GccStart) -> Self {
        Gcc { start, ..self }
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
        self.run_cc1(&driver, cc1, Some(out))
    }

    /// Check 5's gcc ([`check_command`]): its front end on the
    /// preprocessed text, its messages; started as [`Gcc::started`] says
    /// (`cc1` directly or the driver: the same report either way).
    pub fn check(&self, messages: Messages) -> Result<GccRun, JailError> {
        let driver = check_command(messages);
        let cc1 = match self.start {
            GccStart::Cc1 => cc1_check_argv(&driver),
            GccStart::Driver => None,
        };
        self.run_cc1(&driver, cc1, None)
    }

    /// `driver`'s one `cc1` started directly where it is known (`cc1`),
    /// else the driver itself; `out`, what it writes, if anything.
    fn run_cc1(
        &self,
        driver: &[&str],
        cc1: Option<&[String]>,
        out: Option<&str>,
    ) -> Result<GccRun, JailError> {
        match cc1 {
            Some(cc1) => self.run_programs(driver, &[cc1], None, out),
            None => self.run(driver),
        }
    }

    /// The names of `names` (the first [`MAX_PROBED_NAMES`]) that gcc
    /// does not know as builtins: gcc's front end, through its driver, on
    /// [`builtins_probe`] of them, a text of the server's making whose
    /// cost does not depend on the program (before, `gcc -c` of the
    /// program ran again for these words: a text whose front end was
    /// costly cost it twice; red team F2 of 2026-12-05).
    pub fn unknown_builtins(&self, names: &[&str]) -> Result<UnknownBuiltins, JailError> {
        let names = &names[..names.len().min(MAX_PROBED_NAMES)];
        self.put(PROBE_NAME, builtins_probe(names).as_bytes())
            .map_err(|source| JailError::Io {
                program: "gcc".into(),
                source,
            })?;
        let run = self.run(&[
            GCC,
            "-fsyntax-only",
            "-x",
            "c",
            "-ffreestanding",
            "-fno-builtin",
            "-nostdinc",
            "-Wimplicit-function-declaration",
            "-fdiagnostics-plain-output",
            "-fno-diagnostics-show-caret",
            PROBE_NAME,
        ])?;
        Ok(UnknownBuiltins {
            names: run
                .limit_hit
                .is_none()
                .then(|| unknown_in_probe(&run.messages, names)),
            cpu: run.cpu,
        })
    }

    /// `gcc -c`: an object file.
    pub fn compile(&self, input: Input, src: &str, out: &str) -> Result<GccRun, JailError> {
        self.compile_by(&cc_argv(&[GCC, "-c"], input, src, out), out)
    }

    /// `driver`, a `gcc -c` writing `out`, started as [`Gcc::started`]
    /// says: `cc1` and then `as` directly, or the driver.
    fn compile_by(&self, driver: &[&str], out: &str) -> Result<GccRun, JailError> {
        let programs = match self.start {
            GccStart::Cc1 => compile_programs(driver),
            GccStart::Driver => None,
        };
        match programs {
            Some(p) => self.run_programs(
                driver,
                &[&p.cc1, &p.assembler],
                Some(&p.asm_file),
                Some(out),
            ),
            None => self.run(driver),
        }
    }

    /// gcc's driver as the jail's command: the limit a child of its
    /// (`cc1`, `as`) met is in the driver's own words, never its wait
    /// status, which the driver gives as its own exit ([`Told::ByDriver`]).
    fn run(&self, argv: &[&str]) -> Result<GccRun, JailError> {
        let out = self.run_checked("gcc", argv, &self.limits)?;
        Ok(self.interpret(out, "gcc", Told::ByDriver))
    }

    /// Runs `programs`, the driver's for `driver` (which writes `out`), as
    /// the driver runs them, each the jail's command: one after the other,
    /// the next only once the one before exited 0, their messages one
    /// stream within the output cap, `temporary` (the assembler text)
    /// removed at the end and `out` (if it writes one) when a program
    /// exited 1. A limit is told
    /// by the wait status of the program that met it, as the kernel gave
    /// it, never by words; a program ended by a signal gets the driver's
    /// own words on it ([`drivers_words`]) after its messages, as through
    /// the driver. One that exited with another status than 0 or 1 (an
    /// internal error) is run again through the driver, whose words on it
    /// are the report's, both runs' CPU counted. The address space's
    /// refusal, which gives no signal, is read only from the first
    /// program's words (`cc1`, in both uses: [`cc1_preprocess_argv`],
    /// [`CompilePrograms`]) and only where it ended the run, so that the
    /// text is `cc1`'s alone: `as` prints a program's `.error "x\n…"` (an
    /// `__asm__`) with its newline, so a line of its output can begin with
    /// any words, libiberty's "as: out of memory allocating …" among them
    /// (red team 20); its refusal of memory is a failure like another.
    fn run_programs(
        &self,
        driver: &[&str],
        programs: &[&[String]],
        temporary: Option<&str>,
        out: Option<&str>,
    ) -> Result<GccRun, JailError> {
        let mut all: Option<JailOutput> = None;
        let mut ended = None;
        let mut names = Vec::new();
        for argv in programs {
            let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
            names.push(argv[0]);
            let limits = JailLimits {
                output_cap: self
                    .limits
                    .output_cap
                    .saturating_sub(all.as_ref().map_or(0, |a| a.output.len())),
                ..self.limits
            };
            let run = match self.run_checked("gcc", &argv, &limits) {
                Ok(run) => run,
                Err(JailError::Overloaded {
                    program,
                    wall,
                    cpu,
                    cpu_count,
                }) => {
                    // The run's CPU is all its programs'.
                    return Err(JailError::Overloaded {
                        program,
                        wall,
                        cpu: cpu + all.as_ref().map_or(std::time::Duration::ZERO, |a| a.cpu),
                        cpu_count,
                    });
                }
                Err(e) => return Err(e),
            };
            let exit = run.exit;
            all = Some(match all {
                Some(before) => joined(before, run),
                None => run,
            });
            if exit != JailExit::Exited(0) {
                ended = Some((argv[0], exit, names.len() == 1));
                break;
            }
        }
        let Some(mut all) = all else {
            return self.run(driver);
        };
        if let Some(name) = temporary {
            self.remove(name)?;
        }
        match ended {
            None => {}
            Some((_, JailExit::Exited(1), _)) => {
                if let Some(out) = out {
                    self.remove(out)?;
                }
            }
            Some((program, JailExit::Signaled(signal), _)) => {
                // The kernel's signal is the verdict; the driver's words on
                // it follow the program's messages, as in its stream (and
                // what the program wrote stays, as the driver, which stops
                // at its words, leaves it).
                let name = program.rsplit('/').next().unwrap_or(program);
                if let Some(words) = drivers_words(driver, name, signal) {
                    let room = self.limits.output_cap.saturating_sub(all.output.len());
                    let mut keep = room.min(words.len());
                    while !words.is_char_boundary(keep) {
                        keep -= 1;
                    }
                    all.output.push_str(&words[..keep]);
                    all.output_dropped += (words.len() - keep) as u64;
                }
            }
            Some(_) => {
                let mut again = self.run(driver)?;
                again.cpu += all.cpu;
                return Ok(again);
            }
        }
        // The first program's words alone, where it ended the run.
        let refusal = match ended {
            Some((_, _, true)) => Refusal::OwnLine(&names[..1]),
            _ => Refusal::Unsaid,
        };
        Ok(self.interpret(all, "gcc", Told::ByStatus(refusal)))
    }

    /// Removes a file of the work folder, if there is one.
    fn remove(&self, name: &str) -> Result<(), JailError> {
        match std::fs::remove_file(self.jail.work_dir().join(name)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(JailError::Io {
                program: "gcc".into(),
                source: e,
            }),
            _ => Ok(()),
        }
    }

    /// Runs a program in the jail with the same limits, as the jail's
    /// command (wasm-ld, which links in its own process; a tool of the
    /// tests); its fate is told with its `name`, by its wait status alone
    /// (`Told::ByStatus`): no word of its output chooses a limit.
    /// wasm-ld names the program's symbols in its lines (an undefined
    /// one's name is any text an `__asm__` label gives it, newlines too),
    /// and its own refusal of memory ("cannot open …: Out of memory") is
    /// an error like another: a failure, no limit.
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
        let out = self.run_checked(name, argv, &self.limits)?;
        Ok(self.interpret(out, name, Told::ByStatus(Refusal::Unsaid)))
    }

    /// Runs clang (`argv`, with [`super::wasm::CLANG_FLAGS`]: its
    /// compiler in its driver's process, `-fintegrated-cc1`, and no
    /// reproducer started after a crash, `-fno-crash-diagnostics`; one
    /// process) as the jail's command, told as "clang", like
    /// [`Gcc::run_tool`]: a limit by its own wait status (`SIGXCPU`,
    /// `SIGXFSZ`, the hard CPU limit's `SIGKILL`). Only the address
    /// space's refusal, which gives no signal, is read from its end: its
    /// compiler aborted (LLVM ends so when an allocation fails), which the
    /// driver, catching it, says by its exit status `128 + SIGABRT`, a
    /// status no diagnostic gives, and LLVM's own line "LLVM ERROR: out of
    /// memory" is in its output (`Refusal::LlvmAbort`).
    pub fn run_clang(&self, argv: &[&str]) -> Result<GccRun, JailError> {
        let out = self.run_checked("clang", argv, &self.limits)?;
        Ok(self.interpret(out, "clang", Told::ByStatus(Refusal::LlvmAbort)))
    }

    /// One run in the jail, the faults that are no verdict taken out.
    fn run_checked(
        &self,
        name: &str,
        argv: &[&str],
        limits: &JailLimits,
    ) -> Result<JailOutput, JailError> {
        let out = self.jail.run(argv, limits)?;
        if out.oom_kills > 0 && !out.oom_kill_is_the_jails(limits.memory) {
            return Err(JailError::KilledFromOutside {
                program: name.to_string(),
                peak: out.memory_peak.unwrap_or(0),
                limit: limits.memory,
            });
        }
        if out.exit == JailExit::WallClock && out.oom_kills == 0 {
            return Err(JailError::Overloaded {
                program: name.to_string(),
                wall: limits.wall,
                cpu: out.cpu,
                cpu_count: out.cpu_count,
            });
        }
        Ok(out)
    }

    fn interpret(&self, out: JailOutput, tool: &str, told: Told<'_>) -> GccRun {
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
            JailExit::Exited(code) => match told {
                // A program started as the jail's command: its limits are
                // its own wait status, above; only the address space's
                // refusal, which gives no signal, is said, as `refusal`
                // reads it.
                Told::ByStatus(refusal) => {
                    if refusal.said(code, &text) {
                        address_space(tool, lim)
                    } else {
                        None
                    }
                }
                // A child of the driver (`cc1`, `as`) ended by a limit: the
                // driver's own line says so, never a diagnostic of the
                // program's, whose words are its own ([`drivers_signal`]),
                // read to the end of its output, past the cap (the
                // program's messages may fill it before the driver's line
                // comes); a refusal of memory, `cc1`'s own line where `as`
                // never spoke.
                Told::ByDriver => {
                    let all = format!("{text}\n{}", out.output_tail.replace("/work/", ""));
                    let said = drivers_signal(code, &all);
                    if said == Some("File size limit exceeded") {
                        LimitHit::new(ToolLimit::OutputSize, format!(
                            "{tool}'s output grew beyond {} MB and was stopped (a macro that expands without end?)",
                            lim.file_size >> 20
                        ))
                    } else if said == Some("CPU time limit exceeded") {
                        LimitHit::new(ToolLimit::Cpu, format!(
                            "{tool} used more than {} s of CPU time and was stopped",
                            lim.cpu_secs
                        ))
                    } else if assembler_silent(&text) && out_of_memory_line(&text, DRIVERS_PROGRAMS) {
                        address_space(tool, lim)
                    } else {
                        None
                    }
                }
            },
        };
        // A full folder says why the tool failed; another limit it met
        // (the file size, CPU) is what stopped it.
        let limit_hit = limit_hit.or(work_full);
        let cpu = out.cpu;
        let mut messages = text;
        if out.output_dropped > 0 {
            messages.push_str(&format!("\n[... {} {MESSAGES_CUT}]\n", out.output_dropped));
        }
        GccRun {
            ok: out.success() && limit_hit.is_none(),
            messages,
            limit_hit,
            cpu,
        }
    }
}

/// Whether gcc's driver said, on a line it begins with its own name, that
/// a program it started ended by the signal whose name is `signal` (its
/// "gcc: fatal error: CPU time limit exceeded signal terminated program
/// cc1", "gcc: internal compiler error: File size limit exceeded signal
/// terminated program as"). The driver's own lines are of its own words;
/// a diagnostic of `cc1`'s names the program's file first or begins with
/// `cc1` ("cc1: error: attribute 'target' argument 'File size limit
/// exceeded' is unknown", a program's `#pragma GCC target`), and gcc
/// quotes a program's text with its control characters escaped (`\x0a`),
/// so no line begins where the program's words are. Before, any line
/// that did not name the program's file said a limit (red team G18 closed
/// the `#warning`s, F9's "No space left on device" before it; the pragma's
/// line still chose the file size through the driver).
///
/// But `as` prints an `.error` directive's string with its newlines, so a
/// line after "Assembler messages:" may begin with anything, "gcc: " too
/// (red team 20). Two things the program cannot write decide instead:
/// the driver's exit status, 4 (an internal compiler error) only where
/// a program it started ended by a signal (`as` after its `.error` exits
/// 1, and so does the driver), and the order of the lines: the driver
/// says a program's end after that program's last word, so only its
/// last line of the kind is read. It gives the signal's name.
fn drivers_signal(exit: i32, text: &str) -> Option<&str> {
    const MARK: &str = " signal terminated program ";
    if exit != DRIVER_SIGNALLED_EXIT {
        return None;
    }
    let line = text.lines().rev().find(|line| {
        line.strip_prefix(DRIVER_NAME)
            .and_then(|rest| rest.strip_prefix(": "))
            .is_some_and(|rest| rest.contains(MARK))
    })?;
    let said = &line[DRIVER_NAME.len() + 2..line.find(MARK)?];
    ["File size limit exceeded", "CPU time limit exceeded"]
        .into_iter()
        .find(|signal| said.ends_with(signal))
}

/// The exit status of gcc's driver when a program it started ended by a
/// signal: its internal compiler error's, `ICE_EXIT_CODE`.
const DRIVER_SIGNALLED_EXIT: i32 = 4;

/// Whether `as` said nothing in a run through gcc's driver: an
/// assembler's message (its "…: Assembler messages:" head comes first)
/// may be followed by any line of the program's choosing, so a refusal
/// of memory is read only where `as` never spoke (`cc1` refused it, `as`
/// never started). A real refusal of `as`'s is then a failure without a
/// limit, as wasm-ld's.
fn assembler_silent(text: &str) -> bool {
    !text
        .lines()
        .any(|line| line.ends_with(": Assembler messages:"))
}

/// The name gcc's driver ([`GCC`]) begins its own lines with.
const DRIVER_NAME: &str = "gcc";

/// The programs gcc's driver starts whose refusal of memory is their own
/// line ([`out_of_memory_line`]), as the driver names them.
const DRIVERS_PROGRAMS: &[&str] = &["cc1", "as"];

/// What a run's words may say of a limit no wait status told.
#[derive(Debug, Clone, Copy)]
enum Told<'a> {
    /// A program the jail started as its command, in one process (gcc's
    /// `cc1` and `as` started directly, clang with its compiler in its
    /// own process, wasm-ld): it meets the file size and CPU limits by its
    /// own signal, so its words say at most the address space's refusal,
    /// which gives none, as [`Refusal`] reads it.
    ByStatus(Refusal<'a>),
    /// gcc's driver, whose children (`cc1`, `as`) meet the limits: its own
    /// line says so, with its exit status ([`drivers_signal`]).
    ByDriver,
}

/// How a program started as the jail's command says that its address
/// space refused it memory: something the program's text cannot make it
/// say.
#[derive(Debug, Clone, Copy)]
enum Refusal<'a> {
    /// libiberty's line, which one of these programs (their paths)
    /// begins with its own name ([`out_of_memory_line`]; gcc quotes a
    /// program's text with its control characters escaped, so no line
    /// of a diagnostic begins where the program's words are). Only
    /// `cc1`'s, never `as`'s: `as` prints an `__asm__`'s `.error`
    /// string with its newlines ([`Gcc::run_programs`]).
    OwnLine(&'a [&'a str]),
    /// clang, its compiler in the driver's process: the compiler aborted
    /// (LLVM's end when an allocation fails), which the driver says by its
    /// exit status `128 + SIGABRT` (no diagnostic ends clang so), and
    /// LLVM's own line [`LLVM_OUT_OF_MEMORY`] is in its output. The line
    /// alone says nothing: clang prints a string of the program's
    /// (`__attribute__((unavailable("…")))`) with its newlines as they
    /// are, so the program can begin a line with any words.
    LlvmAbort,
    /// Nothing said (wasm-ld, whose lines can carry any words of the
    /// program's through a symbol's name; a tool of the tests): the
    /// refusal is a failure like another, no limit.
    Unsaid,
}

/// The line LLVM writes itself when an allocation fails, before it aborts.
const LLVM_OUT_OF_MEMORY: &str = "LLVM ERROR: out of memory";

impl Refusal<'_> {
    /// Whether a run that exited with `code` and said `text` was refused
    /// memory by its address space.
    fn said(self, code: i32, text: &str) -> bool {
        match self {
            Refusal::OwnLine(programs) => out_of_memory_line(text, programs),
            Refusal::LlvmAbort => {
                code == 128 + libc::SIGABRT && text.lines().any(|l| l == LLVM_OUT_OF_MEMORY)
            }
            Refusal::Unsaid => false,
        }
    }
}

/// The verdict of a tool that ran out of its address space.
fn address_space(tool: &str, lim: &JailLimits) -> Option<LimitHit> {
    LimitHit::new(
        ToolLimit::Memory,
        format!(
            "{tool} needed more than {} MB of memory and was stopped",
            lim.address_space >> 20
        ),
    )
}

/// Whether one of `programs` (their paths) said it was refused memory,
/// on a line of its own: libiberty's "cc1: out of memory allocating …"
/// (the program's name, or its path, first), or gcc's collector's
/// "virtual memory exhausted: …". A diagnostic of the program's begins
/// with its file's name, and whatever a program's text puts in a tool's
/// line comes after the tool's own first words.
fn out_of_memory_line(text: &str, programs: &[&str]) -> bool {
    text.lines().any(|line| {
        line.starts_with("virtual memory exhausted")
            || programs.iter().any(|path| {
                let name = path.rsplit('/').next().unwrap_or(path);
                [*path, name].iter().any(|p| {
                    line.strip_prefix(p)
                        .is_some_and(|rest| rest.starts_with(": out of memory allocating "))
                })
            })
    })
}

/// Two runs' outputs as one run's: the second's end, both messages (the
/// second's within what the first left of the cap), both CPU counts.
fn joined(first: JailOutput, second: JailOutput) -> JailOutput {
    JailOutput {
        exit: second.exit,
        output: first.output + &second.output,
        output_dropped: first.output_dropped + second.output_dropped,
        // The second's cap is the room the first left: once the first's
        // output was cut, all the second wrote is dropped.
        output_tail: if second.output_dropped > 0 {
            second.output_tail
        } else {
            first.output_tail
        },
        cpu: first.cpu + second.cpu,
        cpu_count: match first.cpu_count {
            CpuCount::Complete => second.cpu_count,
            partial => partial,
        },
        work_full: second.work_full,
        oom_kills: first.oom_kills + second.oom_kills,
        memory_peak: first.memory_peak.max(second.memory_peak),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// F2 (2026-12-05): the builtins gcc does not know are asked on a text
    /// of the server's making, one call a line, its lines read back by
    /// number; a name that is no identifier is never written into it.
    #[test]
    fn the_builtins_probe_calls_each_name_on_its_line() {
        let names = ["__builtin_a", "x; } int y(void) { return 1", "__builtin_b"];
        assert_eq!(
            builtins_probe(&names),
            "void knobeln_probe_0(void) { __builtin_a(); }\n\
             \n\
             void knobeln_probe_2(void) { __builtin_b(); }\n"
        );
        let messages = "builtins-probe.c: In function 'knobeln_probe_0':\n\
            builtins-probe.c:1:29: warning: implicit declaration of function '__builtin_a' [-Wimplicit-function-declaration]\n\
            builtins-probe.c:3:29: error: too few arguments to function '__builtin_b'\n\
            builtins-probe.c:9:29: warning: implicit declaration of function 'other'\n\
            strategy.c:1:1: warning: implicit declaration of function 'x'\n";
        assert_eq!(unknown_in_probe(messages, &names), ["__builtin_a"]);
    }

    #[test]
    fn only_the_drivers_own_last_line_with_its_exit_says_a_limit() {
        let ice = DRIVER_SIGNALLED_EXIT;
        let cpu = "gcc: internal compiler error: CPU time limit exceeded signal terminated \
                   program cc1\nPlease submit a full bug report, with preprocessed source.\n";
        assert_eq!(drivers_signal(ice, cpu), Some("CPU time limit exceeded"));
        let fsz = "gcc: internal compiler error: File size limit exceeded signal terminated \
                   program as\n";
        assert_eq!(drivers_signal(ice, fsz), Some("File size limit exceeded"));
        // The same words where the driver exited 1 (`as` after an `.error`
        // whose string began a line with them), or before the driver's
        // real last line, say nothing.
        assert_eq!(drivers_signal(1, cpu), None);
        let forged_then_crash = format!(
            "strategy.s: Assembler messages:\nstrategy.s:2: Error: x\n{fsz}\
             gcc: internal compiler error: Segmentation fault signal terminated program as\n"
        );
        assert_eq!(drivers_signal(ice, &forged_then_crash), None);
        let oom = "cc1: out of memory allocating 65536 bytes after a total of 1 bytes\n";
        assert!(assembler_silent(oom) && out_of_memory_line(oom, DRIVERS_PROGRAMS));
        let forged_oom = format!("strategy.s: Assembler messages:\nstrategy.s:2: Error: x\n{oom}");
        assert!(!assembler_silent(&forged_oom));
        for program in [
            "strategy.c:2:2: warning: #warning CPU time limit exceeded signal terminated program \
             cc1 [-Wcpp]\n",
            "strategy.c:2:2: error: #error out of memory\n",
            "strategy.c: In function 'main':\nstrategy.c:4:1: error: static assertion failed: \
             \"File size limit exceeded signal terminated program as\"\n",
            // A line of cc1's own with the program's words (`#pragma GCC
            // target`), and one such a pragma cannot make (gcc escapes a
            // newline), each chooses nothing.
            "cc1: error: attribute 'target' argument 'CPU time limit exceeded signal terminated \
             program cc1' is unknown\n",
            "cc1: error: attribute 'target' argument 'x\\x0agcc: fatal error: File size limit \
             exceeded signal terminated program cc1' is unknown\n",
        ] {
            assert_eq!(drivers_signal(ice, program), None, "{program}");
            assert!(!out_of_memory_line(program, DRIVERS_PROGRAMS), "{program}");
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
    fn the_drivers_cc1_and_as_are_read_with_the_temporary_named_after_the_object() {
        let text = "Using built-in specs.\n \
            /usr/lib/gcc/x86_64-linux-gnu/12/cc1 -fpreprocessed strategy.i -quiet \
            \"-fmax-errors=30\" -O2 -o /work/ccFdn2hY.s\nCOLLECT_GCC_OPTIONS='-c'\n \
            as --64 -o strategy.o /work/ccFdn2hY.s\nCOMPILER_PATH=/x\n";
        let driver = [
            GCC,
            "-c",
            "-x",
            "cpp-output",
            "strategy.i",
            "-o",
            "strategy.o",
        ];
        let path = ["/nowhere".to_string(), "/usr/bin".to_string()];
        let p = compile_programs_of(text, &driver, &path).expect("cc1 and as");
        assert_eq!(
            p.cc1,
            [
                "/usr/lib/gcc/x86_64-linux-gnu/12/cc1",
                "-fpreprocessed",
                "strategy.i",
                "-quiet",
                "-fmax-errors=30",
                "-O2",
                "-o",
                "strategy.s"
            ]
        );
        assert_eq!(
            p.assembler,
            ["/usr/bin/as", "--64", "-o", "strategy.o", "strategy.s"]
        );
        assert_eq!(p.asm_file, "strategy.s");
        // Anything else: the driver runs.
        let other = |t: &str| compile_programs_of(t, &driver, &path);
        assert_eq!(other(" /x/cc1 -o /w/a.s\n"), None, "no as");
        assert_eq!(
            other(" /x/cc1 -o /w/a.s\n as -o strategy.o /w/b.s\n"),
            None,
            "as reads another file"
        );
        assert_eq!(
            other(" /x/cc1 -o /w/a.s\n /x/ld -o strategy.o /w/a.s\n"),
            None,
            "not as"
        );
        assert_eq!(
            other(" /x/cc1 -o /w/a.s\n as -o other.o /w/a.s\n"),
            None,
            "another object"
        );
        assert_eq!(
            other(" /x/cc1 -o /w/a.s /w/a.s\n as -o strategy.o /w/a.s\n"),
            None,
            "the temporary read by cc1 too"
        );
        assert_eq!(
            other(" /x/cc1 -o /w/a.s\n nowhere-as -o strategy.o /w/a.s\n"),
            None
        );
        assert!(other(" /x/cc1 -o /w/a.s\n as -o strategy.o /w/a.s\n").is_some());
        // An object outside the work folder: the text still in it.
        let away = [GCC, "-c", "strategy.i", "-o", "/dev/escape.o"];
        let p = compile_programs_of(
            " /x/cc1 -o /w/a.s\n as -o /dev/escape.o /w/a.s\n",
            &away,
            &path,
        )
        .unwrap();
        assert_eq!(p.asm_file, "escape.s");
    }

    #[test]
    fn gccs_own_cc1_and_as_get_the_drivers_flags() {
        let driver = cc_argv(
            &[GCC, "-c"],
            Input::Preprocessed,
            PREPROCESSED_NAME,
            "strategy.o",
        );
        let p = compile_programs(&driver).expect("gcc's driver names cc1 and as");
        assert!(p.cc1[0].ends_with("/cc1"), "{p:?}");
        assert!(p.assembler[0].starts_with('/'), "{p:?}");
        let at = |argv: &[String], a: &str| argv.iter().position(|x| x == a);
        assert!(at(&p.cc1, PREPROCESSED_NAME).is_some());
        assert_eq!(p.cc1[at(&p.cc1, "-o").unwrap() + 1], "strategy.s");
        assert_eq!(p.assembler.last().unwrap(), "strategy.s");
        assert_eq!(
            p.assembler[at(&p.assembler, "-o").unwrap() + 1],
            "strategy.o"
        );
        for flag in CFLAGS
            .iter()
            .filter(|f| !f.starts_with("-fdiagnostics-plain"))
        {
            // -nostdinc and -fno-pie are the driver's own (no include
            // search, no PIE link): every other flag reaches cc1.
            if ["-nostdinc", "-fno-pie"].contains(flag) {
                continue;
            }
            assert!(
                at(&p.cc1, flag).is_some(),
                "{flag} not passed to cc1: {p:?}"
            );
        }
        // Asked once: the same answer.
        assert!(std::sync::Arc::ptr_eq(
            &p,
            &compile_programs(&driver).unwrap()
        ));
    }

    #[test]
    fn the_drivers_words_on_a_signal_are_its_own() {
        let driver = cc_argv(
            &[GCC, "-c"],
            Input::Preprocessed,
            PREPROCESSED_NAME,
            "strategy.o",
        );
        let words = drivers_words(&driver, "cc1", libc::SIGXFSZ).expect("the driver answers");
        assert!(
            words.contains("File size limit exceeded signal terminated program cc1"),
            "{words}"
        );
        let words = drivers_words(&driver, "as", libc::SIGXCPU).expect("the driver answers");
        assert!(
            words.contains("CPU time limit exceeded signal terminated program as"),
            "{words}"
        );
        // Check 5's run writes nothing (no `-o`): its driver is asked too
        // (red team, 2026-12-05: its cc1's end had lost the driver's words).
        let check = check_command(Messages::All);
        let words = drivers_words(&check, "cc1", libc::SIGXCPU).expect("the driver answers");
        assert!(
            words.contains("CPU time limit exceeded signal terminated program cc1"),
            "{words}"
        );
    }

    #[test]
    fn only_a_programs_own_first_words_say_it_was_refused_memory() {
        let cc1 = ["/usr/lib/gcc/x86_64-linux-gnu/12/cc1", "/usr/bin/as"];
        for own in [
            "cc1: out of memory allocating 65536 bytes after a total of 1 bytes\n",
            "/usr/bin/as: out of memory allocating 8 bytes after a total of 1 bytes\n",
            "virtual memory exhausted: Cannot allocate memory\n",
        ] {
            assert!(out_of_memory_line(own, &cc1), "{own}");
        }
        for program in [
            "cc1: error: attribute 'target' argument 'out of memory allocating ' is unknown\n",
            "strategy.c:2:2: error: #error out of memory allocating \n",
            "ld: out of memory allocating 1 bytes\n",
        ] {
            assert!(!out_of_memory_line(program, &cc1), "{program}");
        }
    }

    #[test]
    fn only_llvms_abort_with_its_own_line_says_clang_was_refused_memory() {
        let abort = 128 + libc::SIGABRT;
        let llvm = "LLVM ERROR: out of memory\nAllocation failed\n\
                    zig: error: clang frontend command failed with exit code 134 (use -v to see \
                    invocation)\n";
        assert!(Refusal::LlvmAbort.said(abort, llvm));
        // The line without the abort: a program's string printed as it is.
        let program = "strategy.c:2:22: error: 'g' is unavailable: x\n\
                       LLVM ERROR: out of memory\n1 error generated.\n";
        assert!(!Refusal::LlvmAbort.said(1, program));
        // The abort without LLVM's line: no refusal of memory said.
        assert!(!Refusal::LlvmAbort.said(abort, "strategy.c:1:1: error: out of memory\n"));
        assert!(!Refusal::LlvmAbort.said(abort, "x LLVM ERROR: out of memory\n"));
        // wasm-ld's words, and any run's of the tests, say nothing.
        for code in [1, abort] {
            assert!(!Refusal::Unsaid.said(code, llvm));
            assert!(!Refusal::Unsaid.said(
                code,
                "wasm-ld: error: failed to open strategy.wasm: Out of memory\n"
            ));
        }
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

    #[test]
    fn check_5s_cc1_reads_the_checked_text_and_writes_nothing() {
        for messages in [Messages::All, Messages::ErrorsOnly] {
            let cc1 = cc1_check_argv(&check_command(messages)).expect("gcc's driver names its cc1");
            assert!(cc1[0].ends_with("/cc1"));
            let at = |a: &str| cc1.iter().position(|x| x == a);
            assert!(at("-fsyntax-only").is_some() && at("-fpreprocessed").is_some());
            assert!(at(PREPROCESSED_NAME).is_some());
            assert_eq!(cc1[at("-o").unwrap() + 1], "/dev/null");
            assert_eq!(at("-w").is_some(), messages == Messages::ErrorsOnly);
            for flag in CFLAGS
                .iter()
                .filter(|f| f.starts_with("-W") || f.starts_with("-fmax"))
            {
                assert!(at(flag).is_some(), "{flag} not passed to cc1: {cc1:?}");
            }
        }
        let mut other = check_command(Messages::All);
        other.push("-DX");
        assert_eq!(cc1_check_argv(&other), None);
    }
}
