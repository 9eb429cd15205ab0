//! Secrets at rest: after registration, compiles, status and preference
//! mails, a reset string and a whole contest, no authentification string
//! is left in the server's state (the database with its write-ahead log,
//! the spool but for `outgoing/`, which stands for the participants'
//! mailboxes); the database, spool and config are private to the server's
//! user; a mail keeps its string until its result is committed.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use knobeln::config::Config;
use knobeln::mail::secrets::BODY_DROPPED;
use knobeln::server::Server;
use knobeln::store::Store;

use super::mail_spool::{auth_of, registration, submission, Contest};

const BIN: &str = env!("CARGO_BIN_EXE_knobeln");

fn knobeln(c: &Contest, args: &[&str]) -> Output {
    let out = Command::new(BIN)
        .args(args)
        .arg("--config")
        .arg(c.config())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn address(team: &str) -> String {
    format!("{team}@participants.example")
}

/// The server in this process, on the contest's config (its database stays
/// open, so its write-ahead log is there to be read).
fn server(c: &Contest) -> Server {
    let config = Config::load(Some(&c.config())).unwrap();
    let store = Store::open(&config.database).unwrap();
    let mut server = Server::new(config, store);
    server.take_in().unwrap(); // opens (creates) the spool
    server
}

/// Drops the mail files into the spool and runs one pass: take in,
/// process, send.
fn pass(c: &Contest, server: &mut Server, mails: &[PathBuf]) {
    for m in mails {
        let name = m.file_name().unwrap();
        std::fs::copy(m, c.spool().join("incoming/new").join(name)).unwrap();
    }
    server.take_in().unwrap();
    let summary = server.process().unwrap();
    assert_eq!(summary.failed, 0, "{summary:?}");
    server.flush().unwrap();
}

/// A `please compile` mail whose source is a base64-encoded `.c`
/// attachment (the secret is not in the raw bytes as such).
fn attached_compile(c: &Contest, team: &str, auth: &str, n: u32) -> PathBuf {
    let source = submission(team, auth);
    let b64 = base64(source.as_bytes());
    let text = format!(
        "From: {from}\r\nTo: knobeln@contest.example\r\nSubject: please compile\r\n\
         Message-ID: <attached{n}.{pid}@participants.example>\r\nMIME-Version: 1.0\r\n\
         Content-Type: multipart/mixed; boundary=\"b\"\r\n\r\n--b\r\n\
         Content-Type: text/plain\r\n\r\nMy strategy is attached.\r\n--b\r\n\
         Content-Type: text/x-csrc; name=\"s.c\"\r\nContent-Disposition: attachment; \
         filename=\"s.c\"\r\nContent-Transfer-Encoding: base64\r\n\r\n{b64}\r\n--b--\r\n",
        from = address(team),
        pid = std::process::id(),
    );
    let path = c.dir.path().join(format!("attached{n}.eml"));
    std::fs::write(&path, text).unwrap();
    path
}

fn base64(data: &[u8]) -> String {
    crate::common::base64_lines(data, "\r\n")
}

/// Every file under `dir`, recursively.
fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            files_under(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// The server's state: the database with its `-wal`/`-shm`, the config,
/// and every file of the spool but `outgoing/` (delivered mail). Not the
/// test's own mail files (the participants' copies).
fn state_files(c: &Contest) -> Vec<PathBuf> {
    let mut all = Vec::new();
    files_under(c.dir.path(), &mut all);
    let outgoing = c.spool().join("outgoing");
    all.into_iter()
        .filter(|p| !p.starts_with(&outgoing))
        .filter(|p| p.parent() != Some(c.dir.path()) || p.extension().is_none_or(|e| e != "eml"))
        .collect()
}

/// Where (file and offset) any of `secrets`, in any letter case, is.
fn find_secrets(files: &[PathBuf], secrets: &[String]) -> Vec<String> {
    let mut found = Vec::new();
    for f in files {
        let bytes = std::fs::read(f).unwrap().to_ascii_lowercase();
        for s in secrets {
            let s = s.to_ascii_lowercase();
            if let Some(at) = bytes.windows(s.len()).position(|w| w == s.as_bytes()) {
                found.push(format!("{s} in {} at byte {at}", f.display()));
            }
        }
    }
    found
}

#[test]
fn no_authentification_string_stays_in_the_servers_state() {
    let c = Contest::new("[rules]\nthrows = 60\n");
    // The results site is regenerated as the contest goes: state too.
    let site = c.dir.path().join("site");
    let mut toml = std::fs::read_to_string(c.config()).unwrap();
    toml.push_str(&format!("[site]\ndir = \"{}\"\n", site.display()));
    std::fs::write(c.config(), toml).unwrap();
    let teams = ["team_plain", "team_attached", "team_reset"];
    let mut server = server(&c);

    // Registration: the acknowledgements carry the strings.
    let regs: Vec<PathBuf> = teams
        .iter()
        .map(|t| {
            c.mail(
                &address(t),
                "registration for KNOBELN",
                &registration(&address(t), t, &format!("Uni {t}, City, Land")),
                "",
            )
        })
        .collect();
    pass(&c, &mut server, &regs);
    let replies = c.replies();
    let auth: Vec<String> = teams
        .iter()
        .map(|t| auth_of(replies.iter().find(|r| r.to == [address(t)]).unwrap()))
        .collect();
    let mut secrets = auth.clone();

    // A compile in the body, a status that quotes the acknowledgement with
    // the string in capitals, a mail-preference; a compile as a base64
    // attachment; a near miss (all but the last letter), refused.
    let near_miss = format!(
        "{}{}",
        &auth[1][..25],
        if auth[1].ends_with('x') { 'y' } else { 'x' }
    );
    secrets.push(near_miss.clone());
    // The first team's description (shown on the site) names its string too.
    let plain_source = submission(teams[0], &auth[0]).replace(
        "Description line 1:",
        &format!("Description line 1, by {}:", auth[0]),
    );
    let mails = vec![
        c.mail(&address(teams[0]), "please compile", &plain_source, ""),
        c.mail(
            &address(teams[0]),
            "status",
            &format!(
                "<<FROM>> {} {}\n\n> your\n> authentification string is {}\n",
                teams[0],
                auth[0],
                auth[0].to_ascii_uppercase()
            ),
            "",
        ),
        c.mail(
            &address(teams[0]),
            "mail-preference",
            &format!(
                "<<FROM>> {} {}\nmail-preference: LAP,GRR\n",
                teams[0], auth[0]
            ),
            "",
        ),
        attached_compile(&c, teams[1], &auth[1], 1),
        c.mail(
            &address(teams[1]),
            "status",
            &format!("<<FROM>> {} {near_miss}\n", teams[1]),
            "",
        ),
        // Not a command: passed on to the organizer, who never sees a string
        // (here also the sender's name).
        c.mail(
            &format!("{} <{}>", auth[0], address(teams[0])),
            "my string does not work",
            &format!("Hello, is <<FROM>> {} {} right?\n", teams[0], auth[0]),
            "",
        ),
    ];
    pass(&c, &mut server, &mails);
    let replies = c.replies();
    assert_eq!(
        replies
            .iter()
            .filter(|r| r.subject.contains("compilation report: accepted"))
            .count(),
        2,
        "{:?}",
        replies.iter().map(|r| &r.subject).collect::<Vec<_>>()
    );

    let forward = replies
        .iter()
        .find(|r| r.subject.starts_with("KNOBELN forward"))
        .expect("forwarded to the organizer");
    assert!(
        forward
            .body
            .contains(&format!("<<FROM>> {} {}", teams[0], "*".repeat(26))),
        "{}",
        forward.body
    );
    assert!(
        !forward.body.contains(&auth[0]) && !forward.subject.contains(&auth[0]),
        "{}",
        forward.body
    );

    // While the server runs, its database and write-ahead log hold none of it.
    let db = c.dir.path().join("k.db");
    let wal = c.dir.path().join("k.db-wal");
    assert!(wal.exists(), "the database is open in WAL mode");
    let found = find_secrets(&state_files(&c), &secrets);
    assert!(found.is_empty(), "{found:?}");
    drop(server);

    // The organizer resets the third team's string; the team compiles with it.
    knobeln(&c, &["admin", "reset-auth", teams[2]]);
    let fresh = knobeln::demo::auth_in(&c.replies().last().unwrap().body).unwrap();
    secrets.push(fresh.clone());
    let compile = c.mail(
        &address(teams[2]),
        "please compile",
        &submission(teams[2], &fresh),
        "",
    );
    knobeln(&c, &["ingest", compile.to_str().unwrap()]);
    assert!(c
        .replies()
        .last()
        .unwrap()
        .subject
        .contains("compilation report: accepted"));

    // The whole contest.
    crate::common::contest_start(&c.config(), 3);

    let files = state_files(&c);
    assert!(files.contains(&db), "{files:?}");
    assert!(files.contains(&site.join("index.html")), "{files:?}");
    let mut pages = Vec::new();
    files_under(&site, &mut pages);
    assert!(
        pages
            .iter()
            .any(|p| String::from_utf8_lossy(&std::fs::read(p).unwrap())
                .contains(&format!("Description line 1, by {}:", "*".repeat(26)))),
        "the site shows the description, masked"
    );
    let found = find_secrets(&files, &secrets);
    assert!(found.is_empty(), "{found:?}");
    // The scan can find them: the delivered acknowledgements have them.
    let mut delivered = Vec::new();
    files_under(&c.spool().join("outgoing"), &mut delivered);
    for s in &auth[..2] {
        assert_eq!(
            find_secrets(&delivered, std::slice::from_ref(s)).len(),
            1,
            "{s}"
        );
    }

    // What is kept keeps its shape: the stored sources have the header,
    // the string masked; the attached source's mail keeps its headers.
    let conn = rusqlite::Connection::open(&db).unwrap();
    let stars = "*".repeat(26);
    for team in &teams {
        let source: Vec<u8> = conn
            .query_row(
                "SELECT v.source FROM strategy_versions v JOIN teams t ON t.id = v.team_id
                 WHERE t.name = ?1",
                [team],
                |r| r.get(0),
            )
            .unwrap();
        let source = String::from_utf8(source).unwrap();
        assert!(
            source.starts_with(&format!("/*\n <<FROM>> {team} {stars}\n*/\n")),
            "{source}"
        );
    }
    let attached: Vec<u8> = conn
        .query_row(
            "SELECT raw FROM inbox WHERE message_id LIKE 'attached1.%'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let attached = String::from_utf8(attached).unwrap();
    assert!(
        attached.contains("Subject: please compile\r\n") && attached.contains(BODY_DROPPED),
        "{attached}"
    );
    let (inbox, sealed): (i64, i64) = conn
        .query_row(
            "SELECT COUNT(*), SUM(instr(CAST(raw AS TEXT), ?1) > 0) FROM inbox",
            [&stars],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(inbox, 10, "every mail is kept");
    assert_eq!(sealed, 6, "the six mails with a readable string are masked");
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p)
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        .permissions()
        .mode()
        & 0o777
}

#[test]
fn the_database_spool_and_config_are_private() {
    // `knobeln init` writes the config 0600, and narrows one it overwrites.
    let tmp = tempfile::tempdir().unwrap();
    let toml = tmp.path().join("knobeln.toml");
    let out = Command::new(BIN).arg("init").arg(&toml).output().unwrap();
    assert!(out.status.success());
    assert_eq!(mode(&toml), 0o600);
    std::fs::set_permissions(&toml, std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = Command::new(BIN)
        .arg("init")
        .arg(&toml)
        .arg("--force")
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(mode(&toml), 0o600);

    // The database (and its log), the spool's folders and files.
    let c = Contest::new("");
    let reg = c.registration_mail("ann", "Uni");
    knobeln(&c, &["ingest", reg.to_str().unwrap()]);
    let db = c.dir.path().join("k.db");
    assert_eq!(mode(&db), 0o600);
    for dir in ["", "incoming", "incoming/new", "incoming/tmp", "outgoing"] {
        assert_eq!(mode(&c.spool().join(dir)), 0o700, "spool/{dir}");
    }
    let mut delivered = Vec::new();
    files_under(&c.spool().join("outgoing"), &mut delivered);
    assert_eq!(delivered.len(), 1);
    assert_eq!(mode(&delivered[0]), 0o600);
    {
        let store = Store::open(&db).unwrap();
        store
            .conn()
            .execute_batch("CREATE TABLE t (x); DROP TABLE t;")
            .unwrap();
        assert_eq!(mode(&c.dir.path().join("k.db-wal")), 0o600);
        assert_eq!(mode(&c.dir.path().join("k.db-shm")), 0o600);
    }

    // A database left readable by an older version is narrowed at open.
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o644)).unwrap();
    knobeln(&c, &["status"]);
    assert_eq!(mode(&db), 0o600);
}

#[test]
fn a_mail_keeps_its_string_until_its_result_is_committed() {
    let c = Contest::new("");
    let reg = c.registration_mail("ann", "Uni");
    knobeln(&c, &["ingest", reg.to_str().unwrap()]);
    let auth = auth_of(c.replies().last().unwrap());
    let mut server = server(&c);
    let status = c.mail(
        &address("ann"),
        "status",
        &format!("<<FROM>> team_ann {auth}\n"),
        "",
    );
    std::fs::copy(&status, c.spool().join("incoming/new/status.eml")).unwrap();
    server.take_in().unwrap();
    let raw = |server: &Server| -> (String, String) {
        server
            .store
            .conn()
            .query_row(
                "SELECT CAST(raw AS TEXT), state FROM inbox ORDER BY id DESC LIMIT 1",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap()
    };
    // Stored before processing, whole.
    assert!(raw(&server).0.contains(&auth));

    // The server stops in the middle: the reply cannot be queued, nothing
    // of the attempt is committed, the mail stays whole for the next one.
    server
        .store
        .conn()
        .execute_batch(
            "CREATE TEMP TRIGGER stop BEFORE INSERT ON main.outbox
             BEGIN SELECT RAISE(ABORT, 'the server stops here'); END;",
        )
        .unwrap();
    let summary = server.process().unwrap();
    assert_eq!(summary.retried, 1, "{summary:?}");
    let (text, state) = raw(&server);
    assert_eq!(state, "new");
    assert!(
        text.contains(&format!("<<FROM>> team_ann {auth}")),
        "{text}"
    );

    // The next attempt commits the reply and the sealed mail together.
    server
        .store
        .conn()
        .execute_batch("DROP TRIGGER stop;")
        .unwrap();
    let before = c.replies().len();
    let summary = server.process().unwrap();
    assert_eq!(summary.processed, 1, "{summary:?}");
    server.flush().unwrap();
    let (text, state) = raw(&server);
    assert_eq!(state, "done");
    assert!(!text.contains(&auth), "{text}");
    assert!(
        text.contains(&format!("<<FROM>> team_ann {}", "*".repeat(26))),
        "{text}"
    );
    let replies = c.replies();
    assert_eq!(replies.len(), before + 1);
    assert!(
        replies.last().unwrap().subject.contains("status"),
        "{:?}",
        replies.last()
    );
}

#[test]
fn a_database_and_spool_of_an_older_version_are_sealed_at_the_first_pass() {
    let c = Contest::new("");
    let reg = c.registration_mail("ann", "Uni");
    knobeln(&c, &["ingest", reg.to_str().unwrap()]);
    let ack_file = {
        let mut f = Vec::new();
        files_under(&c.spool().join("outgoing"), &mut f);
        f.pop().unwrap()
    };
    let auth = auth_of(c.replies().last().unwrap());
    let source = submission("team_ann", &auth);
    let compile = c.mail(&address("ann"), "please compile", &source, "");
    knobeln(&c, &["ingest", compile.to_str().unwrap()]);

    // What an older version left: the mails and the source whole, the
    // string in free pages too, and the task of migration 0008 to do.
    let db = c.dir.path().join("k.db");
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch("PRAGMA secure_delete = OFF;").unwrap();
        conn.execute(
            "UPDATE inbox SET raw = ?1 WHERE id = (SELECT MAX(id) FROM inbox)",
            [std::fs::read(&compile).unwrap()],
        )
        .unwrap();
        conn.execute(
            "UPDATE outbox SET raw = ?1 WHERE kind = 'registration_accepted'",
            [std::fs::read(&ack_file).unwrap()],
        )
        .unwrap();
        // Stored whole, as before schema 0022 (no body kept apart).
        conn.execute_batch(
            "DELETE FROM outbox_parts
                 WHERE outbox_id IN (SELECT id FROM outbox WHERE kind = 'registration_accepted');
             DELETE FROM outbox_bodies WHERE id NOT IN (SELECT body_id FROM outbox_parts);",
        )
        .unwrap();
        conn.execute(
            "UPDATE strategy_versions SET source = ?1",
            [source.as_bytes()],
        )
        .unwrap();
        conn.execute_batch("CREATE TABLE old_junk (x BLOB);")
            .unwrap();
        conn.execute(
            "INSERT INTO old_junk VALUES (?1)",
            [format!("{auth} ").repeat(400)],
        )
        .unwrap();
        conn.execute_batch(
            "DROP TABLE old_junk;
             INSERT INTO maintenance_tasks (name) VALUES ('seal_backlog');
             PRAGMA wal_checkpoint(TRUNCATE);",
        )
        .unwrap();
    }
    assert!(
        !find_secrets(std::slice::from_ref(&db), std::slice::from_ref(&auth)).is_empty(),
        "the old database holds the string"
    );
    // An older version moved every taken mail to incoming/cur/.
    let cur = c.spool().join("incoming/cur");
    std::fs::create_dir_all(&cur).unwrap();
    std::fs::copy(&compile, cur.join("old.eml")).unwrap();

    // The first pass of the new version seals it all and rebuilds the file.
    knobeln(&c, &["serve", "--once"]);
    let found = find_secrets(&state_files(&c), std::slice::from_ref(&auth));
    assert!(found.is_empty(), "{found:?}");
    assert!(!cur.exists());
    let conn = rusqlite::Connection::open(&db).unwrap();
    let (stored, tasks): (Vec<u8>, i64) = conn
        .query_row(
            "SELECT (SELECT source FROM strategy_versions),
                    (SELECT COUNT(*) FROM maintenance_tasks)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert!(String::from_utf8(stored)
        .unwrap()
        .starts_with(&format!("/*\n <<FROM>> team_ann {}\n*/\n", "*".repeat(26))));
    assert_eq!(tasks, 0, "done once");
}

#[test]
fn a_bots_source_and_program_keep_no_authentification_string() {
    use knobeln::demo::bots::demo_bots;
    use knobeln::discipline::Discipline;
    // An interpreted bot's program is its source: whatever of it is kept
    // (the stored source, the built program that bot contests hand to
    // workers on other machines) must not carry the team's string.
    let c = Contest::new("[contest]\ndiscipline = \"footsteps\"\n");
    let auth = c.register_joe();
    let bot = demo_bots(Discipline::FOOTSTEPS)
        .iter()
        .find(|b| b.file == "counter.py")
        .unwrap()
        .source;
    let body = format!(
        "language: python\n# <<FROM>> the_heavy_lords_of_knobeln {auth}\n\
         # our string, should we forget it: {}\n{bot}",
        auth.to_ascii_uppercase()
    );
    let m = c.mail("joe@lords.example", "please compile", &body, "");
    assert!(c.ingest(&[&m]).status.success());
    let reply = c.replies().last().unwrap().clone();
    assert!(reply.subject.contains("accepted"), "{}", reply.body);
    assert_eq!(
        find_secrets(&state_files(&c), std::slice::from_ref(&auth)),
        Vec::<String>::new()
    );
    // The program is JSON with its files' bytes as numbers: read it whole.
    let db = c.dir.path().join("k.db");
    assert!(
        !programs_hold(&db, &auth),
        "the built program keeps the string"
    );

    // What a version before schema 0012 left: the program built from the
    // source with its string whole. The next pass seals it, and the bot
    // still runs (its program is still a program).
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        let (id, binary): (i64, Vec<u8>) = conn
            .query_row(
                "SELECT v.id, v.binary FROM strategy_versions v \
                 JOIN bot_programs b ON b.version_id = v.id",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        let mut program = knobeln::lang::build::BotProgram::decode(&binary).unwrap();
        let file = &mut program.files[0];
        let text = String::from_utf8(file.bytes().to_vec()).unwrap();
        assert!(text.contains(&"*".repeat(26)), "{text}");
        file.set_bytes(text.replacen(&"*".repeat(26), &auth, 1).into_bytes());
        conn.execute(
            "UPDATE strategy_versions SET binary = ?2 WHERE id = ?1",
            rusqlite::params![id, serde_json::to_vec(&program).unwrap()],
        )
        .unwrap();
        conn.execute_batch(
            "INSERT INTO maintenance_tasks (name) VALUES ('seal_backlog');
             PRAGMA wal_checkpoint(TRUNCATE);",
        )
        .unwrap();
    }
    assert!(
        programs_hold(&db, &auth),
        "the old program holds the string"
    );
    knobeln(&c, &["serve", "--once"]);
    assert!(!programs_hold(&db, &auth), "the program was not sealed");
    let found = find_secrets(&state_files(&c), std::slice::from_ref(&auth));
    assert!(found.is_empty(), "{found:?}");
    let out = knobeln(&c, &["contest", "start", "--seed", "1"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Whether a stored bot program's files hold `secret` (in any letter case).
fn programs_hold(db: &Path, secret: &str) -> bool {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut st = conn
        .prepare("SELECT binary FROM strategy_versions WHERE binary IS NOT NULL")
        .unwrap();
    let programs: Vec<Vec<u8>> = st
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let secret = secret.to_ascii_lowercase();
    programs.iter().any(|bytes| {
        let p = knobeln::lang::build::BotProgram::decode(bytes).unwrap();
        p.files.iter().any(|f| {
            f.bytes()
                .to_ascii_lowercase()
                .windows(secret.len())
                .any(|w| w == secret.as_bytes())
        })
    })
}
