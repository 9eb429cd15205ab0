/* Undoing its stop (issue 34): on cgroup v1 the referee stops a bot that
   is not on turn with SIGSTOP, which SIGCONT undoes. From its second
   answer on, the bot leaves 30 processes behind that spin forever, each
   with a POSIX timer that sends it SIGCONT every millisecond, so that
   they keep running while the referee waits for the opponent. Plays echo
   otherwise. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void on_cont(int sig) { (void)sig; }

static void spin_resuming_itself(void) {
    /* Handled, not ignored: the kernel parks the timer of an ignored
       signal instead of sending it. */
    signal(SIGCONT, on_cont);
    struct sigevent ev;
    memset(&ev, 0, sizeof ev);
    ev.sigev_notify = SIGEV_SIGNAL;
    ev.sigev_signo = SIGCONT;
    timer_t t;
    if (timer_create(CLOCK_MONOTONIC, &ev, &t) == 0) {
        struct itimerspec every = {{0, 1000000}, {0, 1000000}};
        timer_settime(t, 0, &every, 0);
    }
    volatile unsigned long sink = 0;
    for (;;) sink++;
}

int main(void) {
    char line[256];
    int round = 0;
    while (fgets(line, sizeof line, stdin)) {
        if (strncmp(line, "END", 3) == 0) return 0;
        int x = 0;
        sscanf(line, "ECHO %d", &x);
        if (++round == 2)
            for (int i = 0; i < 30; i++)
                if (fork() == 0) spin_resuming_itself();
        printf("%d\n", x);
        fflush(stdout);
    }
    return 0;
}
