# Another bot files: writes a marker, then looks for the other bot marker.
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
    mine = "mine-%d-%d" % (os.getpid(), time.time_ns())
    for d in ["/tmp", "/work"]:
        with open(os.path.join(d, mine), "w") as f:
            f.write("secret")
    time.sleep(1)
    for d in ["/tmp", "/work"]:
        for name in os.listdir(d):
            if name != mine:
                escaped("found another bot file " + name)


round_no = 0
for line in sys.stdin:
    if line.startswith("END"):
        break
    round_no += 1
    if round_no == 3:
        attack()
    print(line.split()[1], flush=True)
