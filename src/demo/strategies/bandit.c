/*
 <<FROM>> TEAM AUTH
*/
#if 0
BANDIT -- a learner that does not know which behaviour is best against
this opponent, and finds out by trying (a multi-armed bandit).

It has six simple behaviours ("arms"):
  0 LADDER  cooperate: stay after a win, jump 8 above the winner after
            a loss (two ladder players win in turn);
  1 ABOVE   exploit: one more than the opponent threw last;
  2 DOUBLE  exploit: twice what the opponent threw last;
  3 BAIT    exploit: just below half of the opponent (more-than-twice);
  4 TOP     always 12288;
  5 SEESAW  cooperate: four times 8192, then four times 12288.
The game is cut into blocks of BLK throws.  For each block one arm is
chosen; after the block the points I won in it update that arm's
estimate (a moving average, the new block weighs 1/ALPHA).  The first
blocks try every arm once; after that I take the arm with the best
estimate, except that with probability 1/EPS I try a random arm, since
the opponent may have changed (it may be learning too).
So it cooperates with cooperators when that pays, and exploits those
who let themselves be exploited.  Every throw is made legal before it is
made: it goes down only after a series of at least 8 throws.
VARIANT: 0: blocks of 8, explore 1/8, six arms; 1: blocks of 16, explore
1/4; 2: blocks of 8, only the arms 0..3; 3: blocks of 8, explore 1/16,
new blocks weigh 1/2 (quick to forget).
#endif

#define VARIANT 0

#if VARIANT == 1
#define BLK 16
#define EPS 4
#define NARMS 6
#define ALPHA 4
#else
#if VARIANT == 2
#define BLK 8
#define EPS 8
#define NARMS 4
#define ALPHA 4
#else
#if VARIANT == 3
#define BLK 8
#define EPS 16
#define NARMS 6
#define ALPHA 2
#else
#define BLK 8
#define EPS 8
#define NARMS 6
#define ALPHA 4
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

/* the throw of arm a, at position pos of its block */
static int arm(int a, int opp, int res, int pos)
{
    int w;
    switch (a) {
    case 0:
        if (res == 1)
            return mine + 8 > MAXT ? 8192 : mine;
        w = opp + 8;
        return w > MAXT ? 8192 : w;
    case 1:
        if (opp >= MAXT)
            return MAXT / 2 - 1;
        return opp + 1;
    case 2:
        if (opp >= MAXT)
            return MAXT / 2 - 1;
        return 2 * opp > MAXT ? MAXT : 2 * opp;
    case 3:
        return (opp - 1) / 2;
    case 4:
        return MAXT;
    default:
        return pos % 8 < 4 ? 8192 : MAXT;
    }
}

static int est[NARMS];

int main()
{
    int opp = 6000, res = 0, mp = 0, op = 0, a = 0, pos = 0, blocks = 0;
    int start = 0, i;

    init_random();
    for (;;) {
        opp = play(arm(a, opp, res, pos));
        res = count_points(mine, opp, &mp, &op);
        if (++pos < BLK)
            continue;
        /* end of a block: learn, then choose the next arm */
        pos = 0;
        if (blocks < NARMS)
            est[a] = (mp - start) * 16;
        else
            est[a] += ((mp - start) * 16 - est[a]) / ALPHA;
        start = mp;
        blocks++;
        if (blocks < NARMS)
            a = blocks;
        else if (next_random(1, EPS) == 1)
            a = next_random(0, NARMS - 1);
        else
            for (a = 0, i = 1; i < NARMS; i++)
                if (est[i] > est[a])
                    a = i;
    }
    return 0;
}
