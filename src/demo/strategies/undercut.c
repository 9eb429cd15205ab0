/*
 <<FROM>> TEAM AUTH
*/
#if 0
UNDERCUT -- an exploiter that tries to win every throw by throwing just
a little above what the opponent will throw.

Prediction: the opponent will throw what it threw last time; if TREND
is on and the opponent is climbing, its last step is added as well
(linear extrapolation of its current series).
Attack: I throw the prediction plus a margin M, but never more than
twice the prediction (that would lose by the "more than twice" rule).
If the prediction is so high that nothing above it fits into 1..12288,
I switch to the bait: a number just below half of the prediction, which
wins against a high thrower.
The margin adapts: when I lose because the opponent climbed above me,
the margin was too small and is doubled; when I lose because I was more
than twice the opponent, the margin was too large and is halved; while
I win, the margin slowly shrinks back towards its initial value.
If I may not go down yet (my series is shorter than 8 throws), I repeat
my last throw, which is often still a winner.
This strategy does not cooperate on purpose; against another climber it
still produces a ladder in which both win now and then.
VARIANT: 0: margin 1, trend on; 1: margin 1, trend off; 2: margin 64,
trend on; 3: margin relative (one eighth of the prediction), trend on.
#endif

#define VARIANT 0

#if VARIANT == 1
#define M0 1
#define TREND 0
#define REL 0
#else
#if VARIANT == 2
#define M0 64
#define TREND 1
#define REL 0
#else
#if VARIANT == 3
#define M0 1
#define TREND 1
#define REL 8
#else
#define M0 1
#define TREND 1
#define REL 0
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

int main()
{
    int opp, prev = 0, pred, want, m = M0, res, mp = 0, op = 0;

    init_random();
    want = next_random(4000, 6000);
    for (;;) {
        opp = play(want);
        res = count_points(mine, opp, &mp, &op);
        if (res == 2 && opp > mine) {
            m = 2 * m + 1; /* outclimbed: more margin */
            if (m > 2048)
                m = 2048;
        } else if (res == 2) {
            m = m / 2; /* overshot: less margin */
        } else if (res == 1 && m > M0) {
            m = m - (m - M0 + 7) / 8;
        }
        if (m < M0)
            m = M0;
        pred = opp;
        if (TREND && prev > 0 && opp > prev)
            pred = opp + (opp - prev);
        if (pred > MAXT)
            pred = MAXT;
        prev = opp;
        want = pred + m + (REL ? pred / REL : 0);
        if (want > 2 * pred)
            want = 2 * pred;
        if (want <= pred || want > MAXT) {
            if (pred < MAXT)
                want = MAXT;
            else
                want = (pred - 1) / 2 - m; /* bait a high thrower */
        }
    }
    return 0;
}
