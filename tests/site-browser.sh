#!/usr/bin/env bash
# Makes sure Debian's chromium is installed for the results-site browser
# tests (tests/it/site.rs), installing it with apt-get when missing, then
# checks that it starts headless as these tests run it. Exit 0 when chromium
# is usable; non-zero (with a message) when it is not.
#
# Usage: bash tests/site-browser.sh   (tests/run-all.sh calls it)
set -euo pipefail

CHROMIUM=/usr/bin/chromium
if [ ! -x "$CHROMIUM" ]; then
    echo "installing: chromium (for the results-site browser tests)"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        chromium fonts-dejavu-core
fi
if [ ! -x "$CHROMIUM" ]; then
    echo "site-browser.sh: $CHROMIUM is still missing after apt-get install" >&2
    exit 1
fi

profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
printf '<!doctype html><title>t</title><p id="ok">ok</p>' >"$profile/t.html"
if ! out=$(timeout 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic \
    --no-first-run --disable-background-networking --disable-component-update \
    --disable-sync --user-data-dir="$profile/profile" --dump-dom "file://$profile/t.html" 2>/dev/null); then
    echo "site-browser.sh: chromium did not run headless" >&2
    exit 1
fi
case "$out" in
*'id="ok"'*) echo "chromium ready: $("$CHROMIUM" --version 2>/dev/null || echo "$CHROMIUM")" ;;
*)
    echo "site-browser.sh: chromium ran but printed no page" >&2
    exit 1
    ;;
esac
