/* Fills /tmp and /work. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <netinet/in.h>
#include <arpa/inet.h>

/* Plays echo; attacks once, in round 3. A success is reported as a line
   "ESCAPED ..." (which the referee then shows as the offending line). */
static void escaped(const char *what) {
    printf("ESCAPED %s\n", what);
    fflush(stdout);
    exit(0);
}
static void attack(void);

static void attack(void) {
    static char block[1 << 16];
    /* The folders' sizes are tried here, not the file size limit (a file
       of exactly the size of /tmp meets both): its signal is ignored, as
       Python does, so a write past it fails with EFBIG. */
    signal(SIGXFSZ, SIG_IGN);
    memset(block, 7, sizeof block);
    const char *files[] = {"/tmp/fill", "/work/fill", 0};
    for (int i = 0; files[i]; i++) {
        int fd = open(files[i], O_WRONLY | O_CREAT, 0644);
        if (fd < 0) continue;
        long total = 0;
        for (;;) {
            ssize_t w = write(fd, block, sizeof block);
            if (w <= 0) break;
            total += w;
            if (total > (64L << 20)) escaped("wrote more than 64 MB into one folder");
        }
        close(fd);
    }
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
