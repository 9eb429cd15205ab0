/* Reads files of the host: /etc/passwd, /root, /home, the host /tmp. */
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
    const char *files[] = {"/etc/passwd", "/etc/shadow", "/proc/1/root/etc/passwd",
                           "/root/.bashrc", "/proc/self/root/etc/hostname", 0};
    for (int i = 0; files[i]; i++)
        if (open(files[i], O_RDONLY) >= 0) escaped(files[i]);
    const char *dirs[] = {"/home", "/root", "/etc", "/var", "/run", 0};
    for (int i = 0; dirs[i]; i++)
        if (opendir(dirs[i])) escaped(dirs[i]);
    DIR *d = opendir("/tmp");
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (e->d_name[0] != 0x2e) escaped("saw a file in /tmp it did not make");
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
