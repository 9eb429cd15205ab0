/* An honest bot that thinks: answers ECHO x with x after computing 200 ms
   of CPU time (its own, measured with CLOCK_PROCESS_CPUTIME_ID; "ECHO x MS"
   asks for MS instead), and says in its answer how much wall clock that
   took: "x WALL_MS". Leaves at END. */
#include <stdio.h>
#include <string.h>
#include <time.h>

static double now(clockid_t c) {
    struct timespec t;
    clock_gettime(c, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

int main(void) {
    char line[256];
    volatile unsigned long sink = 0;
    while (fgets(line, sizeof line, stdin)) {
        if (strncmp(line, "END", 3) == 0) return 0;
        int x;
        double think = 200.0;
        if (sscanf(line, "ECHO %d %lf", &x, &think) < 1) continue;
        double cpu0 = now(CLOCK_PROCESS_CPUTIME_ID), wall0 = now(CLOCK_MONOTONIC);
        while (now(CLOCK_PROCESS_CPUTIME_ID) - cpu0 < think)
            for (int i = 0; i < 10000; i++) sink += i;
        printf("%d %.0f\n", x, now(CLOCK_MONOTONIC) - wall0);
        fflush(stdout);
    }
    return 0;
}
