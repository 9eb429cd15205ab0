/* Past its file size limit: one byte written far beyond the limit of the
   match (`RLIMIT_FSIZE`, the match's disk size: a few MiB). An ordinary
   process is ended by SIGXFSZ there; one that only sees the write fail
   (EFBIG) and goes on says so. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/types.h>
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
    int fd = open("/tmp/big", O_WRONLY | O_CREAT, 0644);
    if (fd < 0) return;
    if (pwrite(fd, "x", 1, (off_t)64 << 20) < 0 && errno == EFBIG)
        escaped("a write past the file size limit only failed with EFBIG");
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
