//! The participant kit (`knobeln::kit`) and the game protocol
//! (`knobeln::protocol`) as participants use them: every kit file is there;
//! in a temp folder the kit's C tools build with gcc alone and strategies
//! with the documented command; the local referee plays deterministic games
//! exactly like the contest's referee plays the same sources as modules
//! (same throws, points, rule failures and sentences for the same seed),
//! names the throw and the limit of what only a process can do wrong, and
//! its output, fed to `protocolfmt`, gives exactly `protocol::format_full`.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use knobeln::game::knobeln::{replay, Params};
use knobeln::kit::{self, BUILD_COMMAND};
use knobeln::protocol::{
    decode, decode_all, encode, format_all, format_full, GameProtocol, ProtocolFailure,
};
use knobeln::referee::GameRecord;
use knobeln::seed::SplitMix64;

use crate::common::{compile_file, config, hostile_path, play, strategy_path};
use knobeln::referee::{FailureKind, DEFAULT_FUEL};

/// Rising series of eight from a random start.
const CLIMBER: &str = "/* Climber: series of eight rising throws from a random start. */
main() { int t, i; for (;;) { t = next_random(1, 6000);
  for (i = 0; i < 8; i++) { make_throw(t); t += next_random(0, 700); } } }
";

/// Follows the opponent upwards, and starts again lower every eight throws.
const FOLLOWER: &str = "/* Follower: goes up to the opponent's throw; halves every 8 throws. */
main() { int mine = 100, theirs, n = 0;
  for (;;) { theirs = make_throw(mine); n++;
    if (n % 8 == 0) mine = theirs > 1 && theirs <= 12288 ? theirs / 2 + 1 : 1;
    else if (theirs > mine && theirs <= 12288) mine = theirs; } }
";

/// The kit written into a temp folder.
struct Kit {
    dir: tempfile::TempDir,
}

impl Kit {
    fn new() -> Kit {
        let dir = tempfile::Builder::new()
            .prefix("knobeln-kit-")
            .tempdir()
            .expect("temp folder");
        for f in kit::files() {
            fs::write(dir.path().join(f.name), f.bytes).expect("write a kit file");
        }
        Kit { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Runs a shell command line in the kit folder; panics unless it succeeds.
    fn sh(&self, line: &str) -> Output {
        let out = Command::new("sh")
            .arg("-c")
            .arg(line)
            .current_dir(self.dir.path())
            .output()
            .expect("run sh");
        assert!(
            out.status.success(),
            "`{line}` failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    /// Builds the referee and the formatter as the README says.
    fn with_tools(self) -> Kit {
        self.sh("gcc -O2 -o referee referee.c");
        self.sh("gcc -O2 -o protocolfmt protocolfmt.c");
        self
    }

    /// Builds `name.c` (written from `source` unless it is a kit file) into
    /// `name` with the documented command.
    fn strategy(&self, name: &str, source: Option<&str>) -> PathBuf {
        if let Some(src) = source {
            fs::write(self.path(&format!("{name}.c")), src).expect("write a strategy");
        }
        let cmd = BUILD_COMMAND.replace("-o mine mine.c", &format!("-o {name} {name}.c"));
        assert_ne!(cmd, BUILD_COMMAND, "the build command names mine.c");
        self.sh(&cmd);
        self.path(name)
    }

    /// Builds a strategy from a file of the test data.
    fn strategy_file(&self, name: &str, path: &Path) -> PathBuf {
        let src = fs::read_to_string(path).expect("read a test strategy");
        self.strategy(name, Some(&src))
    }

    fn referee(&self, args: &[&str]) -> Output {
        Command::new(self.path("referee"))
            .args(args)
            .current_dir(self.dir.path())
            .output()
            .expect("run the local referee")
    }

    fn protocolfmt(&self, args: &[&str], stdin: &[u8]) -> Output {
        let mut child = Command::new(self.path("protocolfmt"))
            .args(args)
            .current_dir(self.dir.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run protocolfmt");
        let mut input = child.stdin.take().expect("stdin");
        let data = stdin.to_vec();
        let writer = std::thread::spawn(move || {
            let _ = input.write_all(&data);
        });
        let out = child.wait_with_output().expect("protocolfmt ends");
        writer.join().expect("writer thread");
        out
    }
}

fn text(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).expect("UTF-8 output")
}

fn status(out: &Output) -> Option<i32> {
    out.status.code()
}

/// The part of a C file between the shared-part markers.
fn shared_part(src: &str) -> &str {
    let begin = src
        .find("/* ==== shared part: begin")
        .expect("begin marker");
    let end = src
        .find("/* ==== shared part: end ==== */")
        .expect("end marker");
    &src[begin..end]
}

fn kit_text(name: &str) -> String {
    let f = kit::file(name).unwrap_or_else(|| panic!("kit file {name}"));
    String::from_utf8(f.bytes.to_vec()).expect("kit files are text")
}

#[test]
fn every_kit_file_is_present_and_not_empty() {
    let names: Vec<&str> = kit::files().iter().map(|f| f.name).collect();
    for want in [
        "README",
        "RULES-1994.txt",
        "knobellib.h",
        "knobellib.c",
        "example.c",
        "referee.c",
        "protocolfmt.c",
    ] {
        assert!(names.contains(&want), "{want} missing from {names:?}");
    }
    for f in kit::files() {
        assert!(!f.bytes.is_empty(), "{} is empty", f.name);
        assert!(f.content_type.starts_with("text/plain"), "{}", f.name);
    }
    let runtime = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/runtime");
    for name in ["knobellib.h", "knobellib.c", "example.c"] {
        assert_eq!(
            kit::file(name).unwrap().bytes,
            fs::read(runtime.join(name)).unwrap(),
            "{name} is the runtime's"
        );
    }
    // The 1994 announcement, verbatim, for history (RULES.txt is rendered
    // from the contest's configuration: kit::rules_text).
    let rules = kit_text("RULES-1994.txt");
    assert!(rules.starts_with("Subject: Announcement: International KNOBELN contest\n"));
    assert!(rules.contains("a = 1, b = 12288, k = 8, L = 1000"));
    assert!(rules.contains("Subject: SEND knobelnsoftware"));
    assert!(rules.trim_end().ends_with("Lutz"));
    assert!(
        !rules.lines().any(|l| l.starts_with('X')),
        "X prefixes stripped"
    );

    // The README documents the exact build command (lines joined at "\")
    // and the referee's usage.
    let readme = kit_text("README");
    let joined = readme.replace(" \\\n      ", " ");
    assert!(
        joined.contains(BUILD_COMMAND),
        "README lacks {BUILD_COMMAND}"
    );
    assert!(readme.contains("./referee [-s seed] [-L 1000] [-k 8] [-a 1] [-b 12288] [-v]"));
    assert!(readme.contains("gcc -O2 -o referee referee.c"));
    assert!(readme.contains("gcc -O2 -o protocolfmt protocolfmt.c"));
    assert!(
        readme.lines().all(|l| l.len() < 78),
        "README lines fit a mail"
    );
}

#[test]
fn the_c_tools_share_their_protocol_code_byte_for_byte() {
    let r = kit_text("referee.c");
    let f = kit_text("protocolfmt.c");
    assert!(shared_part(&r).len() > 1000);
    assert_eq!(shared_part(&r), shared_part(&f));
}

#[test]
fn the_c_tools_build_with_gcc_alone_and_without_warnings() {
    let kit = Kit::new();
    for f in ["referee.c", "protocolfmt.c"] {
        kit.sh(&format!(
            "gcc -std=c99 -pedantic -Wall -Wextra -Werror -O2 -c -o /dev/null {f}"
        ));
    }
    let kit = kit.with_tools();
    assert!(kit.path("referee").exists() && kit.path("protocolfmt").exists());
    // Usage errors are exit status 2.
    assert_eq!(status(&kit.referee(&[])), Some(2));
    assert_eq!(status(&kit.referee(&["-x", "a", "b"])), Some(2));
}

#[test]
fn local_games_are_deterministic_and_format_like_the_server() {
    let kit = Kit::new().with_tools();
    kit.strategy("example", None);
    kit.strategy("climber", Some(CLIMBER));

    let first = kit.referee(&["-s", "1994", "example", "climber"]);
    assert_eq!(
        status(&first),
        Some(0),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let again = kit.referee(&["-s", "1994", "example", "climber"]);
    let compact = text(&first);
    assert_eq!(compact, text(&again), "the same seed gives the same game");

    let p = decode(&compact).expect("the local referee's protocol decodes");
    assert_eq!(p.players, ["example".to_string(), "climber".to_string()]);
    assert_eq!((p.round, p.group, p.slot, p.attempt), (0, 0, 0, 1));
    assert_eq!(p.seed, 1994);
    assert_eq!(p.params, Params::default());
    assert_eq!(p.throws.len(), 1000);
    assert!(p.failures.is_empty());
    assert_eq!(replay(&p.params, &p.throws), Ok(p.points));
    // The C encoder writes exactly what the server writes.
    assert_eq!(encode(&p), compact);

    // protocolfmt and -v print exactly protocol::format_full.
    let full = format_full(&p);
    let fmt = kit.protocolfmt(&[], compact.as_bytes());
    assert_eq!(status(&fmt), Some(0));
    assert_eq!(text(&fmt), full);
    let verbose = kit.referee(&["-v", "-s", "1994", "example", "climber"]);
    assert_eq!(text(&verbose), full);
    let cut = kit.protocolfmt(&["-c"], compact.as_bytes());
    assert_eq!(text(&cut), compact);

    // Another seed, another game; names and rules from the options.
    let other = kit.referee(&[
        "-s", "7", "-L", "300", "-k", "5", "-a", "1", "-b", "12000", "-p", "alpha", "-q", "beta",
        "climber", "climber",
    ]);
    assert_eq!(status(&other), Some(0));
    let q = decode(&text(&other)).expect("decodes");
    assert_eq!(q.players, ["alpha".to_string(), "beta".to_string()]);
    let params = Params {
        a: 1,
        b: 12000,
        k: 5,
        l: 300,
    };
    assert_eq!(q.params, params);
    assert_eq!(q.throws.len(), 300);
    assert_ne!(q.throws, p.throws[..300].to_vec());
    assert_eq!(replay(&params, &q.throws), Ok(q.points));
    // With k = 9 the climber's series of eight break rule 6 (unless a new
    // series happens to start high enough), always at the first throw of
    // a new series.
    let k9 = kit.referee(&["-s", "7", "-k", "9", "climber", "climber"]);
    assert_eq!(status(&k9), Some(1));
    let r = decode(&text(&k9)).expect("decodes");
    assert!(!r.failures.is_empty());
    for f in &r.failures {
        assert_eq!(f.throw % 8, 1, "{f:?}");
        assert!(f
            .reason
            .ends_with("every series must be at least 9 long (rule 6)"));
    }
}

/// The local referee's game between two strategies built at home with the
/// kit's documented command (`args` are its options; the seed is added).
fn local_game(
    kit: &Kit,
    names: [&str; 2],
    sources: [&Path; 2],
    args: &[&str],
    seed: u64,
) -> GameProtocol {
    let bins = [
        kit.strategy_file(names[0], sources[0]),
        kit.strategy_file(names[1], sources[1]),
    ];
    let seed_arg = seed.to_string();
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["-s", &seed_arg]);
    all.extend([bins[0].to_str().unwrap(), bins[1].to_str().unwrap()]);
    let out = kit.referee(&all);
    let p = decode(&text(&out)).unwrap_or_else(|e| panic!("{e}: {}", text(&out)));
    assert_eq!(
        status(&out),
        Some(if p.failures.is_empty() { 0 } else { 1 }),
        "{names:?}: {}",
        text(&out)
    );
    p
}

/// The local referee's protocol of a game, checked against the contest's
/// referee on the same sources (compiled by the compile service into the
/// modules the contest plays) and seed, with `l` throws: the same throws,
/// points and failures. For games that end by the rules or not at all:
/// what only a process can do wrong (print garbage, block, make a system
/// call) a module cannot do, see
/// `the_local_referee_catches_what_a_process_can_do_wrong`.
fn same_as_contest(
    kit: &Kit,
    names: [&str; 2],
    sources: [&Path; 2],
    l: u32,
    args: &[&str],
    seed: u64,
) -> (GameProtocol, GameRecord) {
    let p = local_game(kit, names, sources, args, seed);
    let modules = [compile_file(sources[0]), compile_file(sources[1])];
    let cfg = config(l, DEFAULT_FUEL, Duration::from_secs(30));
    let rec = play(&cfg, &modules[0], &modules[1], seed);
    let ctx = format!("{names:?}: {p:?}");
    assert_eq!(p.seed, rec.seed, "{ctx}");
    assert_eq!(p.params, cfg.params, "{ctx}");
    assert_eq!(p.throws, rec.throws, "{ctx}");
    assert_eq!(p.points, rec.points, "{ctx}");
    let want: Vec<ProtocolFailure> = rec
        .failures
        .iter()
        .map(|f| ProtocolFailure {
            player: f.player,
            throw: f.throw,
            reason: f.reason.clone(),
        })
        .collect();
    assert_eq!(p.failures, want, "{ctx}");
    assert!(
        rec.failures
            .iter()
            .all(|f| matches!(f.kind, FailureKind::Rule(_))),
        "{ctx}"
    );
    (p, rec)
}

fn source_file(kit: &Kit, name: &str, src: &str) -> PathBuf {
    let path = kit.path(&format!("src_{name}.c"));
    fs::write(&path, src).expect("write a source");
    path
}

#[test]
fn the_local_referee_plays_like_the_contest_referee() {
    let kit = Kit::new().with_tools();
    let example = kit.path("example.c");
    let climber = source_file(&kit, "climber", CLIMBER);
    let follower = source_file(&kit, "follower", FOLLOWER);
    for (names, sources, seed) in [
        (["example", "climber"], [&example, &climber], 1994u64),
        (["follower", "example"], [&follower, &example], 42),
        (["climber", "follower"], [&climber, &follower], 12345),
    ] {
        let sources = [sources[0].as_path(), sources[1].as_path()];
        let (p, rec) = same_as_contest(&kit, names, sources, 1000, &[], seed);
        assert!(p.failures.is_empty(), "{p:?}");
        // A real refereed game round-trips through the protocol, and the C
        // formatter prints what the server prints.
        let server = GameProtocol::from_record(
            rec,
            Params::default(),
            [names[0].to_string(), names[1].to_string()],
            3,
            1,
            17,
            2,
        );
        let mail = encode(&server);
        assert_eq!(decode(&mail).as_ref(), Ok(&server));
        let fmt = kit.protocolfmt(&[], mail.as_bytes());
        assert_eq!(text(&fmt), format_full(&server));
    }
}

/// Faithful where C is well defined: every demo family built at home with
/// gcc and played by the local referee gives the very games the contest
/// plays with the compile service's modules (clang for wasm32): the same
/// throws, points and rule breaks for the same game seeds.
#[test]
fn every_demo_family_plays_at_home_the_games_the_contest_plays() {
    let kit = Kit::new().with_tools();
    let field = knobeln::demo::field(knobeln::demo::FAMILIES.len());
    let paths: Vec<PathBuf> = field
        .iter()
        .map(|team| source_file(&kit, &team.name, &knobeln::demo::strategy_source(team, "x")))
        .collect();
    let n = paths.len();
    for i in 0..n {
        let j = (i + 1) % n;
        same_as_contest(
            &kit,
            [&field[i].name, &field[j].name],
            [&paths[i], &paths[j]],
            1000,
            &[],
            11 + i as u64,
        );
    }
}

#[test]
fn the_local_referee_names_the_throw_of_a_rule_break() {
    let kit = Kit::new().with_tools();
    let args = ["-L", "20", "-t", "1", "-w", "30"];
    let constant = strategy_path("constant");

    let out_of_range = hostile_path("out_of_range");
    let (p, _) = same_as_contest(
        &kit,
        ["out_of_range", "constant"],
        [&out_of_range, &constant],
        20,
        &args,
        5,
    );
    assert_eq!(p.failures.len(), 1);
    assert_eq!((p.failures[0].player, p.failures[0].throw), (0, 10));
    assert_eq!(
        p.failures[0].reason,
        "throw 10: threw 20000, outside the allowed range 1..12288 (rule 1)"
    );
    assert_eq!(p.throws.len(), 9);

    let run_rule = hostile_path("run_rule");
    let (p, _) = same_as_contest(
        &kit,
        ["constant", "run_rule"],
        [&constant, &run_rule],
        20,
        &args,
        6,
    );
    assert_eq!(p.failures.len(), 1);
    assert_eq!((p.failures[0].player, p.failures[0].throw), (1, 4));
    assert!(p.failures[0]
        .reason
        .starts_with("throw 4: threw 50 after 100, but its non-decreasing series"));
    assert_eq!(p.throws, vec![[100, 100]; 3]);
}

/// What only a process can do wrong (and a module cannot: it has no
/// system calls, no output of its own and no clock), the local referee
/// names with the throw and the limit, in the contest's words of the
/// failure kinds.
#[test]
fn the_local_referee_catches_what_a_process_can_do_wrong() {
    let kit = Kit::new().with_tools();
    let constant = strategy_path("constant");
    let args = ["-L", "20", "-t", "1", "-w", "30"];
    for (name, throw, words) in [
        ("crash", 5, "crashed with"),
        (
            "early_exit",
            11,
            "ended (exit status 0) before the game was over",
        ),
        ("garbage", 3, "printed \"hello\" where a throw"),
        (
            "open_asm",
            2,
            "made a system call other than read, write or exit",
        ),
        ("deep_recursion", 3, "crashed with"),
        ("huge_static", 1, "beyond the memory limit of 1024 kB"),
        ("endless_loop", 3, "used more than its 1 s of CPU time"),
    ] {
        let bad = hostile_path(name);
        let p = local_game(&kit, [name, "constant"], [&bad, &constant], &args, 9);
        assert_eq!(p.failures.len(), 1, "{name}: {p:?}");
        let f = &p.failures[0];
        assert_eq!((f.player, f.throw), (0, throw), "{name}");
        assert!(
            f.reason.starts_with(&format!("throw {throw}: ")) && f.reason.contains(words),
            "{name}: {}",
            f.reason
        );
    }
    // Output that is not a throw is quoted, odd bytes and all.
    for (name, what) in [
        (
            "bytes",
            r#""\xff\xe2\x82(\xc3\xa9\t\"'\\\x7f\xf0\x9f\x98\x80\r\n", 19"#,
        ),
        ("longline", r#""123456789012345678901234567890", 30"#),
        ("bigline", r#""1234567890123456789\n", 20"#),
    ] {
        let src = format!(
            "/* Writes odd output at throw 2. */\n\
             static long sys(long n, long a, long b, long c) {{ long r; __asm__ volatile(\"syscall\" \
             : \"=a\"(r) : \"a\"(n), \"D\"(a), \"S\"(b), \"d\"(c) : \"rcx\", \"r11\", \"memory\"); return r; }}\n\
             main() {{ make_throw(100); sys(1, 1, (long){what}); for (;;) make_throw(100); }}\n"
        );
        let path = source_file(&kit, name, &src);
        let p = local_game(&kit, [name, "constant"], [&path, &constant], &args, 9);
        assert_eq!(
            (p.failures[0].player, p.failures[0].throw),
            (0, 2),
            "{name}"
        );
        assert!(p.failures[0].reason.contains("printed \""), "{p:?}");
    }
    let blocking = hostile_path("blocking");
    let p = local_game(
        &kit,
        ["constant", "blocking"],
        [&constant, &blocking],
        &["-L", "20", "-t", "1", "-w", "2"],
        9,
    );
    assert_eq!((p.failures[0].player, p.failures[0].throw), (1, 3));
    assert!(p.failures[0].reason.contains("wall-clock limit of 2 s"));
}

/// A random protocol with odd texts and extreme numbers.
fn random_protocol(g: &mut SplitMix64) -> GameProtocol {
    const WORDS: &[&str] = &[
        "team",
        " ",
        "  ",
        "%",
        "=",
        "\t",
        "\r\n",
        "\u{0}",
        "ü",
        "€",
        "(rule 6)",
        "+",
        ">",
        "KNOBELN-PROTOCOL 1",
        "x_very_long_identifier_without_blanks_x_very_long_identifier",
    ];
    let words = |g: &mut SplitMix64| -> String {
        (0..g.below(30))
            .map(|_| WORDS[g.below(WORDS.len() as u64) as usize])
            .collect()
    };
    let throw = |g: &mut SplitMix64| -> i64 {
        match g.below(8) {
            0 => [i64::MIN, i64::MAX, 0, -1][g.below(4) as usize],
            1 => g.next_u64() as i64,
            _ => 1 + g.below(12288) as i64,
        }
    };
    let n = g.below(400) as usize;
    let mut throws = Vec::new();
    while throws.len() < n {
        let pair = [throw(g), throw(g)];
        for _ in 0..1 + g.below(4) {
            throws.push(pair);
        }
    }
    GameProtocol {
        version: 1,
        players: [words(g), words(g)],
        round: g.next_u64() as u32,
        group: g.below(50) as u32,
        slot: g.below(900) as u32,
        attempt: 1 + g.below(3) as u32,
        seed: g.next_u64(),
        params: Params {
            a: throw(g),
            b: throw(g),
            k: g.next_u64() as u32,
            l: g.below(1_000_001) as u32,
        },
        points: [g.next_u64(), g.below(9999)],
        throws,
        failures: (0..g.below(3))
            .map(|_| ProtocolFailure {
                player: [0, 1, 5][g.below(3) as usize],
                throw: g.next_u64() as u32,
                reason: words(g),
            })
            .collect(),
    }
}

#[test]
fn protocolfmt_agrees_with_the_server_on_random_protocols() {
    let kit = Kit::new().with_tools();
    let mut g = SplitMix64::new(19940514);
    let ps: Vec<GameProtocol> = (0..60).map(|_| random_protocol(&mut g)).collect();
    let compact: String = ps.iter().map(encode).collect();
    assert_eq!(decode_all(&compact).as_ref(), Ok(&ps));
    let fmt = kit.protocolfmt(&[], compact.as_bytes());
    assert_eq!(
        status(&fmt),
        Some(0),
        "{}",
        String::from_utf8_lossy(&fmt.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&fmt.stdout), format_all(&ps));
    let cut = kit.protocolfmt(&["-c"], compact.as_bytes());
    assert_eq!(String::from_utf8_lossy(&cut.stdout), compact);
}

#[test]
fn protocolfmt_reads_a_whole_mail_and_refuses_damage() {
    let kit = Kit::new().with_tools();
    kit.strategy("example", None);
    kit.strategy("climber", Some(CLIMBER));
    let game = text(&kit.referee(&["-s", "3", "-L", "200", "climber", "example"]));
    let mut g = SplitMix64::new(5);
    let odd = encode(&random_protocol(&mut g));
    let quoted: String = odd.lines().map(|l| format!("> {l}\r\n")).collect();
    let mail = format!(
        "From knobeln@ira.uka.de Sat May 14 14:02:11 1994\n\
         Return-Path: <knobeln@ira.uka.de>\n\
         Subject: KNOBELN: your games in round 1, group 3\n\
         Content-Type: text/plain; charset=us-ascii\n\
         Content-Transfer-Encoding: quoted-printable\n\n\
         Dear the_heavy_lords_of_knobeln,\n\nyour first game:\n\n{game}\n\
         and one someone quoted back to you:\n\n{quoted}\n-- \nLutz\n"
    );
    let ps = decode_all(&mail).expect("both protocols decode");
    assert_eq!(ps.len(), 2);
    assert_eq!(ps[0], decode(&game).unwrap());
    let fmt = kit.protocolfmt(&[], mail.as_bytes());
    assert_eq!(
        status(&fmt),
        Some(0),
        "{}",
        String::from_utf8_lossy(&fmt.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&fmt.stdout), format_all(&ps));
    let path = kit.path("mail.txt");
    fs::write(&path, &mail).unwrap();
    let from_file = kit.protocolfmt(&[path.to_str().unwrap()], b"");
    assert_eq!(from_file.stdout, fmt.stdout);

    // Truncated: the mail breaks off in the throws, or lost lines there.
    let cut_at = mail.find("KNOBELN-END").unwrap() - 10;
    let lost = mail[..cut_at].rfind('\n').unwrap();
    for truncated in [
        mail[..cut_at].to_string(),
        format!("{}\n-- \nLutz\n", &mail[..lost]),
    ] {
        assert!(decode_all(&truncated).is_err());
        let out = kit.protocolfmt(&[], truncated.as_bytes());
        assert_eq!(status(&out), Some(1));
        assert!(out.stdout.is_empty());
    }
    let out = kit.protocolfmt(&[], &mail.as_bytes()[..cut_at]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("truncated"));

    // Damaged: one throw changed on the way.
    let first_throws = mail.find("\nthrows ").unwrap() + 1;
    let line_end = first_throws + mail[first_throws..].find('\n').unwrap() + 1;
    let mut damaged = mail.clone().into_bytes();
    let pos = line_end + 1;
    damaged[pos] = if damaged[pos] == b'3' { b'4' } else { b'3' };
    let damaged = String::from_utf8(damaged).unwrap();
    assert!(decode_all(&damaged).is_err());
    let out = kit.protocolfmt(&[], damaged.as_bytes());
    assert_eq!(status(&out), Some(1));
    assert!(out.stdout.is_empty());

    // Nothing there.
    let out = kit.protocolfmt(&[], b"Subject: hello\n\nno protocol\n");
    assert_eq!(status(&out), Some(1));
}

/// Hand-made variations of a protocol: `protocolfmt` accepts exactly what
/// `protocol::decode_all` accepts, and then prints the same.
#[test]
fn protocolfmt_and_the_server_accept_and_refuse_the_same_texts() {
    let kit = Kit::new().with_tools();
    let p = GameProtocol {
        version: 1,
        players: ["alpha".into(), "beta gamma".into()],
        round: 2,
        group: 1,
        slot: 4,
        attempt: 1,
        seed: 99,
        params: Params::default(),
        points: [12, 0],
        throws: vec![[100, 12288], [100, 100], [100, 100], [101, 100]],
        failures: vec![ProtocolFailure {
            player: 1,
            throw: 5,
            reason: "throw 5: crashed".into(),
        }],
    };
    let good = encode(&p);
    // Builds a variant with a fixed checksum (so that only the change counts).
    let fixed = |body: &str| -> String {
        let end = body.find("KNOBELN-END").expect("end line");
        let n = body[end..].split_whitespace().nth(1).unwrap().to_string();
        let crc = knobeln::protocol::crc32(&body.as_bytes()[..end]);
        format!("{}KNOBELN-END {n} {crc:08x}\n", &body[..end])
    };
    let sub = |from: &str, to: &str| -> String {
        assert!(good.contains(from), "{from:?} not in\n{good}");
        fixed(&good.replacen(from, to, 1))
    };
    let variants: Vec<(&str, String)> = vec![
        ("as is", good.clone()),
        ("no final newline", good.trim_end().to_string()),
        (
            "lower-case hex",
            sub("team Q beta gamma", "team Q beta%20gamma%3d"),
        ),
        ("tabs between words", sub("seed 99", "seed\t99")),
        (
            "blanks between words",
            sub("points P 12 Q 0", "points  P 12  Q 0"),
        ),
        ("leading zeros", sub("seed 99", "seed 0099")),
        ("repeat once", sub("2s*2", "2s*1 2s")),
        (
            "one pair per line",
            sub("2s,9hc 2s*2 2t,2s", "2s,9hc\n2s*2\n2t,2s"),
        ),
        ("repeat zero", sub("2s*2", "2s*0 2s 2s")),
        ("upper-case throw", sub("2s,9hc", "2S,9hc")),
        ("three numbers", sub("2s,9hc", "2s,9hc,1")),
        ("too many throws", sub("2s*2", "2s*3")),
        ("too few throws", sub("2s*2", "2s")),
        ("empty line in throws", sub("2s*2 2t,2s", "2s*2\n\n2t,2s")),
        ("throw beyond 64 bits", sub("2s,9hc", "2s,1y2p0ij32e8e8")),
        ("lowest 64-bit throw", sub("2s,9hc", "2s,-1y2p0ij32e8e8")),
        ("plus sign", sub("seed 99", "seed +99")),
        (
            "seed beyond 64 bits",
            sub("seed 99", "seed 18446744073709551616"),
        ),
        ("round beyond 32 bits", sub("round 2", "round 4294967296")),
        ("missing label", sub("round 2 group 1", "round 2 1")),
        ("negative a", sub("a 1 b", "a -5 b")),
        ("broken escape", sub("team Q beta gamma", "team Q beta%2")),
        ("not UTF-8", sub("team Q beta gamma", "team Q beta%FF")),
        ("encoded UTF-8", sub("team Q beta gamma", "team Q %C3%BC")),
        ("surrogate", sub("team Q beta gamma", "team Q %ED%A0%80")),
        ("player by number", sub("fail Q 5", "fail 7 5")),
        ("player 0 by number", sub("fail Q 5", "fail 0 5")),
        ("no reason", sub("fail Q 5 throw 5: crashed", "fail Q 5")),
        ("bare fail", sub("fail Q 5 throw 5: crashed", "fail")),
        ("continued name", sub("team P alpha", "team P al\n+pha\n+")),
        ("empty name", sub("team P alpha", "team P")),
        ("version 2", sub("KNOBELN-PROTOCOL 1", "KNOBELN-PROTOCOL 2")),
        (
            "wrong count at the end",
            good.replacen("KNOBELN-END 4", "KNOBELN-END 5", 1),
        ),
        (
            "short checksum",
            good.replacen("KNOBELN-END 4 ", "KNOBELN-END 4 0", 1),
        ),
        (
            "missing end",
            good[..good.find("KNOBELN-END").unwrap()].to_string(),
        ),
        (
            "lines swapped",
            sub("seed 99\n", "").replacen("points", "seed 99\npoints", 1),
        ),
    ];
    for (what, variant) in &variants {
        let server = decode_all(variant);
        let out = kit.protocolfmt(&[], variant.as_bytes());
        match &server {
            Ok(ps) => {
                assert_eq!(
                    status(&out),
                    Some(0),
                    "{what}: the server accepts, protocolfmt says {}\n{variant}",
                    String::from_utf8_lossy(&out.stderr)
                );
                assert_eq!(
                    String::from_utf8_lossy(&out.stdout),
                    format_all(ps),
                    "{what}"
                );
            }
            Err(e) => assert_eq!(
                status(&out),
                Some(1),
                "{what}: the server refuses ({e}), protocolfmt prints {}",
                text(&out)
            ),
        }
    }
    let accepted: Vec<&str> = variants
        .iter()
        .filter(|(_, v)| decode_all(v).is_ok())
        .map(|(w, _)| *w)
        .collect();
    assert_eq!(
        accepted,
        [
            "as is",
            "no final newline",
            "lower-case hex",
            "tabs between words",
            "blanks between words",
            "leading zeros",
            "repeat once",
            "one pair per line",
            "lowest 64-bit throw",
            "negative a",
            "encoded UTF-8",
            "player by number",
            "no reason",
            "continued name",
            "empty name",
        ]
    );
}

/// Issue 23: the kit's README builds, with the compile service's tools,
/// the very module the contest plays: the commands it documents produce a
/// module of the contest's shape that plays the same game as the compile
/// service's module of the same source.
#[test]
fn the_kits_wasm_commands_build_the_module_the_contest_plays() {
    use knobeln::kit::WASM_BUILD_COMMANDS;
    let readme = String::from_utf8(
        kit::files()
            .iter()
            .find(|f| f.name == "README")
            .unwrap()
            .bytes
            .to_vec(),
    )
    .unwrap();
    let joined = readme.replace(" \\\n      ", " ");
    for cmd in WASM_BUILD_COMMANDS {
        assert!(joined.contains(cmd), "README lacks {cmd}");
    }
    let dir = tempfile::tempdir().unwrap();
    let example = kit::files()
        .into_iter()
        .find(|f| f.name == "example.c")
        .unwrap();
    std::fs::write(dir.path().join("mine.c"), example.bytes).unwrap();
    let runtime = kit::files()
        .into_iter()
        .find(|f| f.name == "knobellib.c")
        .unwrap();
    std::fs::write(dir.path().join("knobellib.c"), runtime.bytes).unwrap();
    for cmd in WASM_BUILD_COMMANDS {
        let out = std::process::Command::new("/bin/sh")
            .args(["-c", cmd])
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{cmd}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let module = std::fs::read(dir.path().join("mine.wasm")).unwrap();
    assert!(knobeln::toolchain::wasm::check_module(&module, 1 << 20).is_ok());
    let home = crate::common::install(&module);
    let contest = compile_file(&crate::common::example_path());
    let cfg = config(1000, DEFAULT_FUEL, Duration::from_secs(10));
    assert_eq!(
        play(&cfg, &home, &contest, 9),
        play(&cfg, &contest, &contest, 9)
    );
}
