/* Real time: tries to give itself a real-time scheduling policy or a
   higher priority than its opponent's (to starve it), and looks at its
   limits for either. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* Plays echo; attacks once, in round 3. A success is reported as a line
   "ESCAPED ..." (which the referee then shows as the offending line). */
static void escaped(const char *what) {
    printf("ESCAPED %s\n", what);
    fflush(stdout);
    exit(0);
}

static void attack(void) {
    struct sched_param p;
    struct rlimit r;
    p.sched_priority = 1;
    if (sched_setscheduler(0, SCHED_FIFO, &p) == 0) escaped("got SCHED_FIFO");
    if (sched_setscheduler(0, SCHED_RR, &p) == 0) escaped("got SCHED_RR");
    if (setpriority(PRIO_PROCESS, 0, -5) == 0) escaped("raised its priority");
    if (getrlimit(RLIMIT_RTPRIO, &r) == 0 && (r.rlim_cur != 0 || r.rlim_max != 0))
        escaped("may use real-time priorities");
    if (getrlimit(RLIMIT_NICE, &r) == 0 && (r.rlim_cur != 0 || r.rlim_max != 0))
        escaped("may raise its priority");
}

int main(void) {
    char line[256];
    int round = 0;
    while (fgets(line, sizeof line, stdin)) {
        if (strncmp(line, "END", 3) == 0) return 0;
        if (++round == 3) attack();
        int x = 0;
        sscanf(line, "ECHO %d", &x);
        printf("%d\n", x);
        fflush(stdout);
    }
    return 0;
}
