# Watches the runtimes' files for other bots' use of them (issue 34): an
# inotify or fanotify watch on /usr would report every other bot's file
# use live. Plays echo; attacks once, in round 3. A success is reported as
# a line "ESCAPED ...".
import ctypes
import sys

libc = ctypes.CDLL(None, use_errno=True)


def escaped(what):
    print("ESCAPED", what, flush=True)
    sys.exit(0)


def attack():
    if libc.inotify_init1(0) >= 0:
        escaped("inotify_init1")
    if libc.inotify_init() >= 0:
        escaped("inotify_init")
    if libc.syscall(300, 0, 0) >= 0:  # fanotify_init on x86-64
        escaped("fanotify_init")


round_no = 0
for line in sys.stdin:
    if line.startswith("END"):
        break
    round_no += 1
    if round_no == 3:
        attack()
    print(line.split()[1], flush=True)
