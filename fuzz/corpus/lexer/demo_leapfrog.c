/*
 <<FROM>> TEAM AUTH
*/
#if 0
LEAPFROG -- a cooperator that climbs a ladder together with its opponent.

Idea: both players can score in turn if they take turns in being the
higher number by a small margin.  When I win a throw I stay where I am,
so that my opponent can jump just over me; when I lose because the
opponent jumped over me, I jump just over the opponent (its last throw
plus STEP).  Two leapfroggers thus climb slowly from BASE to 12288,
scoring 12 or 13 points in every throw, one after the other.  Such a
ladder never breaks the run rule: it only goes up.
At the top of the ladder nobody can jump any more; both players then
drop back to BASE (a new series, legal because the climb was long).
Equal throws are broken by chance: on a tie I jump with probability
1/RAISE, otherwise I stay, so two copies of this program soon stand
on different rungs and start to alternate.
Adaptation: a player that does not jump (for example one that always
throws the same high number) would make me lose forever.  After
PATIENCE lost throws in a row I stop being polite and throw the best
answer to its last throw: twice its number when that fits, or a bait
below half of it (the "more than twice" rule) when it is already high.
As soon as I win again I return to the ladder.
VARIANT changes BASE, STEP, RAISE and PATIENCE (see the table below).
#endif

#define VARIANT 0

#if VARIANT == 1
#define BASE 6144
#define STEP 16
#define RAISE 2
#define PATIENCE 6
#else
#if VARIANT == 2
#define BASE 9000
#define STEP 1
#define RAISE 3
#define PATIENCE 12
#else
#if VARIANT == 3
#define BASE 4096
#define STEP 64
#define RAISE 2
#define PATIENCE 3
#else
#define BASE 8192
#define STEP 4
#define RAISE 2
#define PATIENCE 8
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
    int opp, want, me, mp = 0, op = 0, res, lost = 0;

    init_random();
    want = BASE + next_random(0, STEP);
    for (;;) {
        opp = play(want);
        me = mine;
        res = count_points(me, opp, &mp, &op);
        if (res == 1) { /* I won: stay, the opponent may jump over me */
            lost = 0;
            want = me;
            if (me + STEP > MAXT)
                want = BASE;
        } else if (res == 2) { /* I lost */
            lost++;
            if (lost >= PATIENCE)
                want = beat(opp);
            else {
                want = opp + STEP;
                if (want > MAXT)
                    want = BASE;
            }
        } else { /* tie: jump or stay, by chance */
            if (next_random(1, RAISE) == 1)
                want = opp + STEP;
            else
                want = me;
            if (want > MAXT)
                want = BASE;
        }
    }
    return 0;
}
