# Leaves a daemon behind: double fork, new session, exec sleep 4711.913.
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
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            for fd in (0, 1, 2):
                os.close(fd)
            os.execv("/usr/bin/sleep", ["sleep", "4711.913"])
        os._exit(0)


round_no = 0
for line in sys.stdin:
    if line.startswith("END"):
        break
    round_no += 1
    if round_no == 3:
        attack()
    print(line.split()[1], flush=True)
