/* Ultimatum demo bot "probe": starts by offering 300 and learns from the
 * answers: an accepted offer is lowered by 5 (not below 100), a rejected
 * one raised by 20 (not above 500). It accepts every offer of at least
 * 150, and lower ones only while the opponent accepts its own offers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
    char line[256];
    int offer = 300;
    int last_accepted = 1;
    while (fgets(line, sizeof line, stdin)) {
        if (strncmp(line, "START", 5) == 0) {
            printf("%d\n", offer);
            fflush(stdout);
        } else if (strncmp(line, "ANGEBOT ", 8) == 0) {
            int x = atoi(line + 8);
            printf((x >= 150 || (last_accepted && x >= 50)) ? "JA\n" : "NEIN\n");
            fflush(stdout);
        } else if (strncmp(line, "JA", 2) == 0) {
            last_accepted = 1;
            offer = offer - 5 < 100 ? 100 : offer - 5;
        } else if (strncmp(line, "NEIN", 4) == 0) {
            last_accepted = 0;
            offer = offer + 20 > 500 ? 500 : offer + 20;
        } else if (strncmp(line, "ENDE", 4) == 0) {
            break;
        }
    }
    return 0;
}
