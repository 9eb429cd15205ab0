#!/usr/bin/env bash
# deploy/zig.sh -- the LLVM that starts fast: clang and wasm-ld of the zig
# toolchain, one statically linked program (PyPI's wheel `ziglang`, pinned
# by version and SHA-256), for building KNOBELN strategies as WebAssembly.
#
#   deploy/zig.sh install   install it under $ZIG_DIR when it is missing
#   deploy/zig.sh check     exit 0 when it is there and is the pinned one
#
# Debian's clang-14 and wasm-ld-14 load libLLVM-14.so, whose relocation and
# page faults cost 20-25 ms of CPU a start; this one's `zig clang` starts in
# 4 ms (docs/src/figures.md, "An LLVM that starts fast"). The server uses it
# when it is at $ZIG_DIR (`toolchain::wasm::Toolchain::find`), Debian's LLVM
# otherwise; the wasm32 builtins still come from Debian's
# libclang-rt-14-dev-wasm32. $ZIG_DIR is under /usr, which the compile jail
# shows. Needs root, python3 with pip (only to download the wheel; the
# wheel is a zip whose `ziglang/` folder is copied).
set -euo pipefail

VERSION=0.17.0
WHEEL=ziglang-$VERSION-py3-none-manylinux_2_12_x86_64.manylinux2010_x86_64.musllinux_1_1_x86_64.whl
SHA256=97079827064a7492cce5541ceb438ae8003ce1e54e399676da2d62fb7a5dc08b
ZIG_DIR=/usr/local/lib/knobeln/zig-$VERSION

check() {
    [ -x "$ZIG_DIR/zig" ] && [ "$("$ZIG_DIR/zig" version 2>/dev/null)" = "$VERSION" ]
}

install() {
    if check; then
        return 0
    fi
    local tmp
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' RETURN
    local py=python3
    if ! "$py" -m pip --version >/dev/null 2>&1; then
        py=/usr/bin/python3
        if ! "$py" -m pip --version >/dev/null 2>&1; then
            apt-get update -qq
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-pip
        fi
    fi
    echo "ziglang==$VERSION --hash=sha256:$SHA256" >"$tmp/req.txt"
    "$py" -m pip download -q --no-deps --only-binary=:all: --require-hashes \
        --platform manylinux2010_x86_64 -r "$tmp/req.txt" -d "$tmp"
    echo "$SHA256  $tmp/$WHEEL" | sha256sum -c --quiet
    "$py" -m zipfile -e "$tmp/$WHEEL" "$tmp/x"
    chmod +x "$tmp/x/ziglang/zig"
    mkdir -p "$(dirname "$ZIG_DIR")"
    rm -rf "$ZIG_DIR.new"
    mv "$tmp/x/ziglang" "$ZIG_DIR.new"
    rm -rf "$ZIG_DIR"
    mv "$ZIG_DIR.new" "$ZIG_DIR"
    check
}

case "${1:-}" in
install) install ;;
check) check ;;
*)
    echo "usage: $0 install|check" >&2
    exit 2
    ;;
esac
