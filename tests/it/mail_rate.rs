//! The shipped Postfix fragment `deploy/postfix-rate.cf` (how many mails
//! one client may hand over) against a real Postfix: a second instance of
//! its own, started and stopped by the test, so the machine's Postfix (the
//! one `deploy/mailstack.sh` runs on port 25, which other tests use at
//! the same time) is never changed or reloaded.
//!
//! The instance: the machine's Postfix binaries with a config folder, a
//! queue and a data folder in a temporary folder, one SMTP listener on a
//! free loopback port, mail for `contest.example` accepted and discarded.
//! Its `main.cf` is the fragment's lines as shipped, then two lines of the
//! test's: loopback is in `mynetworks`, which the fragment leaves exempt
//! (`smtpd_client_event_limit_exceptions`), so the test clears the
//! exception; and the count, not the clock, must decide, so the time unit
//! is an hour (the fragment's minute would let a slow run's mails spread
//! over two units). Needs root, as `deploy/mailstack.sh` does: a machine
//! without it fails here, never skips.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

/// The fragment as shipped.
const FRAGMENT: &str = include_str!("../../deploy/postfix-rate.cf");

/// The value of `name` in the fragment's `name = value` lines.
fn fragment_value(name: &str) -> String {
    FRAGMENT
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .filter_map(|l| l.split_once('='))
        .find(|(n, _)| n.trim() == name)
        .map(|(_, v)| v.trim().to_string())
        .unwrap_or_else(|| panic!("deploy/postfix-rate.cf sets no {name}"))
}

/// A Postfix instance of the test's own; stopped when dropped.
struct Instance {
    config: PathBuf,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Instance {
    fn start(main_cf_extra: &str) -> Instance {
        let dir = tempfile::Builder::new()
            .prefix("knobeln-postfix-rate")
            .tempdir()
            .unwrap();
        // Postfix's daemons (user postfix) go through the queue folder.
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let (config, queue, data) = (
            dir.path().join("etc"),
            dir.path().join("queue"),
            dir.path().join("data"),
        );
        for d in [&config, &queue, &data] {
            std::fs::create_dir(d).unwrap();
        }
        run("chown", &["postfix", data.to_str().unwrap()]);
        let port = {
            let l = TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let main_cf = format!(
            "compatibility_level = 3.6\n\
             queue_directory = {queue}\n\
             data_directory = {data}\n\
             inet_interfaces = 127.0.0.1\n\
             inet_protocols = ipv4\n\
             myhostname = rate.contest.example\n\
             mydomain = contest.example\n\
             mydestination =\n\
             mynetworks = 127.0.0.0/8\n\
             relayhost =\n\
             smtpd_relay_restrictions = reject_unauth_destination\n\
             virtual_mailbox_domains = contest.example\n\
             virtual_mailbox_maps = static:ok\n\
             virtual_transport = discard:\n\
             smtputf8_enable = no\n\
             syslog_name = postfix-knobeln-rate\n\
             # deploy/postfix-rate.cf, as shipped:\n\
             {FRAGMENT}\n\
             # The test's own:\n\
             {main_cf_extra}\n",
            queue = queue.display(),
            data = data.display(),
        );
        std::fs::write(config.join("main.cf"), main_cf).unwrap();
        let master_cf = format!(
            "127.0.0.1:{port} inet n - n - - smtpd\n\
             cleanup unix n - n - 0 cleanup\n\
             qmgr unix n - n 300 1 qmgr\n\
             rewrite unix - - n - - trivial-rewrite\n\
             bounce unix - - n - 0 bounce\n\
             defer unix - - n - 0 bounce\n\
             trace unix - - n - 0 bounce\n\
             error unix - - n - - error\n\
             retry unix - - n - - error\n\
             discard unix - - n - - discard\n\
             anvil unix - - n - 1 anvil\n\
             scache unix - - n - 1 scache\n\
             proxymap unix - - n - - proxymap\n"
        );
        std::fs::write(config.join("master.cf"), master_cf).unwrap();
        let instance = Instance {
            config,
            port,
            _dir: dir,
        };
        run("postfix", &["-c", instance.config_str(), "start"]);
        instance
    }

    fn config_str(&self) -> &str {
        self.config.to_str().unwrap()
    }

    /// A connection to the instance's SMTP listener, once it answers.
    fn connect(&self) -> Smtp {
        let start = Instant::now();
        loop {
            match TcpStream::connect(("127.0.0.1", self.port)) {
                Ok(s) => return Smtp::new(s),
                Err(_) if start.elapsed() < Duration::from_secs(60) => {
                    std::thread::sleep(Duration::from_millis(100));
                }
                Err(e) => panic!("the test's Postfix does not listen on {}: {e}", self.port),
            }
        }
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = Command::new("postfix")
            .args(["-c", self.config_str(), "stop"])
            .output();
        // Its master gone before its folder is.
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(30)
            && Command::new("postfix")
                .args(["-c", self.config_str(), "status"])
                .output()
                .is_ok_and(|o| o.status.success())
        {
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// Runs a command that must succeed (as root).
fn run(program: &str, args: &[&str]) {
    let out = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| {
            panic!("{program}: {e} (this test needs Postfix, as deploy/mailstack.sh installs it)")
        });
    assert!(
        out.status.success(),
        "{program} {args:?} failed (this test runs a Postfix of its own: it needs root, as \
         deploy/mailstack.sh does): {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// One SMTP session, line by line.
struct Smtp {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl Smtp {
    fn new(s: TcpStream) -> Smtp {
        s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        let mut smtp = Smtp {
            reader: BufReader::new(s.try_clone().unwrap()),
            writer: s,
        };
        let greeting = smtp.reply();
        assert!(greeting.starts_with("220"), "{greeting}");
        smtp
    }

    /// The server's reply, its lines joined (the last line's code first).
    fn reply(&mut self) -> String {
        let mut all = String::new();
        loop {
            let mut line = String::new();
            assert!(
                self.reader.read_line(&mut line).unwrap() > 0,
                "closed: {all}"
            );
            all.push_str(&line);
            if line.len() < 4 || line.as_bytes()[3] != b'-' {
                return line.trim_end().to_string();
            }
        }
    }

    fn say(&mut self, line: &str) -> String {
        self.writer
            .write_all(format!("{line}\r\n").as_bytes())
            .unwrap();
        self.reply()
    }
}

/// Hands over mail `n` in a session of its own; returns the
/// reply to MAIL FROM (where the rate limit answers) and, when it was
/// taken, the reply to the mail's end.
fn send_one(instance: &Instance, n: usize) -> (String, Option<String>) {
    let mut s = instance.connect();
    let ehlo = s.say("EHLO client.lords.example");
    assert!(ehlo.starts_with("250"), "{ehlo}");
    let mail = s.say("MAIL FROM:<joe@lords.example>");
    if !mail.starts_with("250") {
        s.say("QUIT");
        return (mail, None);
    }
    let rcpt = s.say("RCPT TO:<knobeln@contest.example>");
    assert!(rcpt.starts_with("250"), "{rcpt}");
    let data = s.say("DATA");
    assert!(data.starts_with("354"), "{data}");
    let end = s.say(&format!("Subject: mail {n}\r\n\r\nmail {n}\r\n."));
    s.say("QUIT");
    (mail, Some(end))
}

/// With the shipped fragment, one client hands over exactly
/// `smtpd_client_message_rate_limit` (60) mails in a time unit; the next
/// ones are refused at MAIL FROM with a 4xx (`450 4.7.1`: delayed, its
/// mail server tries again later, not lost). Without the fragment
/// (Postfix's default: no limit) the same 62 mails are all taken (tried
/// by hand).
#[test]
fn a_client_past_the_shipped_rate_limit_is_refused_with_a_4xx() {
    let limit: usize = fragment_value("smtpd_client_message_rate_limit")
        .parse()
        .unwrap();
    assert_eq!(limit, 60);
    assert_eq!(fragment_value("anvil_rate_time_unit"), "60s");
    let instance =
        Instance::start("smtpd_client_event_limit_exceptions =\nanvil_rate_time_unit = 3600s");
    let mut taken = 0;
    for n in 1..=limit {
        let (mail, end) = send_one(&instance, n);
        let end = end.unwrap_or_else(|| panic!("mail {n} of {limit} refused: {mail}"));
        assert!(end.starts_with("250"), "mail {n}: {end}");
        taken += 1;
    }
    assert_eq!(taken, limit);
    for n in limit + 1..=limit + 2 {
        let (mail, end) = send_one(&instance, n);
        assert_eq!(end, None, "mail {n} was taken past the limit");
        assert!(
            mail.starts_with("450 4.7.1") && mail.contains("too much mail"),
            "mail {n}: {mail}"
        );
    }
}
