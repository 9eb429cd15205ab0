# Signals: tries to signal everything around it and to find a terminal.
# Plays echo; attacks once, in round 3. A success is reported as a line
# "ESCAPED ..." (which the referee then shows as the offending line).
import os
import signal
import sys


def escaped(what):
    print("ESCAPED", what, flush=True)
    sys.exit(0)


def attack():
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    # kill(0, ...) reaches the caller's process group: it must be the
    # bot's own (its init's, PID 1, which the kernel keeps from every
    # signal the bot sends), not the server's.
    if os.getpgid(0) != 1:
        escaped("shares a process group")
    if os.getppid() != 1:
        escaped("sees a parent but its init")
    os.kill(0, signal.SIGTERM)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        try:
            os.kill(-1, sig)  # everything it may signal
        except OSError:
            pass
    try:
        open("/dev/tty", "r+b")
        escaped("opened /dev/tty")
    except OSError:
        pass
    if any(os.isatty(fd) for fd in (0, 1, 2)):
        escaped("has a terminal")


round_no = 0
for line in sys.stdin:
    if line.startswith("END"):
        break
    round_no += 1
    if round_no == 3:
        attack()
    print(line.split()[1], flush=True)
