/* Red team (held once a thread shows T): from its second answer on, the
   bot keeps itself in its OWN group stop most of the time (its spinning
   threads tgkill themselves SIGSTOP every ~0.3 ms of CPU) and resumes
   itself with a timer's SIGCONT every millisecond, which also flushes
   the referee's pending SIGSTOP. /proc shows T almost always, so `held`
   reports Held at once, while the bot runs in bursts all through the
   opponent's turn. Plays echo otherwise. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

static void on_cont(int sig) { (void)sig; }

static double now_cpu(void) { struct timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); return t.tv_sec + t.tv_nsec * 1e-9; }

static void *spin(void *arg) {
    (void)arg;
    pid_t pid = getpid(), tid = syscall(SYS_gettid);
    for (;;) {
        double s = now_cpu();
        volatile unsigned long n = 0;
        while (now_cpu() - s < 0.0003) n++;
        syscall(SYS_tgkill, pid, tid, SIGSTOP);
    }
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
            signal(SIGCONT, on_cont);
            struct sigevent ev;
            memset(&ev, 0, sizeof ev);
            ev.sigev_notify = SIGEV_SIGNAL;
            ev.sigev_signo = SIGCONT;
            timer_t t;
            if (timer_create(CLOCK_MONOTONIC, &ev, &t) == 0) {
                struct itimerspec every = {{0, 1000000}, {0, 1000000}};
                timer_settime(t, 0, &every, 0);
            } else fprintf(stderr, "timer refused\n");
            for (int i = 0; i < 4; i++) {
                pthread_t th;
                if (pthread_create(&th, 0, spin, 0) != 0) { fprintf(stderr, "thread refused\n"); break; }
            }
        }
    }
    return 0;
}
