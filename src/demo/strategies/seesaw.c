/*
 <<FROM>> TEAM AUTH
*/
#if 0
SEESAW -- a cooperator that offers a constant pair of throws and locks
its phase onto the opponent.

Every series of mine is a block of B throws of the low number LO
followed by a block of B throws of the high number HI, where HI is at
most twice LO.  Then I drop back to LO: the series is 2*B >= 8 throws
long, so the run rule is kept.  If the opponent plays the same pair
half a cycle out of phase, we take turns: while I throw HI against its
LO I win, while I throw LO against its HI it wins, and both of us get
log2(HI) points in every second throw.
The adaptation is the phase lock.  If in the last cycle at least half
of the throws were ties, the opponent is in phase with me (for example a
copy of myself), and nobody scores.  Then, with probability one half, I
hold the low block for B more throws (the series just gets longer),
which shifts my phase by half a cycle.  Both copies toss their coins
independently, so after a few cycles exactly one of them has shifted.
Second adaptation: an opponent that keeps beating my HI with a higher
number is answered by raising HI to just below twice LO (but never
above 12288), an opponent that beats my LO from below (bait) is
answered by lowering LO, within the same limit HI <= 2*LO.
VARIANT chooses the pair and the block length: 0: 6144/12288, B=4;
1: 8192/12288, B=4; 2: 4096/8192, B=6; 3: 6500/11000, B=8.
#endif

#define VARIANT 0

#if VARIANT == 1
#define LO0 8192
#define HI0 12288
#define B 4
#else
#if VARIANT == 2
#define LO0 4096
#define HI0 8192
#define B 6
#else
#if VARIANT == 3
#define LO0 6500
#define HI0 11000
#define B 8
#else
#define LO0 6144
#define HI0 12288
#define B 4
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
    int lo = LO0, hi = HI0, pos = 0, hold = 0;
    int opp, res, mp = 0, op = 0;
    int ties = 0, over = 0, under = 0;

    init_random();
    for (;;) {
        opp = play(pos < B ? lo : hi);
        res = count_points(mine, opp, &mp, &op);
        if (res == 0)
            ties++;
        else if (res == 2 && opp > mine)
            over++; /* beaten from above */
        else if (res == 2)
            under++; /* beaten from below: I was more than twice */
        if (hold > 0) {
            hold--;
            continue;
        }
        pos++;
        if (pos < 2 * B)
            continue;
        /* end of a cycle: adapt, then start the next low block */
        pos = 0;
        if (ties >= B && next_random(0, 1))
            hold = B;
        if (over >= B + B / 2 && hi < MAXT) {
            hi = 2 * lo < MAXT ? 2 * lo : MAXT;
        } else if (under >= B + B / 2 && lo > 64) {
            lo = lo - lo / 4;
            if (hi > 2 * lo)
                hi = 2 * lo;
        }
        ties = over = under = 0;
    }
    return 0;
}
