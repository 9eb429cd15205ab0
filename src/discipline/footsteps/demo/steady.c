/* FootSteps demo bot "steady": tracks the token (from the bids: the
 * higher bid moves it one field toward its bidder's goal) and both
 * purses. It spreads its points over the steps it still needs, and when
 * the opponent is one step from its goal it outbids the opponent's whole
 * purse if it can. Both start with 50 points, the token 3 fields from
 * each goal. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
    int mine = 50, theirs = 50, need = 3, they_need = 3;
    char line[256];
    for (;;) {
        int bid;
        if (mine == 0) {
            bid = 0;
        } else if (they_need == 1 && theirs + 1 <= mine) {
            bid = theirs + 1;
        } else if (need == 1) {
            bid = theirs + 1 <= mine ? theirs + 1 : mine;
        } else {
            bid = mine / need;
            if (bid < 1) bid = 1;
        }
        printf("%d\n", bid);
        fflush(stdout);
        if (!fgets(line, sizeof line, stdin) || strncmp(line, "fin", 3) == 0)
            break;
        int other = atoi(line);
        mine -= bid;
        theirs -= other;
        if (bid > other) { need--; they_need++; }
        else if (other > bid) { need++; they_need--; }
    }
    return 0;
}
