# Reads the process table: any process but its own is an escape.
# Plays echo; attacks once, in round 3. A success is reported as a line
# "ESCAPED ..." (which the referee then shows as the offending line).
import os
import socket
import sys
import time


def escaped(what):
    print("ESCAPED", what, flush=True)
    sys.exit(0)


def attack():
    me = os.getpid()
    # A bot has no /proc at all (nothing to list is no escape).
    table = os.listdir("/proc") if os.path.isdir("/proc") else []
    others = [p for p in table if p.isdigit() and int(p) not in (me, 1)]
    if others:
        escaped("saw other processes in /proc: " + " ".join(others))
    # PID 1 is its init, which started it.
    if me != 2:
        escaped("is not its init's child in its own namespace")


round_no = 0
for line in sys.stdin:
    if line.startswith("END"):
        break
    round_no += 1
    if round_no == 3:
        attack()
    print(line.split()[1], flush=True)
