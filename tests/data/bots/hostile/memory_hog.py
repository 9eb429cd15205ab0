# Memory hog: allocates and touches memory until it is stopped.
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
    blocks = []
    try:
        while True:
            blocks.append(b"x" * (1 << 20))
            if len(blocks) > 2048:
                escaped("touched 2 GB")
    except MemoryError:
        blocks = None


round_no = 0
for line in sys.stdin:
    if line.startswith("END"):
        break
    round_no += 1
    if round_no == 3:
        attack()
    print(line.split()[1], flush=True)
