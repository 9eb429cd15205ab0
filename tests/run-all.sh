#!/usr/bin/env bash
# The project's one test command (README, top). Installs what the tests need
# on a fresh machine of this kind, then runs formatting, lints and the suite.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v gcc >/dev/null || need_apt+=(gcc)
command -v ld >/dev/null || need_apt+=(binutils)
if [ ${#need_apt[@]} -gt 0 ]; then
    echo "installing: ${need_apt[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}"
fi

cargo fmt --all -- --check
cargo clippy --all-targets --locked -- -D warnings
# Benchmarks print figures and assert nothing: `knobeln bench all` or
# `cargo bench`. Here they only have to build (clippy --all-targets did).
cargo test --locked --lib --bins --tests
