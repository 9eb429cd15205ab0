# Network: connects to the outside and to loopback.
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
    for family, addr in [(socket.AF_INET, ("1.1.1.1", 53)), (socket.AF_INET, ("127.0.0.1", 25)),
                         (socket.AF_INET6, ("::1", 25))]:
        try:
            s = socket.socket(family, socket.SOCK_STREAM)
        except OSError:
            continue
        try:
            s.settimeout(1)
            s.connect(addr)
            escaped("connected to %s" % (addr,))
        except OSError:
            escaped("made a socket of family %d" % family)


round_no = 0
for line in sys.stdin:
    if line.startswith("END"):
        break
    round_no += 1
    if round_no == 3:
        attack()
    print(line.split()[1], flush=True)
