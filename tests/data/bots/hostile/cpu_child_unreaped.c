/* CPU in a child nobody reaps: the bot ignores SIGCHLD (so the kernel
   would reap its children at their end, their CPU added to no one's) and
   answers at once while the child it started computes. Where the fork is
   refused it says so on its standard error and plays on. */
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
    signal(SIGCHLD, SIG_IGN);
    pid_t pid = fork();
    if (pid == 0) {
        volatile unsigned long x = 0;
        for (;;) x++;
    }
    if (pid < 0) {
        fprintf(stderr, "fork refused: %s\n", strerror(errno));
        fflush(stderr);
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
