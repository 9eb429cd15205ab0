#!/usr/bin/env bash
# Coverage-guided fuzzing of every harness for SECONDS each (docs/src/security.md,
# "Fuzzing"): libFuzzer through libfuzzer-sys on stable Rust, no cargo-fuzz.
#
#   bash fuzz/run.sh SECONDS [HARNESS...]
#
# Builds the bins of fuzz/ with coverage instrumentation, overflow checks
# and debug assertions, then runs each harness on a COPY of its checked-in
# corpus (fuzz/corpus/NAME/ is never written to) with its dictionary
# (fuzz/dict/NAME.dict). Work files, new corpus entries and crash
# reproducers go to $CARGO_TARGET_DIR/fuzz/work/NAME/ (default
# target/fuzz/work/NAME/). Runs every harness; exits non-zero when any
# found a crash, a timeout or an out-of-memory, printing the reproducer's
# path and the head of its bytes:
# minimize it (BIN -minimize_crash=1 -runs=10000 FILE), add it to
# fuzz/corpus/NAME/ for good, then fix the bug.
set -euo pipefail
cd "$(dirname "$0")"

seconds=${1:?usage: bash fuzz/run.sh SECONDS [HARNESS...]}
shift
if [ $# -gt 0 ]; then
    harnesses=("$@")
else
    harnesses=()
    for f in fuzz_targets/*.rs; do
        harnesses+=("$(basename "$f" .rs)")
    done
fi

target=x86_64-unknown-linux-gnu
base=${CARGO_TARGET_DIR:-$(pwd)/../target}
export CARGO_TARGET_DIR=$base/fuzz
# An explicit --target keeps the instrumentation off build scripts and
# proc macros (they would not link without libFuzzer).
export RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing -Cdebug-assertions -Coverflow-checks"
start=$(date +%s)
cargo build --release --locked --target "$target" --bins
echo "fuzz: built in $(($(date +%s) - start)) s"

bins=$CARGO_TARGET_DIR/$target/release
failed=0
for name in "${harnesses[@]}"; do
    work=$CARGO_TARGET_DIR/work/$name
    rm -rf "$work"
    mkdir -p "$work/corpus" "$work/artifacts"
    cp -r "corpus/$name/." "$work/corpus/"
    echo "fuzz: $name for $seconds s"
    set +e
    "$bins/$name" "$work/corpus" \
        -dict="dict/$name.dict" \
        -max_total_time="$seconds" \
        -timeout=10 \
        -rss_limit_mb=2048 \
        -print_final_stats=1 \
        -artifact_prefix="$work/artifacts/" \
        >"$work/log" 2>&1
    rc=$?
    set -e
    grep -aE '^(#[0-9]+ +DONE|Done [0-9]+ runs|stat::number_of_executed_units|stat::average_exec_per_sec|stat::peak_rss_mb)' \
        "$work/log" | sed "s/^/  $name: /" || true
    grep -aoE 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+/[0-9]+[a-zA-Z]*' "$work/log" | tail -1 | sed "s/^/  $name: /" || true
    if [ "$rc" -ne 0 ]; then
        failed=1
        echo "fuzz: $name FAILED (exit $rc); its log: $work/log"
        grep -aE 'panicked at|==[0-9]+== ERROR|ALARM|out-of-memory|Test unit written' "$work/log" | head -5 || true
        for f in "$work"/artifacts/*; do
            [ -e "$f" ] || continue
            echo "fuzz: reproducer $f ($(stat -c %s "$f") bytes):"
            head -c 512 "$f" | od -A d -t x1z | head -n 24
            echo "fuzz: replay it: $bins/$name $f"
        done
    fi
done
echo "fuzz: done in $(($(date +%s) - start)) s"
exit "$failed"
