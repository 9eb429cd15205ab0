/* Computes after its answer instead of reading on: answers ECHO x with x,
   and after its first answer computes 1.5 s of its own CPU time (three
   times a reply's limit in the test) before it prints "extra" and reads
   on. The referee's wait for it to come to rest was bounded by the wall
   clock: the line was caught on a quiet machine and read as the next
   answer on a loaded one. Bounded by its CPU time, it fails "busy after
   answer" in turn 1 at any load. */
#include <stdio.h>
#include <string.h>
#include <time.h>

static double cpu(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

int main(void) {
    char line[256];
    int answers = 0;
    volatile unsigned long spin = 0;
    while (fgets(line, sizeof line, stdin)) {
        if (strncmp(line, "END", 3) == 0) return 0;
        int x = 0;
        sscanf(line, "ECHO %d", &x);
        printf("%d\n", x);
        fflush(stdout);
        if (++answers == 1) {
            double until = cpu() + 1.5;
            while (cpu() < until) spin++;
            printf("extra\n");
            fflush(stdout);
        }
    }
    return 0;
}
