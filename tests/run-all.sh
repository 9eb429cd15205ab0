#!/usr/bin/env bash
# The project's one test command (README, top). Installs what the tests need
# on a fresh machine of this kind, then runs formatting, lints and the suite.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v gcc >/dev/null || need_apt+=(gcc)
command -v ld >/dev/null || need_apt+=(binutils)
command -v pkg-config >/dev/null || need_apt+=(pkg-config)
[ -e /usr/include/openssl/ssl.h ] || need_apt+=(libssl-dev)
# KNOBELN strategies are built a second time by clang for wasm32 and
# linked by wasm-ld with compiler-rt's builtins (issue 23).
[ -x /usr/bin/clang ] || need_apt+=(clang)
command -v wasm-ld >/dev/null || need_apt+=(lld)
ls /usr/lib/llvm-*/lib/clang/*/lib/wasi/libclang_rt.builtins-wasm32.a >/dev/null 2>&1 \
    || need_apt+=(libclang-rt-14-dev-wasm32)
# The determinism test runs tournaments pinned to one CPU (util-linux).
command -v taskset >/dev/null || need_apt+=(util-linux)
# Bot toolchains (issue 13): the sandbox sees only /usr, so Debian's own
# python3 and JDK, not a python3 elsewhere on PATH; rustc comes with the
# Rust toolchain that builds the project.
command -v g++ >/dev/null || need_apt+=(g++)
[ -x /usr/bin/python3 ] || need_apt+=(python3)
[ -x /usr/bin/javac ] || need_apt+=(default-jdk-headless)
# The distributed tests start their own nats-server (JetStream) per test and
# put a worker into a network namespace of its own (iproute2's ip); the TLS
# test makes its certificates with openssl.
command -v nats-server >/dev/null || need_apt+=(nats-server)
command -v ip >/dev/null || need_apt+=(iproute2)
command -v openssl >/dev/null || need_apt+=(openssl)
# The deployment tests: the documented backup (sqlite3 .backup) and
# `systemd-analyze verify` of deploy/*.service (systemd need not run).
command -v sqlite3 >/dev/null || need_apt+=(sqlite3)
command -v systemd-analyze >/dev/null || need_apt+=(systemd)
if [ ${#need_apt[@]} -gt 0 ]; then
    echo "installing: ${need_apt[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}"
fi

# clang and wasm-ld of zig's LLVM (PyPI's `ziglang`, pinned by version and
# hash; one static program that starts in 4 ms where Debian's clang takes
# 25): the compile service prefers them to Debian's when installed.
bash deploy/zig.sh install

# A real Dovecot (IMAP) and Postfix (SMTP) on loopback for the mail tests:
# installs dovecot-imapd, dovecot-lmtpd, postfix and swaks when missing.
bash deploy/mailstack.sh start
# Debian's chromium for the results-site browser tests (installed when missing).
bash tests/site-browser.sh

# The book (docs/, issue 37): mdBook builds it into docs/book/ (ignored by
# git), then every relative link and #anchor of README.md, ARCHITECTURE.md
# and docs/src/ must resolve. mdBook is installed when missing (pinned;
# 17 min here with other builds sharing the two cores; see README).
MDBOOK_VERSION=0.4.52
if ! command -v mdbook >/dev/null || ! mdbook --version | grep -q "v$MDBOOK_VERSION"; then
    cargo install mdbook --locked --no-default-features --version "$MDBOOK_VERSION"
fi
mdbook build docs
python3 tests/check-links.py
# No circle between files and no upward import (ARCHITECTURE.md, "Layers").
python3 tests/check-imports.py

cargo fmt --all -- --check
cargo clippy --all-targets --locked -- -D warnings
# Every intra-doc link of the `//!` and `///` comments resolves (file
# splits move items; a link to where an item was is a comment untrue).
RUSTDOCFLAGS="-D rustdoc::broken_intra_doc_links -A rustdoc::private_intra_doc_links" \
    cargo doc --no-deps --lib --locked
# Benchmarks print figures and assert nothing: `knobeln bench all` or
# `cargo bench`. Here they only have to build (clippy --all-targets did).
cargo test --locked --lib --bins --tests
# The bot sandbox's second hierarchy: this machine kind's control groups are
# v1 (`/sys/fs/cgroup/{memory,pids,cpuacct,freezer}`), so the pass above
# tests v1 and the fallbacks. The control groups' and the bots' tests run
# again on cgroup v2 (its freezer, `cgroup.events`, `cgroup.kill`, `cpu.stat`)
# through `KNOBELN_CGROUP_ROOT`: the v2 hierarchy mounted beside v1
# (`/sys/fs/cgroup/unified`), or one mounted here for the run.
if [ -e /sys/fs/cgroup/cgroup.controllers ]; then
    echo "cgroup v2 is this machine's default: the pass above tested it"
else
    v2_root=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
    if [ -z "$v2_root" ]; then
        v2_root=/run/knobeln-cgroup2
        mkdir -p "$v2_root"
        mount -t cgroup2 cgroup2 "$v2_root"
    fi
    KNOBELN_CGROUP_ROOT="$v2_root" cargo test --locked --lib sandbox::
    KNOBELN_CGROUP_ROOT="$v2_root" cargo test --locked --test it bots::
fi
# Coverage-guided fuzzing, 20 s a harness on a copy of fuzz/corpus/ (the
# corpus itself is replayed by `cargo test` above): fails on a crash and
# names the reproducer (docs/src/security.md, "Fuzzing"); libfuzzer-sys builds libFuzzer
# with the g++ installed above.
bash fuzz/run.sh 20
