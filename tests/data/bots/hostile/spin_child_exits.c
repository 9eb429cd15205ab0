/* CPU in a child that ends unreaped: the bot ignores SIGCHLD (so the
   kernel reaps its children itself when they end, their CPU added to no
   one's), and in round 3 starts a child that computes for 1.5 s of CPU
   time, past the match's limit, and ends; the bot itself computes
   nothing. Where the fork is refused it says so on its standard error and
   plays on. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double cpu_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void attack(void) {
    signal(SIGCHLD, SIG_IGN);
    pid_t pid = fork();
    if (pid == 0) {
        volatile unsigned long x = 0;
        while (cpu_seconds() < 1.5)
            for (int i = 0; i < 100000; i++) x++;
        _exit(0);
    }
    if (pid < 0) {
        fprintf(stderr, "fork refused: %s\n", strerror(errno));
        fflush(stderr);
    }
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
