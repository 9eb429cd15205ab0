# Real time: tries to give itself a real-time scheduling policy or a
# higher priority than its opponent's (to starve it), and looks at its
# limits for either.
# Plays echo; attacks once, in round 3. A success is reported as a line
# "ESCAPED ..." (which the referee then shows as the offending line).
import os
import resource
import sys


def escaped(what):
    print("ESCAPED", what, flush=True)
    sys.exit(0)


def attack():
    for policy, name in ((os.SCHED_FIFO, "SCHED_FIFO"), (os.SCHED_RR, "SCHED_RR")):
        try:
            os.sched_setscheduler(0, policy, os.sched_param(1))
            escaped("got " + name)
        except OSError:
            pass
    try:
        os.setpriority(os.PRIO_PROCESS, 0, -5)
        escaped("raised its priority")
    except OSError:
        pass
    if resource.getrlimit(resource.RLIMIT_RTPRIO) != (0, 0):
        escaped("may use real-time priorities")
    if resource.getrlimit(resource.RLIMIT_NICE) != (0, 0):
        escaped("may raise its priority")


round_no = 0
for line in sys.stdin:
    if line.startswith("END"):
        break
    round_no += 1
    if round_no == 3:
        attack()
    print(line.split()[1], flush=True)
