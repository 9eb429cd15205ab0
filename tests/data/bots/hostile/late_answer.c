/* Answers ECHO x with x, each 20 ms after it was asked (asleep, no CPU):
   after the referee's first look at a simultaneous move (5 ms), so that
   it is frozen at its answer while its opponent still thinks. */
#include <stdio.h>
#include <string.h>
#include <time.h>

int main(void) {
    char line[256];
    while (fgets(line, sizeof line, stdin)) {
        if (strncmp(line, "END", 3) == 0) return 0;
        int x = 0;
        sscanf(line, "ECHO %d", &x);
        struct timespec t = {0, 20 * 1000 * 1000};
        nanosleep(&t, NULL);
        printf("%d\n", x);
        fflush(stdout);
    }
    return 0;
}
