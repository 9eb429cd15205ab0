/*
 <<FROM>> TEAM AUTH
*/
#if 0
DOUBLER -- a greedy exploiter that aims at the most valuable win: a
number as close as possible to twice what the opponent will throw.

The winner of a throw gets log2 of its own number, and the higher number
still wins when it is exactly twice the lower one.  So the best answer
to an opponent that throws Y is not Y+1 but 2*Y: one point more than
the plain overbid, and safe against an opponent that climbs by up to
a factor of two.  When 2*Y does not fit below 12288 I throw 12288 (a
win for 13 points against anything from 6144 up); against an opponent
at 12288 itself I bait with 6143, which wins 12 points because 12288 is
more than twice 6143.
Prediction of Y: the last throw of the opponent, or (VARIANT 1) the
smallest of its last four throws, which is safer against opponents that
jump down at the start of a new series.
The factor F/16 adapts: after a loss because my number was more than
twice the opponent, F goes down by 2 (to 18 at least, i.e. 9/8); after
a loss because the opponent was higher, F goes up by 2 (at most 32,
i.e. twice); wins leave F alone.
This is pure exploitation: it never lets the opponent win on purpose.
VARIANT: 0: F starts at 32, prediction = last throw; 1: F = 32,
prediction = minimum of the last four; 2: F starts at 24 (one and a
half); 3: F starts at 28 and does not adapt.
#endif

#define VARIANT 0

#if VARIANT == 1
#define F0 32
#define LOOK 4
#define ADAPT 1
#else
#if VARIANT == 2
#define F0 24
#define LOOK 1
#define ADAPT 1
#else
#if VARIANT == 3
#define F0 28
#define LOOK 1
#define ADAPT 0
#else
#define F0 32
#define LOOK 1
#define ADAPT 1
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

static int last[LOOK];

int main()
{
    int opp, y, want, f = F0, res, mp = 0, op = 0, t = 0, i;

    init_random();
    want = next_random(2000, 4000);
    for (;;) {
        opp = play(want);
        res = count_points(mine, opp, &mp, &op);
        if (ADAPT && res == 2) {
            if (mine > opp && f > 18)
                f -= 2;
            else if (mine < opp && f < 32)
                f += 2;
        }
        last[t % LOOK] = opp;
        t++;
        y = opp;
        for (i = 0; i < LOOK && i < t; i++)
            if (last[i] < y)
                y = last[i];
        if (y >= MAXT)
            want = MAXT / 2 - 1; /* bait the top */
        else {
            want = y * f / 16;
            if (want <= y)
                want = y + 1;
            if (want > MAXT)
                want = MAXT;
        }
    }
    return 0;
}
