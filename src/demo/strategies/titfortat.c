/*
 <<FROM>> TEAM AUTH
*/
#if 0
TITFORTAT -- nice, retaliating, forgiving: the prisoners dilemma recipe
carried over to KNOBELN.

Nice: I start cooperating with the ladder convention.  Whoever won the
last throw stays, whoever lost jumps STEP above the winner; so both
players score in turn and climb slowly; at the top both restart at 8192.
Ties are broken by a coin: jump or stay.
Retaliating: a cooperating opponent lets me win about every second
throw.  If it wins PROVOKE throws in a row instead, I take it as an
attack and punish it for PUNISH throws: I throw the best winning answer
to its last number (twice that number if it fits, or a bait below half
of it if it is high), and I do not let it win on purpose.
Forgiving: after the punishment I return to the ladder, with a clean
record.  VARIANT 3 is the grim trigger: it never forgives.
The punishment is also the answer to players that do not understand the
ladder at all (for example constant throwers): they get exploited for as
long as they stay where they are, which teaches adaptive players to
climb with me.
The run rule is kept by making every throw legal before it is made: I
go down only after a series of at least 8 throws.
VARIANT: 0: provoked after 3 lost throws, punishes 8; 1: provoked after
4, punishes 24; 2: generous, provoked after 8, punishes 8; 3: grim,
provoked after 3, punishes for the rest of the game.
#endif

#define VARIANT 0

#if VARIANT == 1
#define PROVOKE 4
#define PUNISH 24
#else
#if VARIANT == 2
#define PROVOKE 8
#define PUNISH 8
#else
#if VARIANT == 3
#define PROVOKE 3
#define PUNISH 100000
#else
#define PROVOKE 3
#define PUNISH 8
#endif
#endif
#endif

#define STEP 8
#define BASE 8192

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

/* the winning answer to y that scores most */
static int beat(int y)
{
    int up = 2 * y, down = (y - 1) / 2;
    if (up > MAXT)
        up = MAXT;
    if (up <= y)
        up = 0;
    if (up && (down < 1 || log2(up) >= log2(down)))
        return up;
    return down < 1 ? 1 : down;
}

int main()
{
    int opp, want, res, mp = 0, op = 0, streak = 0, angry = 0;

    init_random();
    want = BASE + next_random(0, STEP);
    for (;;) {
        opp = play(want);
        res = count_points(mine, opp, &mp, &op);
        streak = res == 2 ? streak + 1 : 0;
        if (angry > 0)
            angry--;
        else if (streak >= PROVOKE) {
            angry = PUNISH;
            streak = 0;
        }
        if (angry > 0) {
            want = beat(opp);
            continue;
        }
        if (res == 1) {
            want = mine + STEP > MAXT ? BASE : mine;
        } else if (res == 2 || next_random(0, 1)) {
            want = opp + STEP;
            if (want > MAXT)
                want = BASE;
        } else {
            want = mine;
        }
    }
    return 0;
}
