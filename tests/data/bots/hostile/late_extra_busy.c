/* A line nobody asked for, printed after work in the kernel: answers
   ECHO x with x, and after its first answer spends 300 ms in system calls
   (getrandom over 64 KiB, again and again) before it prints "extra" and
   reads on. Frozen (or stopped) while its opponent thinks, it is held at
   the end of one of those calls, and there its /proc syscall file names
   the call as if it were blocked in it: a bot that only looks at rest. */
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

int main(void) {
    static char buf[65536];
    char line[256];
    int answers = 0;
    while (fgets(line, sizeof line, stdin)) {
        if (strncmp(line, "END", 3) == 0) return 0;
        int x = 0;
        sscanf(line, "ECHO %d", &x);
        printf("%d\n", x);
        fflush(stdout);
        if (++answers == 1) {
            double until = now() + 0.3;
            while (now() < until) getrandom(buf, sizeof buf, 0);
            printf("extra\n");
            fflush(stdout);
        }
    }
    return 0;
}
