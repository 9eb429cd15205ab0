/* Echo bot in C: answers ECHO x with x, leaves at END. */
#include <stdio.h>
#include <string.h>

int main(void) {
    char line[256];
    while (fgets(line, sizeof line, stdin)) {
        if (strncmp(line, "END", 3) == 0) return 0;
        int x;
        if (sscanf(line, "ECHO %d", &x) == 1) {
            printf("%d\n", x);
            fflush(stdout);
        }
    }
    return 0;
}
