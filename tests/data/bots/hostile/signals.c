/* Signals: tries to signal everything around it and to find a terminal. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Plays echo; attacks once, in round 3. A success is reported as a line
   "ESCAPED ..." (which the referee then shows as the offending line). */
static void escaped(const char *what) {
    printf("ESCAPED %s\n", what);
    fflush(stdout);
    exit(0);
}

static void attack(void) {
    signal(SIGTERM, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    /* kill(0, ...) reaches the caller's process group: it must be the
       bot's own (its init's, PID 1, which the kernel keeps from every
       signal the bot sends), not the server's. */
    if (getpgid(0) != 1) escaped("shares a process group");
    if (getppid() != 1) escaped("sees a parent but its init");
    kill(0, SIGTERM);
    kill(-1, SIGTERM); /* everything it may signal */
    kill(-1, SIGHUP);
    if (open("/dev/tty", O_RDWR) >= 0) escaped("opened /dev/tty");
    if (isatty(0) || isatty(1) || isatty(2)) escaped("has a terminal");
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
