# Fills /tmp and /work.
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
    block = b"7" * 65536
    for path in ["/tmp/fill", "/work/fill"]:
        total = 0
        try:
            with open(path, "wb", buffering=0) as f:
                while True:
                    total += f.write(block)
                    if total > 64 << 20:
                        escaped("wrote more than 64 MB into one folder")
        except OSError:
            pass


round_no = 0
for line in sys.stdin:
    if line.startswith("END"):
        break
    round_no += 1
    if round_no == 3:
        attack()
    print(line.split()[1], flush=True)
