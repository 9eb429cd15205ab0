/* FootSteps demo bot "one": bids 1 while it has points, then 0 (the
 * smallest legal bid). It reads the opponent's bid or "fin" after each
 * of its own bids. */
#include <stdio.h>
#include <string.h>

int main(void) {
    int points = 50;
    char line[256];
    for (;;) {
        int bid = points > 0 ? 1 : 0;
        points -= bid;
        printf("%d\n", bid);
        fflush(stdout);
        if (!fgets(line, sizeof line, stdin) || strncmp(line, "fin", 3) == 0)
            break;
    }
    return 0;
}
