/* Undoing its stop as one process (red team 21): where no control group
   counts a match's bot, it is one process, stopped by SIGSTOP while its
   opponent is waited for. From its second answer on, the bot keeps 12
   threads spinning and a POSIX timer that sends the process SIGCONT every
   millisecond, so that they would run on while the referee waits for
   the opponent. Plays echo otherwise. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static void on_cont(int sig) { (void)sig; }

static void *spin(void *arg) {
    (void)arg;
    volatile unsigned long n = 0;
    for (;;) n++;
    return 0;
}

int main(void) {
    char line[256];
    int round = 0;
    while (fgets(line, sizeof line, stdin)) {
        if (strncmp(line, "END", 3) == 0) return 0;
        int x = 0;
        sscanf(line, "ECHO %d", &x);
        printf("%d\n", x);
        fflush(stdout);
        if (++round == 2) {
            /* Handled, not ignored: the kernel parks the timer of an
               ignored signal instead of sending it. */
            signal(SIGCONT, on_cont);
            struct sigevent ev;
            memset(&ev, 0, sizeof ev);
            ev.sigev_notify = SIGEV_SIGNAL;
            ev.sigev_signo = SIGCONT;
            timer_t t;
            if (timer_create(CLOCK_MONOTONIC, &ev, &t) == 0) {
                struct itimerspec every = {{0, 1000000}, {0, 1000000}};
                timer_settime(t, 0, &every, 0);
            } else {
                fprintf(stderr, "timer refused\n");
            }
            for (int i = 0; i < 12; i++) {
                pthread_t th;
                if (pthread_create(&th, 0, spin, 0) != 0) {
                    fprintf(stderr, "thread %d refused\n", i);
                    break;
                }
            }
        }
    }
    return 0;
}
