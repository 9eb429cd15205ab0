/* Starving the opponent: from its second answer on, the bot leaves 30
   processes behind that spin forever (the native bots' process limit is
   32), so that its opponent, thinking on the same CPUs, would get a
   thirty-first of them. It also tries to leave the CPU it was given. Plays
   echo otherwise; a success is reported as "ESCAPED ...". */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(void) {
    char line[256];
    int round = 0;
    cpu_set_t all;
    CPU_ZERO(&all);
    for (int c = 0; c < CPU_SETSIZE; c++) CPU_SET(c, &all);
    if (sched_setaffinity(0, sizeof all, &all) == 0) {
        cpu_set_t now;
        if (sched_getaffinity(0, sizeof now, &now) == 0 && CPU_COUNT(&now) > 1) {
            printf("ESCAPED left its CPU\n");
            fflush(stdout);
            return 0;
        }
    }
    while (fgets(line, sizeof line, stdin)) {
        if (strncmp(line, "END", 3) == 0) return 0;
        int x = 0;
        sscanf(line, "ECHO %d", &x);
        printf("%d\n", x);
        fflush(stdout);
        if (++round == 2) {
            for (int i = 0; i < 30; i++) {
                if (fork() == 0) {
                    volatile unsigned long n = 0;
                    for (;;) n++;
                }
            }
        }
    }
    return 0;
}
