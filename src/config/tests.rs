//! Unit tests of the configuration: the example parses, defaults, paths,
//! discovery, validation.

use super::*;
use chrono::{DateTime, Utc};

#[test]
fn the_example_config_parses_and_validates() {
    let cfg = Config::parse(EXAMPLE).unwrap();
    cfg.validate().unwrap();
}

#[test]
fn the_default_is_spool_with_an_open_timeline() {
    let cfg = Config::default();
    assert_eq!(cfg.transport, TransportKind::Spool);
    let now = Utc::now();
    assert!(cfg.timeline.registration_open(now));
    assert!(cfg.timeline.compile_open(now));
}

#[test]
fn compile_service_closes_two_hours_before_the_start() {
    let at = |s: &str| DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc);
    let t = Timeline {
        contest_start: at("1994-05-14T12:00:00Z"),
        compile_start: at("1994-03-23T00:00:00Z"),
        ..Timeline::default()
    };
    assert!(t.compile_open(at("1994-05-14T09:59:59Z")));
    assert!(!t.compile_open(at("1994-05-14T10:00:00Z")));
    assert!(!t.compile_open(at("1994-03-22T23:59:59Z")));
}

#[test]
fn environment_overrides_secrets() {
    let mut cfg = Config::parse(
        "transport = \"imap\"\n[imap]\nhost = \"127.0.0.1\"\nport = 143\ntls = \"none\"\nuser = \"u\"\n\
         [smtp]\nhost = \"localhost\"\nport = 25\ntls = \"none\"\npassword = \"file\"\n",
    )
    .unwrap();
    cfg.validate().unwrap();
    cfg.apply_env(|k| (k == "KNOBELN_SMTP_PASSWORD").then(|| "s3cret".to_string()));
    assert_eq!(cfg.smtp.unwrap().password.as_deref(), Some("s3cret"));
}

#[test]
fn unknown_keys_are_errors_not_silence() {
    assert!(Config::parse("databse = \"x.db\"\n").is_err());
}

#[test]
fn discovery_takes_flag_then_environment_then_cwd_then_etc() {
    let none = |_: &Path| false;
    let all = |_: &Path| true;
    let (p, o) = discover(Some(Path::new("a.toml")), Some(OsStr::new("b.toml")), all).unwrap();
    assert_eq!((p, o), (PathBuf::from("a.toml"), ConfigOrigin::Flag));
    let (p, o) = discover(None, Some(OsStr::new("b.toml")), all).unwrap();
    assert_eq!((p, o), (PathBuf::from("b.toml"), ConfigOrigin::Environment));
    let (p, o) = discover(None, Some(OsStr::new("")), all).unwrap();
    assert_eq!(
        (p, o),
        (
            PathBuf::from("knobeln.toml"),
            ConfigOrigin::WorkingDirectory
        )
    );
    let etc_only = |p: &Path| p == Path::new(SYSTEM_CONFIG);
    let (p, o) = discover(None, None, etc_only).unwrap();
    assert_eq!((p, o), (PathBuf::from(SYSTEM_CONFIG), ConfigOrigin::System));
    // An explicit choice is taken even when the file is missing.
    let (p, _) = discover(None, Some(OsStr::new("gone.toml")), none).unwrap();
    assert_eq!(p, PathBuf::from("gone.toml"));
    let err = discover(None, None, none).unwrap_err().to_string();
    for place in [
        "--config",
        "$KNOBELN_CONFIG",
        "./knobeln.toml",
        SYSTEM_CONFIG,
    ] {
        assert!(err.contains(place), "{place} in {err}");
    }
}

#[test]
fn relative_paths_are_relative_to_the_config_folder() {
    let mut cfg = Config::parse(
        "database = \"state/k.db\"\n[spool]\ndir = \"/abs/spool\"\n\
         [site]\ndir = \"www\"\n[rules]\nrsm_note_file = \"note.txt\"\n\
         [engine]\nnats_ca_file = \"ca.pem\"\n",
    )
    .unwrap();
    cfg.resolve_paths(Path::new("/etc/knobeln"));
    assert_eq!(cfg.database, PathBuf::from("/etc/knobeln/state/k.db"));
    assert_eq!(cfg.spool.dir, PathBuf::from("/abs/spool"));
    assert_eq!(cfg.site.dir, Some(PathBuf::from("/etc/knobeln/www")));
    assert_eq!(
        cfg.rules.rsm_note_file,
        Some(PathBuf::from("/etc/knobeln/note.txt"))
    );
    assert_eq!(
        cfg.engine.nats_ca_file,
        Some(PathBuf::from("/etc/knobeln/ca.pem"))
    );
}

#[test]
fn loopback_hosts_are_recognised() {
    for h in [
        "127.0.0.1",
        "127.8.9.10",
        "::1",
        "[::1]",
        "localhost",
        "LocalHost.",
    ] {
        assert!(is_loopback_host(h), "{h}");
    }
    for h in [
        "10.0.0.1",
        "mail.contest.example",
        "localhost.evil.example",
        "::2",
        "",
    ] {
        assert!(!is_loopback_host(h), "{h}");
    }
}

#[test]
fn plain_text_mail_connections_are_refused_beyond_loopback() {
    let text = |imap_host: &str, imap_tls: &str, smtp_host: &str, smtp_tls: &str| {
        format!(
            "transport = \"imap\"\n[imap]\nhost = \"{imap_host}\"\nport = 143\n\
             tls = \"{imap_tls}\"\nuser = \"u\"\n[smtp]\nhost = \"{smtp_host}\"\n\
             port = 587\ntls = \"{smtp_tls}\"\n"
        )
    };
    let check = |t: String| Config::parse(&t).unwrap().validate();
    check(text("127.0.0.1", "none", "::1", "none")).unwrap();
    check(text("mail.example", "tls", "mail.example", "starttls")).unwrap();
    let err = check(text("mail.example", "none", "127.0.0.1", "none"))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("[imap]") && err.contains("plain text"),
        "{err}"
    );
    let err = check(text("::1", "none", "192.0.2.7", "none"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("[smtp]") && err.contains("192.0.2.7"), "{err}");
}

/// A registered discipline's section is a top-level table: its name may
/// be none of the configuration's own keys (`registry::RESERVED` is
/// exactly them, beside the seeds' four sections).
#[test]
fn the_names_a_discipline_may_not_take_are_the_configurations_keys() {
    let v = serde_json::to_value(Config::default()).unwrap();
    let mut keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    let seeds: Vec<&str> = crate::discipline::registry::built_in()
        .into_iter()
        .map(|d| d.name())
        .collect();
    keys.retain(|k| !seeds.contains(k));
    keys.sort_unstable();
    let mut reserved = crate::discipline::registry::RESERVED.to_vec();
    reserved.sort_unstable();
    assert_eq!(keys, reserved);
}

/// The ultimatum game's kept folders must fit a NATS message when games go
/// to workers: its seam checks that (`Sections::workers`), whatever the
/// contest plays, with the same sentence as before it moved.
#[test]
fn kept_folders_too_large_for_workers_are_refused_by_the_ultimatum_seam() {
    use crate::discipline::Workers;
    let nats = "[engine]\nnats = \"nats://127.0.0.1:4222\"\n";
    let parse = |t: &str| Config::parse(t).unwrap();
    assert_eq!(parse("").sections().workers, Workers::Local);
    assert_eq!(parse(nats).sections().workers, Workers::Nats);
    parse("[ultimatum]\nfolder_kb = 1024\n").validate().unwrap();
    parse(&format!("{nats}[ultimatum]\nfolder_kb = 256\n"))
        .validate()
        .unwrap();
    parse(&format!(
        "{nats}[ultimatum]\nfolder_kb = 1024\nfolders = \"fresh\"\n"
    ))
    .validate()
    .unwrap();
    for contest in ["", "[contest]\ndiscipline = \"flooding\"\n"] {
        let err = parse(&format!("{contest}{nats}[ultimatum]\nfolder_kb = 1024\n"))
            .validate()
            .unwrap_err()
            .to_string();
        assert!(
            err.ends_with(
                "ultimatum.folder_kb must be at most 256 with [engine] nats: two kept \
                 folders travel with each game to a worker, in one message (got 1024)"
            ),
            "{err}"
        );
    }
}

/// Every discipline's section is checked, each once by its seam, whatever
/// the contest plays: a broken `[flooding]` is refused in a KNOBELN
/// contest.
#[test]
fn every_disciplines_section_is_checked_whatever_the_contest_plays() {
    for (section, word) in [
        ("[flooding]\nruns = 0\n", "flooding"),
        ("[ultimatum]\nrepetitions = 0\n", "ultimatum"),
        ("[footsteps]\nreply_ms = 0\n", "footsteps"),
        ("[morabaraba]\nreply_ms = 0\n", "morabaraba"),
    ] {
        let err = Config::parse(section)
            .unwrap()
            .validate()
            .unwrap_err()
            .to_string();
        assert!(err.contains(word), "{section}: {err}");
    }
}

/// `knobeln play --set KEY=VALUE`: a key of a discipline's section set as
/// the configuration's text would, nothing else changed; a key the
/// section has not, a wrong type or no TOML value is refused in words.
#[test]
fn a_key_of_a_disciplines_section_is_set_from_key_equals_value() {
    use crate::discipline::Discipline;
    let mut cfg = Config::default();
    cfg.set_in_section(Discipline::ULTIMATUM, "rounds=5")
        .unwrap();
    cfg.set_in_section(Discipline::FLOODING, " max_rounds = 12 ")
        .unwrap();
    cfg.set_in_section(Discipline::ULTIMATUM, "folders=\"fresh\"")
        .unwrap();
    let mut expected = Config::default();
    expected.ultimatum.rounds = 5;
    expected.flooding.max_rounds = 12;
    expected.ultimatum.folders = crate::discipline::FolderKeeping::Fresh;
    assert_eq!(cfg, expected);
    for (bad, says) in [
        ("roundz=5", "unknown field `roundz`"),
        ("rounds=\"five\"", "invalid type"),
        ("rounds", "no `=`"),
        ("rounds=five", "no TOML value"),
        ("a.b=1", "no key of a section"),
    ] {
        let e = cfg
            .set_in_section(Discipline::ULTIMATUM, bad)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with(bad) && e.contains(says), "{bad}: {e}");
    }
    assert_eq!(cfg, expected, "a refused key changes nothing");
}

/// The contest's name stands in every contest mail's subject: a name of
/// 100 characters is taken, one of 101, an empty one and one with a line
/// break are refused with the sentence saying why (before, a long name
/// was cut with the subject at 500 characters, a line break blanked).
#[test]
fn a_contest_name_is_one_line_of_at_most_100_characters() {
    let check = |name: &str| {
        let mut c = Config::default();
        c.contest.name = name.to_string();
        c.validate()
    };
    check(&"é".repeat(100)).unwrap();
    let err = check(&"é".repeat(101)).unwrap_err().to_string();
    assert!(err.contains("101 characters long, more than 100"), "{err}");
    let err = check("  ").unwrap_err().to_string();
    assert!(err.contains("name is empty"), "{err}");
    let err = check("Spring\r\nBcc: all@example.org")
        .unwrap_err()
        .to_string();
    assert!(err.contains("line break"), "{err}");
}

/// `limits.keep_inbox_days` keeps a mail's key while anything can deliver
/// it again: at least 7 days (a mailer's retries), and longer than the
/// IMAP mailbox holds a mail taken in (`imap.keep_days` + 1 days): at its
/// edges, 7 and 32 (with `keep_days = 30`) load, 6 and 31 are refused
/// with the reason.
#[test]
fn the_inbox_keeps_a_mails_key_longer_than_the_mailbox_can_hand_it_over() {
    let text = |keep_inbox_days: u32, keep_days: Option<u32>| {
        let mut t = format!("[limits]\nkeep_inbox_days = {keep_inbox_days}\n");
        if let Some(k) = keep_days {
            t.push_str(&format!(
                "[imap]\nhost = \"127.0.0.1\"\nport = 143\ntls = \"none\"\nuser = \"u\"\n\
                 keep_days = {k}\n"
            ));
        }
        t
    };
    let check = |t: String| Config::parse(&t).unwrap().validate();
    assert_eq!(Config::default().limits.keep_inbox_days, 90);
    Config::default().validate().unwrap();
    check(text(7, None)).unwrap();
    let err = check(text(6, None)).unwrap_err().to_string();
    assert!(
        err.contains("keep_inbox_days = 6") && err.contains("at least 7"),
        "{err}"
    );
    check(text(32, Some(30))).unwrap();
    let err = check(text(31, Some(30))).unwrap_err().to_string();
    assert!(
        err.contains("keep_inbox_days = 31") && err.contains("imap.keep_days + 1 (31)"),
        "{err}"
    );
    check(text(90, Some(30))).unwrap();
    check(text(7, Some(0))).unwrap();
}

/// `[site] game_page_bytes` unset: KNOBELN's 1 GiB, a bot discipline's
/// 8 GiB; set, the same for both.
#[test]
fn the_game_page_budget_defaults_by_discipline_and_a_set_one_wins() {
    let mut cfg = Config::default();
    let knobeln = cfg.contest.discipline;
    assert_eq!(
        cfg.site.game_page_bytes_of(knobeln),
        DEFAULT_GAME_PAGE_BYTES
    );
    for d in crate::discipline::Discipline::bots() {
        assert_eq!(
            cfg.site.game_page_bytes_of(d),
            DEFAULT_BOT_GAME_PAGE_BYTES,
            "{d}"
        );
    }
    cfg = Config::parse("[site]\ngame_page_bytes = 4096\n").unwrap();
    assert_eq!(cfg.site.game_page_bytes_of(knobeln), 4096);
    for d in crate::discipline::Discipline::bots() {
        assert_eq!(cfg.site.game_page_bytes_of(d), 4096, "{d}");
    }
}
