/* Starving the opponent with threads (red team 21): where no control
   group counts a match's bot, it may start no process (issue 38), but
   threads it may: from its second answer on, the bot keeps 12 threads
   spinning forever (as `nobody` the native bots' 16 tasks are counted
   against its user), so that its opponent, thinking on the same CPU,
   would get a thirteenth of it. Without a control group there is no freezer
   either: unless the referee stops the bot otherwise, the threads run
   while the opponent thinks. Plays echo otherwise. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

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
            for (int i = 0; i < 12; i++) {
                pthread_t t;
                if (pthread_create(&t, 0, spin, 0) != 0) {
                    fprintf(stderr, "thread %d refused\n", i);
                    break;
                }
            }
        }
    }
    return 0;
}
