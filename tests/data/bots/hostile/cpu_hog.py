# CPU hog: computes forever.
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
    x = 0
    while True:
        x += 1


round_no = 0
for line in sys.stdin:
    if line.startswith("END"):
        break
    round_no += 1
    if round_no == 3:
        attack()
    print(line.split()[1], flush=True)
