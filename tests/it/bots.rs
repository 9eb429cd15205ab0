//! Bots in any language: the sandbox, the line referee, the languages.

use std::io::Read;
use std::os::fd::AsRawFd;

use knobeln::sandbox::bot::{BotLimits, BotProcess, BotSpec};

fn read_all(fd: &std::os::fd::OwnedFd) -> String {
    let mut f = std::fs::File::from(fd.try_clone().unwrap());
    // blocking read until EOF
    unsafe {
        let flags = libc::fcntl(fd.as_raw_fd(), libc::F_GETFL);
        libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, flags & !libc::O_NONBLOCK);
    }
    let mut s = String::new();
    let _ = f.read_to_string(&mut s);
    s
}

#[test]
fn smoke_shell_in_the_sandbox() {
    let argv: Vec<String> = ["/bin/sh", "-c", "id; cat /proc/self/uid_map; ls /; ls /proc | head; echo x > /work/f && cat /work/f; touch /usr/x; touch /x; ls /bot; cat /etc/passwd"]
        .iter().map(|s| s.to_string()).collect();
    let files = vec![knobeln::sandbox::bot::BotFile {
        path: "bot.py".into(),
        bytes: b"print(1)".to_vec(),
        executable: false,
    }];
    let spec = BotSpec {
        argv: &argv,
        env: &[],
        files: &files,
        read_only: &[],
        limits: BotLimits::default(),
    };
    let mut p = BotProcess::spawn(&spec).unwrap();
    drop(std::mem::replace(
        &mut p.stdin,
        std::fs::File::open("/dev/null").unwrap().into(),
    ));
    let out = read_all(&p.stdout);
    let err = read_all(&p.stderr);
    let st = p.finish().unwrap();
    eprintln!(
        "OUT:\n{out}\nERR:\n{err}\nstatus {st:?} cpu {:?}",
        p.cpu_time()
    );
}
