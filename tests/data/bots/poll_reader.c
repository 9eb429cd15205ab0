/* An honest bot that waits for its input in poll(2) before it reads it
   (as event loops do): echo. Frozen while its opponent thinks, its poll
   is interrupted and the kernel goes on with it as restart_syscall, which
   /proc names as it names a sleep going on; the referee tells the two
   apart by the thread's wchan (red team, issue 38: before, this bot never
   came to rest after a freeze, and failed "awake after answer"). */
#include <poll.h>
#include <stdio.h>
#include <string.h>

int main(void) {
    char line[256];
    for (;;) {
        struct pollfd p = {0, POLLIN, 0};
        if (poll(&p, 1, -1) < 0) continue;
        if (!fgets(line, sizeof line, stdin)) return 0;
        if (strncmp(line, "END", 3) == 0) return 0;
        int x = 0;
        sscanf(line, "ECHO %d", &x);
        printf("%d\n", x);
        fflush(stdout);
    }
}
