/* Watches the runtimes' files for other bots' use of them (issue 34): an
   inotify or fanotify watch on /usr would report every other bot's file
   use live, in its own match and in parallel ones (the opponent's
   language, a covert channel between colluders). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

/* Plays echo; attacks once, in round 3. A success is reported as a line
   "ESCAPED ..." (which the referee then shows as the offending line). */
static void escaped(const char *what) {
    printf("ESCAPED %s\n", what);
    fflush(stdout);
    exit(0);
}

static void attack(void) {
    long fd = syscall(SYS_inotify_init1, 0);
    if (fd >= 0) escaped("inotify_init1");
    fd = syscall(SYS_inotify_init);
    if (fd >= 0) escaped("inotify_init");
    fd = syscall(SYS_fanotify_init, 0, 0);
    if (fd >= 0) escaped("fanotify_init");
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
