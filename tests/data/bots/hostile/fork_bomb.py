# Fork bomb: forks until the kernel refuses.
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
    n = 0
    for _ in range(100000):
        try:
            pid = os.fork()
        except OSError:
            break
        if pid == 0:
            while True:
                time.sleep(1000)
        n += 1
    if n >= 40:
        escaped("forked more than 40 processes")


round_no = 0
for line in sys.stdin:
    if line.startswith("END"):
        break
    round_no += 1
    if round_no == 3:
        attack()
    print(line.split()[1], flush=True)
