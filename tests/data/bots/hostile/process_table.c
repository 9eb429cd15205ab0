/* Reads the process table: any process but its own is an escape. */
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
    pid_t me = getpid();
    DIR *d = opendir("/proc");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        int pid = atoi(e->d_name);
        if (pid > 0 && pid != me && pid != 1) escaped("saw another process in /proc");
    }
    /* PID 1 is its init, which started it. */
    if (me != 2) escaped("is not its init's child in its own namespace");
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
