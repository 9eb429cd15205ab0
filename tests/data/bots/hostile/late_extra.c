/* A line nobody asked for, printed late: answers ECHO x with x, and after
   its first answer sleeps 300 ms and prints "extra" before reading on.
   Frozen while its opponent thinks, it prints that line only once thawed,
   in a later turn: the rule puts the failure in the turn of its answer. */
#include <stdio.h>
#include <string.h>
#include <time.h>

int main(void) {
    char line[256];
    int answers = 0;
    while (fgets(line, sizeof line, stdin)) {
        if (strncmp(line, "END", 3) == 0) return 0;
        int x = 0;
        sscanf(line, "ECHO %d", &x);
        printf("%d\n", x);
        fflush(stdout);
        if (++answers == 1) {
            struct timespec t = {0, 300 * 1000 * 1000};
            nanosleep(&t, NULL);
            printf("extra\n");
            fflush(stdout);
        }
    }
    return 0;
}
