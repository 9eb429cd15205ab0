/* A CPU hog that first names itself in bytes that are no UTF-8 and hold
   ") ", as a process may (prctl PR_SET_NAME: any bytes but NUL), so that
   a reader of its /proc/PID/stat as UTF-8 text, or up to the first ')',
   reads nothing. Then, in round 3, computes forever. */
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>

static void attack(void) {
    volatile unsigned long x = 0;
    for (;;) x++;
}

int main(void) {
    char line[256];
    int round = 0;
    prctl(PR_SET_NAME, "\xff) 0 0 \xfe", 0, 0, 0);
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
