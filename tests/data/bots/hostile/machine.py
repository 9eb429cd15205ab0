# Figures of the machine (issue 34): a bot must read none. Tries the
# per-process /proc files that show the host, and checks that the Python
# standard library, /usr and /dev/null all come from one tmpfs (the
# runtime image, in memory). Plays echo; attacks in round 3. A success is
# reported as a line "ESCAPED ...".
import os
import sys


def escaped(what):
    print("ESCAPED", what, flush=True)
    sys.exit(0)


def attack():
    for path in ["/proc/self/net/sockstat", "/proc/self/mountinfo",
                 "/proc/net/sockstat", "/proc/meminfo", "/proc/loadavg",
                 "/sys/fs/cgroup"]:
        try:
            with open(path, "rb"):
                escaped("opened " + path)
        except OSError:
            pass
    try:
        os.utime("/dev/null")
        escaped("set the times of /dev/null, which every bot can read")
    except OSError:
        pass
    usr = os.stat("/usr").st_dev
    for path in ["/usr/bin", "/dev/null", os.__file__, sys.executable]:
        if os.stat(path).st_dev != usr:
            escaped(path + " is not in the runtime image")
    try:
        free = os.statvfs(os.__file__).f_bfree
    except OSError:
        return
    # The host's root file system is much larger than any image; all the
    # same, the device check above is the one that counts.
    if os.stat(os.__file__).st_dev == os.stat("/tmp").st_dev:
        escaped("the standard library shares a file system with /tmp")
    del free


round_no = 0
for line in sys.stdin:
    if line.startswith("END"):
        break
    round_no += 1
    if round_no == 3:
        attack()
    print(line.split()[1], flush=True)
