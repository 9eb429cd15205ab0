/* Another bot's files: writes a marker, then looks for the other bot's. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
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
    char mine[64];
    snprintf(mine, sizeof mine, "mine-%ld", (long)getpid() ^ (long)time(0) ^ (long)&mine);
    char path[128];
    snprintf(path, sizeof path, "/tmp/%s", mine);
    FILE *f = fopen(path, "w");
    if (f) { fputs("secret", f); fclose(f); }
    snprintf(path, sizeof path, "/work/%s", mine);
    f = fopen(path, "w");
    if (f) { fputs("secret", f); fclose(f); }
    sleep(1); /* the other bot writes its markers meanwhile */
    const char *dirs[] = {"/tmp", "/work", 0};
    for (int i = 0; dirs[i]; i++) {
        DIR *d = opendir(dirs[i]);
        struct dirent *e;
        while (d && (e = readdir(d)))
            if (e->d_name[0] != 0x2e && strcmp(e->d_name, mine) != 0) escaped("found another bot file");
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
