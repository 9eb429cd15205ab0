/* Thread bomb: in round 3 starts threads (small stacks, so that the
   address space is not what stops it) until the kernel refuses one, at
   most 2000, and says on its standard error how many it started and why
   the next was refused: "threads: N, then <error>". Plays echo. A
   thread is a task the kernel counts as a process (RLIMIT_NPROC, a
   control group's pids.max): more than 40 is an escape. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void escaped(const char *what) {
    printf("ESCAPED %s\n", what);
    fflush(stdout);
    exit(0);
}

static void *nap(void *arg) {
    (void)arg;
    for (;;) pause();
    return 0;
}

static void attack(void) {
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 16384);
    int n = 0, err = 0;
    for (; n < 2000; n++) {
        pthread_t t;
        err = pthread_create(&t, &attr, nap, 0);
        if (err) break;
    }
    fprintf(stderr, "threads: %d, then %s\n", n, err ? strerror(err) : "none refused");
    if (n > 40) escaped("started more than 40 threads");
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
