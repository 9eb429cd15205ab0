//! A real deployment, through the binary: where the config file is found
//! (`--config`, `$KNOBELN_CONFIG`, `./knobeln.toml`,
//! `/etc/knobeln/knobeln.toml`) and that its relative paths are relative to
//! it, run from another folder; read-only commands that refuse to create an
//! empty database; plain-text mail connections refused beyond loopback; the
//! shell completions and manual pages; and every printing command ending
//! quietly when its reader has gone away.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use knobeln::config::SYSTEM_CONFIG;
use knobeln::protocol::{encode, GameProtocol, VERSION};

use crate::mail_spool::Contest;

const BIN: &str = env!("CARGO_BIN_EXE_knobeln");

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Runs the binary in `cwd`, with `$KNOBELN_CONFIG` set to `env_config` or
/// removed.
fn run_in(cwd: &Path, env_config: Option<&Path>, args: &[&str]) -> Output {
    let mut c = Command::new(BIN);
    c.args(args).current_dir(cwd).stdin(Stdio::null());
    match env_config {
        Some(p) => c.env("KNOBELN_CONFIG", p),
        None => c.env_remove("KNOBELN_CONFIG"),
    };
    c.output().expect("run knobeln")
}

/// A config in `dir` for the contest named `name`, with relative paths.
fn write_config(dir: &Path, name: &str, extra: &str) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join("knobeln.toml");
    std::fs::write(
        &path,
        format!(
            "database = \"data/k.db\"\n{extra}\n[contest]\nname = \"{name}\"\n\
             [spool]\ndir = \"sp\"\n"
        ),
    )
    .unwrap();
    path
}

/// The contest name `status` reports first.
fn contest_of(out: &Output) -> String {
    assert!(out.status.success(), "status failed: {}", text(&out.stderr));
    let s = text(&out.stdout);
    s.split(" -- phase:").next().unwrap_or_default().to_string()
}

/// Every file below `dir` (relative paths), sorted.
fn files_below(dir: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                out.push(p.strip_prefix(root).unwrap().display().to_string());
            }
        }
    }
    let mut v = Vec::new();
    walk(dir, dir, &mut v);
    v.sort();
    v
}

#[test]
fn the_config_is_found_at_flag_then_environment_then_cwd_then_etc() {
    assert!(
        !Path::new(SYSTEM_CONFIG).exists(),
        "this test needs a machine without {SYSTEM_CONFIG}"
    );
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("a");
    let b = tmp.path().join("b");
    let elsewhere = tmp.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let cfg_a = write_config(&a, "Contest A", "");
    let cfg_b = write_config(&b, "Contest B", "");
    std::fs::create_dir_all(a.join("data")).unwrap();
    std::fs::create_dir_all(b.join("data")).unwrap();
    // Each contest gets its database where its config says, relative to it.
    for (d, cfg) in [(&a, &cfg_a), (&b, &cfg_b)] {
        let mail = d.join("reg.eml");
        std::fs::write(
            &mail,
            "From: joe@lords.example\r\nTo: knobeln@contest.example\r\n\
             Subject: help\r\nMessage-ID: <h@lords.example>\r\n\r\nhelp\r\n",
        )
        .unwrap();
        let out = run_in(
            &elsewhere,
            None,
            &[
                "ingest",
                "--config",
                cfg.to_str().unwrap(),
                mail.to_str().unwrap(),
            ],
        );
        assert!(out.status.success(), "{}", text(&out.stderr));
    }

    // --config wins over $KNOBELN_CONFIG and ./knobeln.toml.
    let out = run_in(
        &a,
        Some(&cfg_b),
        &["status", "--config", cfg_a.to_str().unwrap()],
    );
    assert_eq!(contest_of(&out), "Contest A");
    // $KNOBELN_CONFIG wins over ./knobeln.toml.
    let out = run_in(&a, Some(&cfg_b), &["status"]);
    assert_eq!(contest_of(&out), "Contest B");
    // An empty $KNOBELN_CONFIG counts as unset: ./knobeln.toml.
    let out = run_in(&a, Some(Path::new("")), &["status"]);
    assert_eq!(contest_of(&out), "Contest A");
    let out = run_in(&b, None, &["status"]);
    assert_eq!(contest_of(&out), "Contest B");
    // A relative --config is relative to the current folder; the paths in
    // it are relative to the file, not to the current folder.
    let out = run_in(
        &elsewhere,
        None,
        &["status", "--config", "../a/knobeln.toml"],
    );
    assert_eq!(contest_of(&out), "Contest A");

    // None anywhere: the error names every place tried.
    let out = run_in(&elsewhere, None, &["status"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    for place in [
        "--config",
        "$KNOBELN_CONFIG",
        "./knobeln.toml",
        SYSTEM_CONFIG,
        "knobeln init",
    ] {
        assert!(err.contains(place), "{place} in {err}");
    }
    // An explicit file that is missing is an error, not a fall-through.
    let out = run_in(&a, Some(&elsewhere.join("gone.toml")), &["status"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("gone.toml"),
        "{}",
        text(&out.stderr)
    );

    // Nothing was written into the folders the commands ran in.
    assert!(
        files_below(&elsewhere).is_empty(),
        "{:?}",
        files_below(&elsewhere)
    );
    for d in [&a, &b] {
        let files = files_below(d);
        assert!(files.contains(&"data/k.db".to_string()), "{files:?}");
        assert!(
            files.iter().any(|f| f.starts_with("sp/outgoing/")),
            "the reply went to the config's spool: {files:?}"
        );
        assert!(!files.contains(&"knobeln.db".to_string()), "{files:?}");
    }
}

#[test]
fn init_creates_the_database_next_to_the_config_wherever_it_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let cwd = tmp.path().join("cwd");
    let site = tmp.path().join("site");
    std::fs::create_dir_all(&cwd).unwrap();
    let out = run_in(&cwd, None, &["init", "../site/knobeln.toml"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        site.join("knobeln.db").is_file(),
        "{:?}",
        files_below(&site)
    );
    assert!(files_below(&cwd).is_empty(), "{:?}", files_below(&cwd));
    let out = run_in(&site, None, &["status"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn read_only_commands_in_the_wrong_folder_create_no_database() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("contest");
    let cfg = write_config(&dir, "Nowhere", "");
    std::fs::create_dir_all(dir.join("data")).unwrap();
    let db = dir.join("data/k.db");
    let c = cfg.to_str().unwrap();
    let site = tmp.path().join("www");
    let site = site.to_str().unwrap();
    let commands: Vec<Vec<&str>> = vec![
        vec!["status", "--config", c],
        vec!["results", "--config", c],
        vec!["rsm", "--round", "1", "--config", c],
        vec!["contest", "start", "--config", c],
        vec!["site", site, "--config", c],
        vec!["admin", "teams", "--config", c],
        vec!["admin", "failed-mail", "--config", c],
        vec!["admin", "set-aside", "--config", c],
        vec!["admin", "log", "--config", c],
        vec!["admin", "withdraw", "joe", "--reason", "r", "--config", c],
    ];
    for args in commands {
        let out = run_in(tmp.path(), None, &args);
        let err = text(&out.stderr);
        assert!(!out.status.success(), "{args:?} succeeded");
        assert!(
            err.contains(&format!("no contest database at {}", db.display()))
                && err.contains("knobeln init")
                && err.contains("--config"),
            "{args:?}: {err}"
        );
        assert!(!db.exists(), "{args:?} created {}", db.display());
    }
    assert!(files_below(tmp.path()) == vec!["contest/knobeln.toml".to_string()]);
}

#[test]
fn plain_text_mail_connections_are_refused_beyond_loopback() {
    let tmp = tempfile::tempdir().unwrap();
    let mail = |host: &str, tls: &str| {
        format!(
            "transport = \"imap\"\n[imap]\nhost = \"{host}\"\nport = 143\ntls = \"{tls}\"\n\
             user = \"knobeln\"\npassword = \"pw\"\n[smtp]\nhost = \"{host}\"\nport = 587\n\
             tls = \"{tls}\"\n"
        )
    };
    let cfg = write_config(tmp.path(), "Plain", &mail("mail.contest.example", "none"));
    let out = run_in(
        tmp.path(),
        None,
        &["serve", "--once", "--config", cfg.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("tls = \"none\"") && err.contains("plain text") && err.contains("starttls"),
        "{err}"
    );
    assert!(!tmp.path().join("data").exists(), "nothing created");
    // On loopback the same config is accepted (status needs a database).
    std::fs::create_dir_all(tmp.path().join("data")).unwrap();
    drop(knobeln::store::Store::open(&tmp.path().join("data/k.db")).unwrap());
    for host in ["127.0.0.1", "::1", "localhost"] {
        write_config(tmp.path(), "Plain", &mail(host, "none"));
        let out = run_in(tmp.path(), None, &["status"]);
        assert!(out.status.success(), "{host}: {}", text(&out.stderr));
    }
}

#[test]
fn completions_and_manual_pages_come_from_the_command_line_definition() {
    for shell in ["bash", "zsh", "fish"] {
        let out = run_in(Path::new("/"), None, &["completions", shell]);
        assert!(out.status.success(), "{shell}: {}", text(&out.stderr));
        let script = text(&out.stdout);
        for sub in ["serve", "status", "results", "init", "admin", "completions"] {
            assert!(script.contains(sub), "{shell} completes {sub}");
        }
        assert!(script.contains("config"), "{shell} completes --config");
    }
    let out = run_in(Path::new("/"), None, &["completions", "tcsh"]);
    assert!(!out.status.success(), "an unknown shell is refused");

    let out = run_in(Path::new("/"), None, &["man"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let page = text(&out.stdout);
    assert!(
        page.starts_with(".ie") || page.contains(".TH knobeln 1"),
        "{page:.200}"
    );
    assert!(page.contains("knobeln\\-serve"), "man page names serve");
    assert!(
        page.contains("KNOBELN_CONFIG"),
        "man page names the config search"
    );

    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("man1");
    let out = run_in(tmp.path(), None, &["man", "--out", dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    for page in ["knobeln.1", "knobeln-serve.1", "knobeln-admin-teams.1"] {
        assert!(dir.join(page).is_file(), "{page}: {:?}", files_below(&dir));
    }
    let serve = std::fs::read_to_string(dir.join("knobeln-serve.1")).unwrap();
    assert!(
        serve.contains("\\-\\-once"),
        "knobeln-serve(1) documents --once"
    );
}

// ------------------------------------------------------- a closed stdout

/// Runs the binary with its standard output a pipe whose reader has
/// already gone (as `knobeln … | head -1` once head has exited): every
/// write fails with EPIPE, deterministically.
fn run_with_closed_stdout(cwd: &Path, args: &[&str], stdin: Option<&Path>) -> Output {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    let mut c = Command::new(BIN);
    c.args(args)
        .current_dir(cwd)
        .env_remove("KNOBELN_CONFIG")
        .stdout(writer)
        .stderr(Stdio::piped());
    match stdin {
        Some(p) => c.stdin(std::fs::File::open(p).unwrap()),
        None => c.stdin(Stdio::null()),
    };
    c.output().expect("run knobeln")
}

/// Ended quietly: exit 0 (or killed by SIGPIPE, as a Unix tool may be),
/// and nothing about the pipe or a panic on stderr.
fn assert_quiet(what: &str, out: &Output) {
    use std::os::unix::process::ExitStatusExt;
    let err = text(&out.stderr);
    assert!(
        out.status.success() || out.status.signal() == Some(libc::SIGPIPE),
        "{what}: {:?}: {err}",
        out.status
    );
    for bad in [
        "panicked",
        "Broken pipe",
        "broken pipe",
        "os error 32",
        "knobeln: error",
    ] {
        assert!(!err.contains(bad), "{what}: {bad:?} in {err}");
    }
}

#[test]
fn every_printing_command_ends_quietly_on_a_closed_pipe() {
    let tmp = tempfile::tempdir().unwrap();
    let contest = Contest::new("");
    let cfg = contest.config();
    let c = cfg.to_str().unwrap();

    // ingest prints after its work and still finishes it (the reply
    // reaches the spool).
    let reg = contest.registration_mail("joe", "Lords");
    let out = run_with_closed_stdout(
        tmp.path(),
        &["ingest", "--config", c, reg.to_str().unwrap()],
        None,
    );
    assert_quiet("ingest", &out);
    assert_eq!(
        contest.replies().len(),
        1,
        "the acknowledgement was written"
    );

    // A finished tournament in the contest's database, for results.
    let strategies = tmp.path().join("s");
    std::fs::create_dir_all(&strategies).unwrap();
    for n in ["low", "high", "middle"] {
        std::fs::copy(
            crate::common::repo_path(&format!("tests/data/tournament/{n}.c")),
            strategies.join(format!("{n}.c")),
        )
        .unwrap();
    }
    let db = contest.dir.path().join("k.db");
    let out = run_with_closed_stdout(
        tmp.path(),
        &[
            "tournament",
            "--throws",
            "20",
            "--seed",
            "1",
            "--strategies",
            strategies.to_str().unwrap(),
            "--db",
            db.to_str().unwrap(),
        ],
        None,
    );
    assert_quiet("tournament", &out);

    let protocol = tmp.path().join("p.txt");
    let p = GameProtocol {
        version: VERSION,
        players: ["lords".into(), "climbers".into()],
        round: 1,
        group: 1,
        slot: 1,
        attempt: 1,
        seed: 7,
        params: knobeln::game::Params::default(),
        points: [0, 0],
        throws: (0..200).map(|i| [1 + i, 12288 - i]).collect(),
        failures: vec![],
    };
    std::fs::write(&protocol, encode(&p)).unwrap();
    let source = crate::common::repo_path("tests/data/sources/valid.c");

    let cases: Vec<(&str, Vec<&str>, Option<&Path>)> = vec![
        ("results", vec!["results", "--config", c], None),
        ("status", vec!["status", "--config", c], None),
        ("admin teams", vec!["admin", "teams", "--config", c], None),
        ("admin log", vec!["admin", "log", "--config", c], None),
        (
            "protocolfmt FILE",
            vec!["protocolfmt", protocol.to_str().unwrap()],
            None,
        ),
        ("protocolfmt <stdin", vec!["protocolfmt"], Some(&protocol)),
        ("lexcount", vec!["lexcount", source.to_str().unwrap()], None),
        ("languages", vec!["languages", "--config", c], None),
        ("completions", vec!["completions", "bash"], None),
        ("man", vec!["man"], None),
        ("--help", vec!["--help"], None),
        // Library code that prints with println! (the benchmarks).
        (
            "bench registrations",
            vec!["bench", "registrations", "--registrations", "3"],
            None,
        ),
    ];
    for (what, args, stdin) in cases {
        let out = run_with_closed_stdout(tmp.path(), &args, stdin);
        assert_quiet(what, &out);
    }

    // The same through a real `| head -1`.
    let line =
        format!("'{BIN}' results --config '{c}' | head -1; echo \"status ${{PIPESTATUS[0]}}\"");
    let out = Command::new("bash").arg("-c").arg(&line).output().unwrap();
    let so = text(&out.stdout);
    assert_eq!(so.lines().count(), 2, "{so}");
    assert!(so.ends_with("status 0\n"), "{so}");
    assert_quiet("results | head -1", &out);
}

/// A write error other than a closed pipe is an error of the command.
#[test]
fn a_full_disk_behind_stdout_is_an_error() {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        panic!("/dev/full is needed for this test");
    };
    let out = Command::new(BIN)
        .args(["completions", "bash"])
        .stdout(full)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("writing to standard output"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

// ------------------------------------------------- backups and the unit

/// The backup of deploy/README.md: `sqlite3 knobeln.db ".backup FILE"`
/// while `serve` runs and writes is a whole, consistent database at the
/// current schema, and restored into another folder it is the contest.
/// Also the stop the unit relies on: SIGTERM ends serve with exit 0.
#[test]
fn a_backup_taken_while_serve_runs_restores_the_contest() {
    use std::time::{Duration, Instant};
    let c = Contest::new("");
    let reg = c.registration_mail("joe", "Lords");
    assert!(c.ingest(&[&reg]).status.success());
    let new = c.spool().join("incoming/new");
    std::fs::create_dir_all(&new).unwrap();
    let n = 20;
    for i in 0..n {
        let m = c.registration_mail(&format!("p{i}"), &format!("Org{i}"));
        std::fs::rename(&m, new.join(format!("{i:03}.eml"))).unwrap();
    }
    let mut serve = Command::new(BIN)
        .args(["serve", "--config"])
        .arg(c.config())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let db = c.dir.path().join("k.db");
    let backups = tempfile::tempdir().unwrap();
    let start = Instant::now();
    let mut taken = Vec::new();
    // Backups while serve takes the mails in and answers them, until all
    // are answered (and one after).
    loop {
        let done = c.replies().len() > n;
        let file = backups.path().join(format!("b{}.db", taken.len()));
        let out = Command::new("sqlite3")
            .arg(&db)
            .arg(format!(".backup '{}'", file.display()))
            .output()
            .expect("sqlite3 is installed (tests/run-all.sh installs it)");
        assert!(out.status.success(), "{}", text(&out.stderr));
        taken.push(file);
        if done {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "serve answered only {} of {}",
            c.replies().len(),
            n + 1
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    Command::new("kill")
        .arg("-TERM")
        .arg(serve.id().to_string())
        .status()
        .unwrap();
    let status = serve.wait().unwrap();
    assert!(
        status.success(),
        "serve stops cleanly on SIGTERM: {status:?}"
    );

    let mut teams_seen = Vec::new();
    for file in &taken {
        let conn = rusqlite::Connection::open(file).unwrap();
        let check: String = conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .unwrap();
        assert_eq!(check, "ok", "{}", file.display());
        let version: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(version, knobeln::store::MIGRATIONS.len() as i64);
        let teams: i64 = conn
            .query_row("SELECT count(*) FROM teams", [], |r| r.get(0))
            .unwrap();
        teams_seen.push(teams);
    }
    assert!(
        teams_seen.windows(2).all(|w| w[0] <= w[1]),
        "later backups hold more: {teams_seen:?}"
    );
    let last = *teams_seen.last().unwrap();
    assert_eq!(last, n as i64 + 1, "the last backup holds every team");

    // Restore the last one into a fresh folder: it is the contest.
    let restored = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(restored.path().join("data")).unwrap();
    std::fs::copy(taken.last().unwrap(), restored.path().join("data/k.db")).unwrap();
    let cfg = write_config(restored.path(), "Restored", "");
    let out = run_in(
        restored.path(),
        None,
        &["admin", "teams", "--config", cfg.to_str().unwrap()],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let listing = text(&out.stdout);
    for i in 0..n {
        assert!(
            listing.contains(&format!("team_p{i}")),
            "team_p{i} in {listing}"
        );
    }
    assert!(listing.contains("team_joe"), "{listing}");
}

/// deploy/knobeln.service and deploy/knobeln-worker.service pass
/// `systemd-analyze verify` (unknown keys, bad values, a missing binary or
/// manual page are errors), in a root of their own where the binary is at
/// /usr/local/bin/knobeln and the manual pages are `knobeln man`'s.
#[test]
fn the_systemd_units_verify() {
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    std::fs::create_dir_all(r.join("usr/local/bin")).unwrap();
    std::fs::create_dir_all(r.join("etc/systemd/system")).unwrap();
    // A copy, not a symlink: systemd resolves links inside the root.
    let installed = r.join("usr/local/bin/knobeln");
    if std::fs::hard_link(BIN, &installed).is_err() {
        std::fs::copy(BIN, &installed).unwrap();
    }
    // systemd's own units (sysinit.target and the rest) from the host.
    std::fs::create_dir_all(r.join("lib/systemd")).unwrap();
    let st = Command::new("cp")
        .args(["-r", "/lib/systemd/system"])
        .arg(r.join("lib/systemd/"))
        .status()
        .unwrap();
    assert!(
        st.success(),
        "copy systemd's units (tests/run-all.sh installs systemd)"
    );
    let man = r.join("man");
    let out = run_in(
        r,
        None,
        &["man", "--out", man.join("man1").to_str().unwrap()],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    for unit in ["knobeln.service", "knobeln-worker.service"] {
        std::fs::copy(
            crate::common::repo_path(&format!("deploy/{unit}")),
            r.join("etc/systemd/system").join(unit),
        )
        .unwrap();
        let out = Command::new("systemd-analyze")
            .arg("verify")
            .arg(format!("--root={}", r.display()))
            .arg(format!("/etc/systemd/system/{unit}"))
            .env("MANPATH", &man)
            .output()
            .expect("systemd-analyze is installed (tests/run-all.sh installs systemd)");
        let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
        assert!(
            out.status.success() && said.trim().is_empty(),
            "{unit}: {said}"
        );
    }
}

/// The commands print through `out!`/`outln!` (src/cmd/stdout.rs), never
/// `print!`/`println!`, which panic on a closed stdout: a command added
/// later keeps ending quietly.
#[test]
fn the_commands_print_only_through_the_quiet_stdout() {
    fn scan(file: &Path, found: &mut Vec<String>) {
        let src = std::fs::read_to_string(file).unwrap();
        for (i, line) in src.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            let hit = ["println!", "print!("].iter().any(|mac| {
                code.match_indices(mac)
                    .any(|(at, _)| !code[..at].ends_with('e'))
            });
            if hit {
                found.push(format!("{}:{}: {}", file.display(), i + 1, line.trim()));
            }
        }
    }
    fn walk(dir: &Path, found: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, found);
            } else if p.extension().is_some_and(|x| x == "rs") {
                scan(&p, found);
            }
        }
    }
    let mut found = Vec::new();
    walk(&crate::common::repo_path("src/cmd"), &mut found);
    scan(&crate::common::repo_path("src/main.rs"), &mut found);
    assert!(found.is_empty(), "use out!/outln!: {found:#?}");
}

/// IMAP and SMTP use one TLS implementation (native-tls: the system's
/// OpenSSL), as deploy/README.md says: in the lock file, `imap` and
/// `lettre` both depend on native-tls and neither on rustls.
#[test]
fn imap_and_smtp_share_one_tls_implementation() {
    let lock: toml::Value =
        toml::from_str(&std::fs::read_to_string(crate::common::repo_path("Cargo.lock")).unwrap())
            .unwrap();
    let packages = lock["package"].as_array().unwrap();
    for name in ["imap", "lettre"] {
        let deps: Vec<&str> = packages
            .iter()
            .filter(|p| p["name"].as_str() == Some(name))
            .flat_map(|p| {
                p.get("dependencies")
                    .and_then(|d| d.as_array())
                    .into_iter()
                    .flatten()
            })
            .filter_map(|d| d.as_str())
            .collect();
        assert!(!deps.is_empty(), "{name} is in Cargo.lock");
        assert!(
            deps.iter().any(|d| d.starts_with("native-tls")),
            "{name} uses native-tls: {deps:?}"
        );
        assert!(
            !deps.iter().any(|d| d.contains("rustls")),
            "{name} does not use rustls: {deps:?}"
        );
    }
}
