/* Ultimatum demo bot "simple": offers half of the pot every time and
 * accepts every offer (something is better than nothing).
 * Protocol: freiesMagazin 2011 (RUNDEN, RUNDE, START, ANGEBOT, JA/NEIN,
 * PUNKTE, ENDE), one line each on standard input and output. */
#include <stdio.h>
#include <string.h>

int main(void) {
    char line[256];
    while (fgets(line, sizeof line, stdin)) {
        if (strncmp(line, "START", 5) == 0) {
            printf("500\n");
            fflush(stdout);
        } else if (strncmp(line, "ANGEBOT", 7) == 0) {
            printf("JA\n");
            fflush(stdout);
        } else if (strncmp(line, "ENDE", 4) == 0) {
            break;
        }
    }
    return 0;
}
