/* Attacks its own program, which the server runs from a sealed in-memory
   copy shared by all matches of the program: writes it, truncates it,
   takes its execute bits, and looks for a descriptor left open to it. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

/* Plays echo; attacks once, in round 3. A success is reported as a line
   "ESCAPED ..." (which the referee then shows as the offending line). */
static void escaped(const char *what) {
    printf("ESCAPED %s\n", what);
    fflush(stdout);
    exit(0);
}

static void attack(void) {
    int fd = open("/proc/self/exe", O_WRONLY);
    if (fd >= 0) {
        if (write(fd, "X", 1) == 1) escaped("wrote its program");
        if (ftruncate(fd, 0) == 0) escaped("truncated its program");
        close(fd);
    }
    fd = open("/proc/self/exe", O_RDONLY);
    if (fd >= 0) {
        if (ftruncate(fd, 0) == 0) escaped("truncated its program");
        close(fd);
    }
    /* Refused, or undone before the next bot of this program starts. */
    chmod("/proc/self/exe", 0);
    for (int d = 3; d < 1024; d++)
        if (fcntl(d, F_GETFD) != -1) escaped("a descriptor left open");
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
