/* Stderr flood: writes 64 kB of control bytes and invalid UTF-8 to its
   standard error every round, to grow every stored record of its games. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(void) {
    char line[256], junk[65536];
    int i;
    for (i = 0; i < (int)sizeof junk; i++)
        junk[i] = (char)(i % 2 ? 0x01 + i % 30 : 0xff);
    while (fgets(line, sizeof line, stdin)) {
        if (strncmp(line, "END", 3) == 0) return 0;
        (void)!write(2, junk, sizeof junk);
        int x = 0;
        sscanf(line, "ECHO %d", &x);
        printf("%d\n", x);
        fflush(stdout);
    }
    return 0;
}
