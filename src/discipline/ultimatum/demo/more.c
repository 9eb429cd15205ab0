/* Ultimatum demo bot "more": offers 499 and accepts only offers of more
 * than 500, so it can never get less than its opponent in a match, and
 * still often ends up with fewer points than the generous bots. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
    char line[256];
    while (fgets(line, sizeof line, stdin)) {
        if (strncmp(line, "START", 5) == 0) {
            printf("499\n");
        } else if (strncmp(line, "ANGEBOT ", 8) == 0) {
            int x = atoi(line + 8);
            printf(x > 500 ? "JA\n" : "NEIN\n");
        } else if (strncmp(line, "ENDE", 4) == 0) {
            break;
        } else {
            continue;
        }
        fflush(stdout);
    }
    return 0;
}
