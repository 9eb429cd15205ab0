/* Flooding island demo bot "stand": like the seed's reference bot, it
 * stays where it is (three times GO CURRENT a round) until its field
 * sinks under it. */
#include <stdio.h>
#include <string.h>

int main(void) {
    char line[4096];
    while (fgets(line, sizeof line, stdin)) {
        if (strncmp(line, "ROUND ", 6) == 0) {
            printf("GO CURRENT\nGO CURRENT\nGO CURRENT\n");
            fflush(stdout);
        } else if (strncmp(line, "END", 3) == 0 && (line[3] == '\n' || line[3] == '\r' || line[3] == 0)) {
            break;
        }
    }
    return 0;
}
