/* Takes long to come to rest (issue 34): after every answer its main
   thread naps 2000 times for 100 us before it reads again, beside thirty
   threads in short sleeps, so the referee's look for lines nobody asked
   for finds a thread that will run again by itself for a quarter of a
   second, each look reading 31 threads' files. Plays echo honestly; the
   look must cost the server a bounded amount per answer all the same. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static void *nap(void *arg) {
    (void)arg;
    struct timespec t = {0, 100000};
    for (;;) nanosleep(&t, 0);
    return 0;
}

int main(void) {
    pthread_t t;
    for (int i = 0; i < 30; i++) pthread_create(&t, 0, nap, 0);
    char line[256];
    while (fgets(line, sizeof line, stdin)) {
        if (strncmp(line, "END", 3) == 0) return 0;
        int x = 0;
        sscanf(line, "ECHO %d", &x);
        printf("%d\n", x);
        fflush(stdout);
        struct timespec t = {0, 100000};
        for (int i = 0; i < 2000; i++) nanosleep(&t, 0);
    }
    return 0;
}
