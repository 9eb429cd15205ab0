/* Page-cache probes: tries to tell whether pages of a file of the host's
   /usr are cached without reading them (preadv2 with RWF_NOWAIT, mincore
   on a mapping, cachestat), to drop them from the cache for everyone
   (posix_fadvise DONTNEED), and to load them without reading
   (readahead). Each call must fail; a success is reported as
   "ESCAPED ...". Plays echo; attacks in round 3. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#ifndef RWF_NOWAIT
#define RWF_NOWAIT 0x00000008
#endif
#ifndef SYS_cachestat
#define SYS_cachestat 451
#endif

static void escaped(const char *what) {
    printf("ESCAPED %s\n", what);
    fflush(stdout);
    exit(0);
}

static void attack(void) {
    const char *file = "/usr/lib/x86_64-linux-gnu/libc.so.6";
    int fd = open(file, O_RDONLY);
    if (fd < 0) escaped("could not open libc (test broken)");
    char buf[4096];
    struct iovec iov = {buf, sizeof buf};
    if (preadv2(fd, &iov, 1, 0, RWF_NOWAIT) >= 0) escaped("preadv2 with RWF_NOWAIT");
    if (syscall(SYS_preadv2, fd, &iov, 1, 0, 0, RWF_NOWAIT) >= 0)
        escaped("the preadv2 system call");
    void *map = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
    if (map != MAP_FAILED) {
        unsigned char vec[1];
        if (mincore(map, 4096, vec) == 0) escaped("mincore");
        munmap(map, 4096);
    }
    struct { unsigned long off, len; } range = {0, 4096};
    unsigned long stat[8] = {0};
    if (syscall(SYS_cachestat, fd, &range, stat, 0) == 0) escaped("cachestat");
    if (posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0) escaped("fadvise DONTNEED");
    if (readahead(fd, 0, 4096) == 0) escaped("readahead");
    close(fd);
}

int main(void) {
    char line[256];
    int round = 0;
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
