/* Rendezvous: two bots try to meet at an abstract AF_UNIX name. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

/* Plays echo; attacks once, in round 3. A success is reported as a line
   "ESCAPED ..." (which the referee then shows as the offending line). */
static void escaped(const char *what) {
    printf("ESCAPED %s\n", what);
    fflush(stdout);
    exit(0);
}

static int listener = -1; /* kept open for the rest of the match */

static void attack(void) {
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    const char *name = "knobeln-rendezvous";
    memcpy(a.sun_path + 1, name, strlen(name));
    socklen_t len = (socklen_t)(sizeof a.sun_family + 1 + strlen(name));
    int c = socket(AF_UNIX, SOCK_STREAM, 0);
    if (c >= 0 && connect(c, (struct sockaddr *)&a, len) == 0) escaped("met another bot");
    listener = socket(AF_UNIX, SOCK_STREAM, 0);
    if (listener >= 0 && bind(listener, (struct sockaddr *)&a, len) == 0) listen(listener, 4);
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
