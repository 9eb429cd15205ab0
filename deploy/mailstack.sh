#!/usr/bin/env bash
# deploy/mailstack.sh -- a real local mail stack (Postfix + Dovecot) on one
# machine, for a one-machine deployment of knobeln and for the test suite.
#
#   deploy/mailstack.sh start    install what is missing, configure, start, wait
#   deploy/mailstack.sh stop     stop both servers, wait until the ports are free
#   deploy/mailstack.sh status   exit 0 when IMAP and SMTP both answer
#   deploy/mailstack.sh env      print shell exports for the tests
#   deploy/mailstack.sh logs     print the end of Dovecot's and Postfix's logs
#
# The stack (deploy/README.md has the whole story):
#   SMTP  127.0.0.1:25    Postfix, loopback only, no auth, no TLS; accepts
#                         mail for the virtual domains and hands it to
#                         Dovecot by LMTP
#   IMAP  127.0.0.1:1143  Dovecot, no TLS, every user has the password
#                         "knobeln"; user name = full address
#   LMTP  127.0.0.1:1024  Dovecot, used by Postfix only
#   domains: contest.example participants.example lords.example
#
# Settings (environment): KNOBELN_MAILSTACK_DIR (state dir, default
# /var/lib/knobeln-mailstack), KNOBELN_MAILSTACK_IMAP_PORT (1143),
# KNOBELN_MAILSTACK_LMTP_PORT (1024), KNOBELN_MAILSTACK_PASSWORD (knobeln),
# KNOBELN_MAILSTACK_DOMAINS (space separated; the first one is the default
# domain of bare user names), KNOBELN_MAILSTACK_TIMEOUT (seconds to wait, 30).
#
# Needs root (Debian 12, no systemd needed). Postfix is the machine's one
# Postfix: its /etc/postfix/main.cf is changed with `postconf -e`, and it
# listens on port 25, so a machine runs one such stack at a time.
set -euo pipefail
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:$PATH

STATE=${KNOBELN_MAILSTACK_DIR:-/var/lib/knobeln-mailstack}
IMAP_PORT=${KNOBELN_MAILSTACK_IMAP_PORT:-1143}
LMTP_PORT=${KNOBELN_MAILSTACK_LMTP_PORT:-1024}
SMTP_PORT=25
PASSWORD=${KNOBELN_MAILSTACK_PASSWORD:-knobeln}
DOMAINS=${KNOBELN_MAILSTACK_DOMAINS:-contest.example participants.example lords.example}
TIMEOUT=${KNOBELN_MAILSTACK_TIMEOUT:-30}
HOST=127.0.0.1
DEFAULT_DOMAIN=${DOMAINS%% *}

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TEMPLATE=$HERE/dovecot.conf.in
DOVECOT_CONF=$STATE/dovecot.conf
DOVECOT_PID=$STATE/run/dovecot/master.pid
DOVECOT_LOG=$STATE/log/dovecot.log
# Postfix refuses (silently) a maillog_file outside /var, whatever the state dir.
POSTFIX_LOG=/var/log/knobeln-mailstack/postfix.log
PACKAGES=(dovecot-imapd dovecot-lmtpd postfix swaks)

say() { echo "mailstack: $*"; }
die() {
    echo "mailstack: error: $*" >&2
    exit 1
}

need_root() {
    [ "$(id -u)" -eq 0 ] || die "must run as root (it installs packages, runs Postfix on port 25)"
}

# --- probing ---------------------------------------------------------------

# probe PORT PREFIX: the server on PORT greets with a line starting PREFIX.
probe() {
    local port=$1 prefix=$2 bye=$3
    timeout 5 bash -c '
        exec 3<>"/dev/tcp/$0/$1" || exit 1
        IFS= read -r line <&3 || exit 1
        printf "%s\r\n" "$3" >&3 2>/dev/null || true
        exec 3<&-
        [[ $line == "$2"* ]]' "$HOST" "$port" "$prefix" "$bye" 2>/dev/null
}
imap_up() { probe "$IMAP_PORT" "* OK" "a LOGOUT"; }
lmtp_up() { probe "$LMTP_PORT" "220" "QUIT"; }
smtp_up() { probe "$SMTP_PORT" "220" "QUIT"; }

# port_free PORT: nothing accepts connections on PORT.
port_free() {
    ! timeout 5 bash -c 'exec 3<>"/dev/tcp/$0/$1"' "$HOST" "$1" 2>/dev/null
}

# wait_until SECONDS CMD...: run CMD every 0.1 s until it succeeds.
wait_until() {
    local deadline=$((SECONDS + $1))
    shift
    until "$@"; do
        [ "$SECONDS" -lt "$deadline" ] || return 1
        sleep 0.1
    done
}

show_logs() {
    echo "--- Dovecot log ($DOVECOT_LOG), last lines:" >&2
    tail -n 30 "$DOVECOT_LOG" >&2 2>/dev/null || echo "(none)" >&2
    echo "--- Postfix log ($POSTFIX_LOG), last lines:" >&2
    tail -n 30 "$POSTFIX_LOG" >&2 2>/dev/null || echo "(none)" >&2
}

# --- installing --------------------------------------------------------------

installed() {
    dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"
}

install_missing() {
    local missing=() p
    for p in "${PACKAGES[@]}"; do
        installed "$p" || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    say "installing ${missing[*]}"
    # Keep the packages' init scripts from starting the system-wide Dovecot
    # and Postfix with their default configs during the install.
    local policy=/usr/sbin/policy-rc.d made_policy=
    if [ ! -e "$policy" ]; then
        printf '#!/bin/sh\nexit 101\n' >"$policy"
        chmod 755 "$policy"
        made_policy=1
        trap 'rm -f /usr/sbin/policy-rc.d' EXIT
    fi
    local rc=0 log
    log=$(mktemp)
    {
        apt-get update -qq &&
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=300 --no-install-recommends "${missing[@]}"
    } >"$log" 2>&1 || rc=$?
    if [ -n "$made_policy" ]; then
        rm -f "$policy"
        trap - EXIT
    fi
    if [ "$rc" -ne 0 ]; then
        tail -n 40 "$log" >&2
        rm -f "$log"
        die "apt-get install ${missing[*]} failed (exit $rc)"
    fi
    rm -f "$log"
}

# --- Dovecot -----------------------------------------------------------------

check_path_traversable() {
    # Dovecot reaches the maildirs as the `mail` user: every folder on the
    # way needs the x bit for others.
    local d=$STATE
    while [ "$d" != "/" ] && [ -n "$d" ]; do
        if [ -d "$d" ] && ! [ "$(stat -c %A "$d" | cut -c10)" = x ] && ! [ "$(stat -c %A "$d" | cut -c10)" = t ]; then
            die "$d is not searchable by other users (mode $(stat -c %a "$d")); Dovecot's \`mail\` user must reach $STATE/mail: chmod o+x it or choose another KNOBELN_MAILSTACK_DIR"
        fi
        d=$(dirname "$d")
    done
}

dovecot_running() {
    [ -f "$DOVECOT_PID" ] && kill -0 "$(cat "$DOVECOT_PID")" 2>/dev/null
}

# Writes the filled template; returns 0 when the config changed.
write_dovecot_conf() {
    [ -f "$TEMPLATE" ] || die "missing template $TEMPLATE"
    local new=$DOVECOT_CONF.new
    sed -e "s|@STATE@|$STATE|g" \
        -e "s|@IMAP_PORT@|$IMAP_PORT|g" \
        -e "s|@LMTP_PORT@|$LMTP_PORT|g" \
        -e "s|@PASSWORD@|$PASSWORD|g" \
        -e "s|@DEFAULT_DOMAIN@|$DEFAULT_DOMAIN|g" \
        "$TEMPLATE" >"$new" || die "cannot write $new"
    chmod 600 "$new"
    if [ -f "$DOVECOT_CONF" ] && cmp -s "$new" "$DOVECOT_CONF"; then
        rm -f "$new"
        return 1
    fi
    mv "$new" "$DOVECOT_CONF"
    return 0
}

stop_dovecot() {
    if dovecot_running; then
        say "stopping Dovecot"
        kill "$(cat "$DOVECOT_PID")" 2>/dev/null || true
        wait_until "$TIMEOUT" eval '! dovecot_running' ||
            die "Dovecot (pid $(cat "$DOVECOT_PID" 2>/dev/null)) did not stop within ${TIMEOUT}s"
    fi
    wait_until "$TIMEOUT" port_free "$IMAP_PORT" || die "port $IMAP_PORT still in use after Dovecot stopped"
    wait_until "$TIMEOUT" port_free "$LMTP_PORT" || die "port $LMTP_PORT still in use after Dovecot stopped"
}

start_dovecot() {
    mkdir -p "$STATE/run" "$STATE/lib" "$STATE/log" "$STATE/mail"
    chmod 755 "$STATE" "$STATE/run" "$STATE/lib" "$STATE/log"
    chown mail:mail "$STATE/mail"
    chmod 770 "$STATE/mail"
    local changed=
    write_dovecot_conf && changed=1
    if dovecot_running; then
        if [ -z "$changed" ] && imap_up && lmtp_up; then
            return 0
        fi
        stop_dovecot
    fi
    doveconf -c "$DOVECOT_CONF" -n >/dev/null || die "Dovecot rejects $DOVECOT_CONF (see above)"
    port_free "$IMAP_PORT" || die "port $IMAP_PORT is taken by another program (set KNOBELN_MAILSTACK_IMAP_PORT)"
    port_free "$LMTP_PORT" || die "port $LMTP_PORT is taken by another program (set KNOBELN_MAILSTACK_LMTP_PORT)"
    say "starting Dovecot (IMAP $HOST:$IMAP_PORT, LMTP $HOST:$LMTP_PORT)"
    # The daemons must not inherit our stdout/stderr (a caller reading our
    # output through a pipe would wait forever) nor the lock (fd 9).
    if ! dovecot -c "$DOVECOT_CONF" </dev/null >"$STATE/log/dovecot-start.out" 2>&1 9>&-; then
        cat "$STATE/log/dovecot-start.out" >&2
        show_logs
        die "Dovecot did not start"
    fi
}

# --- Postfix -----------------------------------------------------------------

postfix_running() { postfix status >/dev/null 2>&1; }

# Applies our settings; returns 0 when main.cf changed.
configure_postfix() {
    mkdir -p "$(dirname "$POSTFIX_LOG")"
    local before after
    before=$(postconf -n 2>/dev/null || true)
    postconf -e \
        "compatibility_level = 3.6" \
        "inet_interfaces = $HOST" \
        "inet_protocols = ipv4" \
        "myhostname = mail.$DEFAULT_DOMAIN" \
        "mydomain = $DEFAULT_DOMAIN" \
        "myorigin = \$mydomain" \
        "mydestination =" \
        "mynetworks = 127.0.0.0/8" \
        "relayhost =" \
        "smtpd_relay_restrictions = reject_unauth_destination" \
        "virtual_mailbox_domains = $DOMAINS" \
        "virtual_mailbox_maps = static:ok" \
        "virtual_transport = lmtp:inet:$HOST:$LMTP_PORT" \
        "local_header_rewrite_clients =" \
        "append_dot_mydomain = no" \
        "biff = no" \
        "smtputf8_enable = no" \
        "smtpd_tls_security_level = may" \
        "smtpd_tls_cert_file = /etc/ssl/certs/ssl-cert-snakeoil.pem" \
        "smtpd_tls_key_file = /etc/ssl/private/ssl-cert-snakeoil.key" \
        "message_size_limit = 10240000" \
        "queue_run_delay = 10s" \
        "minimal_backoff_time = 10s" \
        "maximal_backoff_time = 60s" \
        "maillog_file = $POSTFIX_LOG" || die "postconf -e failed"
    after=$(postconf -n) || die "postconf -n failed"
    [ "$before" != "$after" ]
}

stop_postfix() {
    if postfix_running; then
        say "stopping Postfix"
        postfix stop </dev/null >/dev/null 2>&1 9>&- || true
        wait_until "$TIMEOUT" eval '! postfix_running' || die "Postfix did not stop within ${TIMEOUT}s"
    fi
    wait_until "$TIMEOUT" port_free "$SMTP_PORT" || die "port $SMTP_PORT still in use after Postfix stopped"
}

start_postfix() {
    local changed=
    configure_postfix && changed=1
    if postfix_running; then
        if [ -z "$changed" ] && smtp_up; then
            return 0
        fi
        stop_postfix
    fi
    port_free "$SMTP_PORT" || die "port $SMTP_PORT is taken by another program (another MTA?)"
    postfix check || die "postfix check failed (see above)"
    say "starting Postfix (SMTP $HOST:$SMTP_PORT, domains: $DOMAINS)"
    if ! postfix start </dev/null >"$STATE/log/postfix-start.out" 2>&1 9>&-; then
        cat "$STATE/log/postfix-start.out" >&2
        show_logs
        die "Postfix did not start"
    fi
}

# --- commands ----------------------------------------------------------------

# lock SECONDS: one mailstack.sh at a time changes the stack.
lock() {
    mkdir -p "$STATE"
    exec 9>"$STATE/.lock"
    flock -w "$1" 9 || die "another mailstack.sh holds $STATE/.lock"
}

cmd_start() {
    need_root
    mkdir -p "$STATE"
    chmod 755 "$STATE"
    check_path_traversable
    lock 900
    install_missing
    start_dovecot
    start_postfix
    if ! wait_until "$TIMEOUT" imap_up || ! wait_until "$TIMEOUT" lmtp_up; then
        show_logs
        die "Dovecot does not answer on $HOST:$IMAP_PORT (IMAP) / $HOST:$LMTP_PORT (LMTP) after ${TIMEOUT}s"
    fi
    if ! wait_until "$TIMEOUT" smtp_up; then
        show_logs
        die "Postfix does not answer on $HOST:$SMTP_PORT after ${TIMEOUT}s"
    fi
    say "running: SMTP $HOST:$SMTP_PORT, IMAP $HOST:$IMAP_PORT (password \"$PASSWORD\"), state in $STATE"
}

cmd_stop() {
    need_root
    lock "$TIMEOUT"
    command -v dovecot >/dev/null && stop_dovecot
    command -v postfix >/dev/null && stop_postfix
    say "stopped"
}

cmd_status() {
    local ok=0
    if imap_up; then say "IMAP $HOST:$IMAP_PORT answers"; else
        say "IMAP $HOST:$IMAP_PORT does not answer"
        ok=1
    fi
    if lmtp_up; then say "LMTP $HOST:$LMTP_PORT answers"; else
        say "LMTP $HOST:$LMTP_PORT does not answer"
        ok=1
    fi
    if smtp_up; then say "SMTP $HOST:$SMTP_PORT answers"; else
        say "SMTP $HOST:$SMTP_PORT does not answer"
        ok=1
    fi
    return $ok
}

cmd_env() {
    cat <<EOF
export KNOBELN_MAILSTACK_DIR=$STATE
export KNOBELN_TEST_MAIL_HOST=$HOST
export KNOBELN_TEST_IMAP_PORT=$IMAP_PORT
export KNOBELN_TEST_LMTP_PORT=$LMTP_PORT
export KNOBELN_TEST_SMTP_PORT=$SMTP_PORT
export KNOBELN_TEST_MAIL_PASSWORD=$PASSWORD
export KNOBELN_TEST_MAIL_DOMAINS="$DOMAINS"
EOF
}

case "${1:-}" in
start) cmd_start ;;
stop) cmd_stop ;;
status) cmd_status ;;
env) cmd_env ;;
logs) show_logs 2>&1 ;;
*)
    sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
