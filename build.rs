//! Builds the compile jail's first process (`src/sandbox/jail_init.c`, a
//! static program without a C library) with the host's gcc, which the
//! server needs anyway: the library embeds it (`sandbox::jail`).

use std::path::PathBuf;
use std::process::Command;

fn main() {
    let src = "src/sandbox/jail_init.c";
    println!("cargo:rerun-if-changed={src}");
    println!("cargo:rerun-if-env-changed=KNOBELN_INIT_CC");
    let out =
        PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")).join("jail-init");
    let cc = std::env::var("KNOBELN_INIT_CC").unwrap_or_else(|_| "gcc".to_string());
    let status = Command::new(&cc)
        .args([
            "-static",
            "-nostdlib",
            "-nostartfiles",
            "-Os",
            "-fno-asynchronous-unwind-tables",
            "-fno-stack-protector",
            "-fno-pie",
            "-no-pie",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-Wl,--build-id=none",
            "-s",
            "-o",
        ])
        .arg(&out)
        .arg(src)
        .status()
        .unwrap_or_else(|e| panic!("cannot run {cc} to build the jail's init ({src}): {e}"));
    assert!(
        status.success(),
        "{cc} failed to build the jail's init ({src}): {status}"
    );
}
