// Echo bot in Rust: answers ECHO x with x, leaves at END.
use std::io::{self, BufRead, Write};

fn main() {
    let stdin = io::stdin();
    let mut out = io::stdout().lock();
    for line in stdin.lock().lines() {
        let line = line.unwrap();
        let mut parts = line.split_whitespace();
        match parts.next() {
            Some("ECHO") => {
                writeln!(out, "{}", parts.next().unwrap_or("")).unwrap();
                out.flush().unwrap();
            }
            _ => return,
        }
    }
}
