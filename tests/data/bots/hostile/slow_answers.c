/* Sleeps half a second before every answer (issue 34): no answer takes
   long enough for the reply's wall backstop and almost no CPU, but a
   2500-round match would last hours. The match's budget of waiting ends
   it. */
#include <stdio.h>
#include <string.h>
#include <time.h>

int main(void) {
    char line[256];
    while (fgets(line, sizeof line, stdin)) {
        if (strncmp(line, "END", 3) == 0) return 0;
        int x = 0;
        sscanf(line, "ECHO %d", &x);
        struct timespec t = {0, 500000000};
        nanosleep(&t, 0);
        printf("%d\n", x);
        fflush(stdout);
    }
    return 0;
}
