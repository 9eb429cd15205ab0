/*
 <<FROM>> TEAM AUTH
*/
#if 0
EDGE -- walks along the very edge of the rules; VARIANT 0 steps over it.

All variants throw series of exactly 8 throws (the shortest series the
run rule allows) and then go down at once, and they use the extreme
numbers of the rules: 12288, the largest legal number, and "exactly
twice", the largest number that still wins against a smaller one.
VARIANT 0 (the rule breaker of the demo contest): a sawtooth from 12281
up to 12288 in every series.  Its authors misread rule 6 and believe a
series may be cut short once per game "for surprise": at a random throw
between 30 and 150 it starts a series of only 5 throws and then goes
down again.  The referee stops the game at that throw (rule 6, series
shorter than 8), in every single game, so the strategy fails twice in
the first round and is disqualified.  It is in the demo to show the
rescheduling and the disqualification.
VARIANT 1: the same sawtooth 12281..12288, without the mistake (legal).
VARIANT 2: exactly twice the last number of the opponent (at most
12288), never lower than its own last throw inside a series; a new
series starts at twice the opponent number again (legal).
VARIANT 3: a peacemaker: throws exactly the last number of the opponent
(a tie gives nobody a point) inside series of exactly 8 (legal).
#endif

#define VARIANT 0

int init_random();
int next_random();
int make_throw();

#define MAXT 12288

int main()
{
    int t = 0, i, len, opp = 4096, v = 0, mine = 0, cut;

    init_random();
    cut = next_random(30, 150);
    for (;;) {
        len = 8;
        if (VARIANT == 0 && t >= cut)
            len = 5; /* the mistake: a series of 5 */
        for (i = 0; i < len; i++, t++) {
            if (VARIANT <= 1)
                v = MAXT - 7 + i;
            else {
                v = VARIANT == 2 ? 2 * opp : opp;
                if (v > MAXT)
                    v = MAXT;
                if (i > 0 && v < mine)
                    v = mine; /* no going down inside a series */
            }
            mine = v;
            opp = make_throw(v);
        }
    }
    return 0;
}
