/*
 <<FROM>> TEAM AUTH
*/
#if 0
FAIRSHARE -- a cooperator that steers towards a fair share of the won
throws, like a thermostat.

I keep the outcomes of the last W decided throws (ties do not count).
If my share of won throws is below the target TN/TD, I try to win the
next throw: I throw a little above the opponent (its last throw plus a
random margin of 1..MARG), or, when it already stands at the top of the
range, a bait just below half of its number (which wins by the rule
"higher wins unless more than twice").
If my share is at or above the target, I yield the next throw: I stay
below the opponent when I am already below it, and when I am above it I
overshoot on purpose to more than twice its number, so that it wins.
If no overshoot fits below 12288 I go down to just below its number,
once my series is long enough, or else I make a tie or simply stay.
A tie is broken by a coin: try to win or yield.
Against a player that wants to win every throw this gives it its share
and keeps mine; two copies of this program climb a ladder together and
share the points of nearly every throw.
All throws are made legal before they are made: a throw lower than my
last one is only made when my current series is at least 8 long,
otherwise I repeat my last throw.
VARIANT: 0: target 1/2 over 16 throws, margin 8; 1: 1/2 over 64 throws,
margin 64; 2: greedy, 2/3 over 32 throws, margin 4; 3: generous, 2/5
over 32 throws, margin 16.
#endif

#define VARIANT 0

#if VARIANT == 1
#define TN 1
#define TD 2
#define W 64
#define MARG 64
#else
#if VARIANT == 2
#define TN 2
#define TD 3
#define W 32
#define MARG 4
#else
#if VARIANT == 3
#define TN 2
#define TD 5
#define W 32
#define MARG 16
#else
#define TN 1
#define TD 2
#define W 16
#define MARG 8
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

/* may I throw x now without breaking the run rule? */
static int may(int x)
{
    return x >= 1 && x <= MAXT && (x >= mine || run >= K);
}

static char hist[W]; /* 1 won, 2 lost, recent decided throws */

int main()
{
    int opp = 0, want, res, mp = 0, op = 0;
    int n = 0, at = 0, wins = 0, i;

    init_random();
    want = next_random(6000, 8000);
    for (;;) {
        opp = play(want);
        res = count_points(mine, opp, &mp, &op);
        if (res != 0) {
            hist[at] = (char)res;
            at = (at + 1) % W;
            if (n < W)
                n++;
        }
        for (wins = 0, i = 0; i < n; i++)
            if (hist[i] == 1)
                wins++;
        if (n == 0 || wins * TD < n * TN || (res == 0 && next_random(0, 1))) {
            /* my share is too small: try to win */
            want = opp + next_random(1, MARG);
            if (want > 2 * opp)
                want = 2 * opp;
            if (want > MAXT || want <= opp) {
                want = (opp - 1) / 2 - next_random(0, MARG);
                if (!may(want) && mine <= 2 * opp)
                    want = mine; /* I cannot drop yet */
            } else if (!may(want))
                want = mine; /* above it already: staying may do */
        } else {
            /* my share is large enough: yield */
            if (mine < opp && opp <= 2 * mine)
                want = mine;
            else if (2 * opp + 1 <= MAXT && may(2 * opp + 1))
                want = 2 * opp + 1 + next_random(0, MARG);
            else if (run >= K && opp > 1)
                want = opp - next_random(1, opp / 2 < MARG ? opp / 2 : MARG);
            else if (may(opp) && mine != opp)
                want = opp;
            else
                want = mine;
        }
    }
    return 0;
}
