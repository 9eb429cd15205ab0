/*
 <<FROM>> TEAM AUTH
*/
#if 0
BAITER -- an exploiter that lives on the "more than twice" rule.

A high number does not always win: if it is more than twice the lower
number, the LOWER number wins.  Many players throw high numbers because
they give many points.  The baiter throws a number below half of what
the opponent is expected to throw, and wins log2 of that number, one or
two points less than the top, but every time.  An opponent that climbs
only makes the bait safer.
Prediction: the smallest opponent throw among the last WIN throws, to be
safe against opponents that drop at the start of a new series.  The bait
is that number times NUM/DEN, rounded so that twice the bait is below
it; a smaller NUM/DEN is safer but scores less.
Adaptation: the bait fails when the opponent comes down to my level.
If at least 4 of my last 8 baits failed, the opponent is chasing me
down; for the next 16 throws I then play "just above" instead: its last
number plus one eighth, and after that I try the bait again.
Against low throwers (below 8) there is nothing to bait, and I throw
just above them too.  This strategy never cooperates on purpose.
VARIANT: 0: bait 1/2 of the last throw; 1: 1/2 of the minimum over 4
throws; 2: 3/8 of the minimum over 8 throws; 3: 1/4 of the minimum
over 2 throws.
#endif

#define VARIANT 0

#if VARIANT == 1
#define WIN 4
#define NUM 1
#define DEN 2
#else
#if VARIANT == 2
#define WIN 8
#define NUM 3
#define DEN 8
#else
#if VARIANT == 3
#define WIN 2
#define NUM 1
#define DEN 4
#else
#define WIN 1
#define NUM 1
#define DEN 2
#endif
#endif
#endif

int init_random();
int log2();
int next_random();
int make_throw();
int count_points();

#define MAXT 12288
#define K 8

static int mine = 0; /* my last throw */
static int run = 0;  /* length of my current non-decreasing series */

/* make the throw x, after making it legal; returns the opponent's throw */
static int play(int x)
{
    if (x > MAXT)
        x = MAXT;
    if (x < 1)
        x = 1;
    if (x < mine && run < K)
        x = mine;
    run = x < mine ? 1 : run + 1;
    mine = x;
    return make_throw(x);
}

static int seen[WIN];

int main()
{
    int opp, y, want, res, mp = 0, op = 0, t = 0, i;
    int baiting = 1, fails = 0, tries = 0, chase = 0;

    init_random();
    want = next_random(3000, 6000);
    for (;;) {
        opp = play(want);
        res = count_points(mine, opp, &mp, &op);
        if (baiting) {
            tries++;
            if (res != 1)
                fails++;
            if (tries == 8) {
                if (fails >= 4) {
                    baiting = 0;
                    chase = 16;
                }
                tries = fails = 0;
            }
        } else if (--chase <= 0)
            baiting = 1;
        seen[t % WIN] = opp;
        t++;
        y = opp;
        for (i = 0; i < WIN && i < t; i++)
            if (seen[i] < y)
                y = seen[i];
        if (baiting && y >= 8) {
            want = y * NUM / DEN;
            if (2 * want >= y)
                want = (y - 1) / 2;
        } else {
            want = opp + opp / 8 + 1;
            if (want > 2 * opp)
                want = 2 * opp;
        }
    }
    return 0;
}
