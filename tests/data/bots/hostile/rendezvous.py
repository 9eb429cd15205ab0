# Rendezvous: two bots try to meet at an abstract AF_UNIX name.
# Plays echo; attacks once, in round 3. A success is reported as a line
# "ESCAPED ..." (which the referee then shows as the offending line).
import socket
import sys

NAME = "\0knobeln-rendezvous"
listener = None  # kept open for the rest of the match


def escaped(what):
    print("ESCAPED", what, flush=True)
    sys.exit(0)


def attack():
    global listener
    try:
        c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        c.connect(NAME)
        escaped("met another bot")
    except OSError:
        pass
    try:
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(NAME)
        listener.listen(4)
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
