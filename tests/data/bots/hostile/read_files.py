# Reads files of the host: /etc/passwd, /root, /home, the host /tmp.
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
    for f in ["/etc/passwd", "/etc/shadow", "/proc/1/root/etc/passwd", "/root/.bashrc"]:
        try:
            open(f).read()
            escaped(f)
        except OSError:
            pass
    for d in ["/home", "/root", "/etc", "/var", "/run"]:
        try:
            os.listdir(d)
            escaped(d)
        except OSError:
            pass
    if os.listdir("/tmp"):
        escaped("saw a file in /tmp it did not make")


round_no = 0
for line in sys.stdin:
    if line.startswith("END"):
        break
    round_no += 1
    if round_no == 3:
        attack()
    print(line.split()[1], flush=True)
