/*
 <<FROM>> TEAM AUTH
*/
#if 0
MIRROR -- do to the opponent what it just did to me.

After every throw I classify what the opponent did, seen from its side:
  CLIMB   it was higher than me, at most twice: it won from above;
  BAIT    I was more than twice its number: it won from below;
  LOW     it was lower than me, but not less than half: it let me win;
  OVER    it was more than twice my number: it let me win from above;
  TIE     we threw the same number.
and I answer with the same kind of move against its last number:
  CLIMB -> I climb D above its number;
  BAIT  -> I bait: I throw just below half of its number;
  LOW   -> I return the favour: I stay where I am, below its next climb;
  OVER  -> I overshoot to more than twice its number;
  TIE   -> I climb with probability 1/TIEP, otherwise I stay.
So a cooperator meets a cooperator (two mirrors build a ladder on which
they win in turn), and an exploiter meets an exploiter.  At the top of
the range (no climb fits below 12288) the mirror baits instead.
Every throw is made legal before it is made: I go down only after a
series of at least 8 throws, otherwise I repeat my last number.
VARIANT: 0: D = 1, answers the last move; 1: D = 32, answers the last
move; 2: D = 4, answers the most frequent move of the last 5 throws
(slower, less nervous); 3: D = 1/64 of the opponent number plus one, and
on a tie it climbs only with probability 1/4.
#endif

#define VARIANT 0

#if VARIANT == 1
#define D0 32
#define REL 0
#define MAJ 1
#define TIEP 2
#else
#if VARIANT == 2
#define D0 4
#define REL 0
#define MAJ 5
#define TIEP 2
#else
#if VARIANT == 3
#define D0 1
#define REL 64
#define MAJ 1
#define TIEP 4
#else
#define D0 1
#define REL 0
#define MAJ 1
#define TIEP 2
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

#define TIE 0
#define CLIMB 1
#define BAIT 2
#define LOW 3
#define OVER 4

static int moves[MAJ];

int main()
{
    int opp, want, mv, t = 0, i, best, cnt[5], d;

    init_random();
    want = next_random(7000, 9000);
    for (;;) {
        opp = play(want);
        if (opp == mine)
            mv = TIE;
        else if (opp > mine)
            mv = opp <= 2 * mine ? CLIMB : OVER;
        else
            mv = mine <= 2 * opp ? LOW : BAIT;
        moves[t % MAJ] = mv;
        t++;
        if (MAJ > 1) {
            for (i = 0; i < 5; i++)
                cnt[i] = 0;
            for (i = 0; i < MAJ && i < t; i++)
                cnt[moves[i]]++;
            for (best = mv, i = 0; i < 5; i++)
                if (cnt[i] > cnt[best])
                    best = i;
            mv = best;
        }
        d = D0 + (REL ? opp / REL : 0);
        if (mv == TIE && next_random(1, TIEP) != 1)
            mv = LOW;
        if (mv == TIE)
            mv = CLIMB;
        if (mv == CLIMB) {
            want = opp + d;
            if (want > 2 * opp)
                want = 2 * opp;
            if (want > MAXT)
                mv = BAIT;
        }
        if (mv == BAIT)
            want = opp >= 3 ? (opp - 1) / 2 : opp + 1;
        else if (mv == LOW)
            want = mine;
        else if (mv == OVER)
            want = 2 * opp + 1 <= MAXT ? 2 * opp + 1 : mine;
    }
    return 0;
}
