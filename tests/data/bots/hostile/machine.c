/* Figures of the machine (issue 34): a bot must read none. Tries the
   per-process /proc files that show the host (/proc/self/net/sockstat:
   the host's TCP counters; /proc/self/mountinfo: its block device and
   mount options), sysinfo (memory, load, process count), and checks that
   /usr, the C library and /dev/null all come from one tmpfs (the runtime
   image, in memory: no host disk to statfs, no page cache to time).
   Plays echo; attacks in round 3. A success is reported as a line
   "ESCAPED ...". */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <sys/vfs.h>
#include <unistd.h>

#define TMPFS_MAGIC 0x01021994

static void escaped(const char *what) {
    printf("ESCAPED %s\n", what);
    fflush(stdout);
    exit(0);
}

static void attack(void) {
    const char *machine[] = {"/proc/self/net/sockstat", "/proc/self/mountinfo",
                             "/proc/net/sockstat", "/proc/meminfo", "/proc/loadavg",
                             "/proc/self/net/dev", "/sys/fs/cgroup", 0};
    for (int i = 0; machine[i]; i++) {
        int fd = open(machine[i], O_RDONLY);
        if (fd >= 0) {
            char what[128];
            snprintf(what, sizeof what, "opened %s", machine[i]);
            escaped(what);
        }
    }
    struct sysinfo si;
    if (sysinfo(&si) == 0) escaped("sysinfo told the machine's memory and load");
    /* A device's inode is every bot's: its times must not be ours to set. */
    if (utimensat(AT_FDCWD, "/dev/null", 0, 0) == 0)
        escaped("set the times of /dev/null, which every bot can read");
    /* Where the files come from. */
    const char *mine[] = {"/usr", "/usr/bin", "/dev/null", "/dev/urandom", 0};
    struct stat first;
    if (stat("/usr", &first) != 0) escaped("no /usr at all?");
    for (int i = 0; mine[i]; i++) {
        struct statfs fs;
        struct stat st;
        if (statfs(mine[i], &fs) != 0 || stat(mine[i], &st) != 0) continue;
        char what[160];
        if (fs.f_type != TMPFS_MAGIC) {
            snprintf(what, sizeof what, "%s is on a host file system (type %lx)", mine[i],
                     (unsigned long)fs.f_type);
            escaped(what);
        }
        if (st.st_dev != first.st_dev) {
            snprintf(what, sizeof what, "%s is not in the runtime image", mine[i]);
            escaped(what);
        }
    }
    /* Every library this program runs with: in the image too. */
    FILE *maps = fopen("/proc/self/maps", "r");
    if (maps) escaped("opened /proc/self/maps");
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
