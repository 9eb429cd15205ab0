/*
 <<FROM>> TEAM AUTH
*/
#if 0
CLAN -- recognizes itself (and its relatives) by a handshake, then
shares the points perfectly; plays a fallback against everybody else.

Handshake: the first four throws are the fixed signature 11, 222, 3333,
4444.  Throws 5, 6 and 7 are random tie-break numbers from 5000..5999,
6000..6999 and 7000..7999, throw 8 is 8000.  All of this is one rising
series, so it is legal.  If the opponent threw the same signature and
its tie-break numbers lie in the same ranges, it is a clan member (the
same program, or another VARIANT of it: all share the handshake, which
matters since every strategy also plays against itself).  The player
with the higher tie-break number (first difference wins) leads.
Clan protocol from throw 9 on: the leader throws blocks of four 8192
and four 12288; the follower throws the same blocks half a cycle later.
So in every throw one of them throws 12288 against 8192 and wins 13
points: each gets 6.5 points per throw, the best that two players can
share in KNOBELN.  Every block of 8 is a legal series.
Any deviation of the opponent from the signature or from the protocol
ends the clan mode for the rest of the game, at once.  The fallback
depends on VARIANT: 0: the cooperative ladder (stay after a win, jump 8
above the winner after a loss); 1: exploit with twice the opponent
number; 2: exploit with a bait just below half of the opponent number;
3: the seesaw pair 6144/12288 in blocks of four.
Every throw is made legal before it is made (no drop before a series of
8 throws), so a fallback that wants to go down waits.
#endif

#define VARIANT 0

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

static int sig[8] = {11, 222, 3333, 4444, 5000, 6000, 7000, 8000};

/* the protocol throw number t (from 9 on) of the leader or the follower */
static int proto(int t, int lead)
{
    int pos = (t - 9 + (lead ? 0 : 4)) % 8;
    return pos < 4 ? 8192 : MAXT;
}

/* the fallback against a stranger */
static int fallback(int t, int opp, int res)
{
    int w;
    if (VARIANT == 1) {
        if (opp >= MAXT)
            return MAXT / 2 - 1;
        return 2 * opp;
    }
    if (VARIANT == 2)
        return (opp - 1) / 2;
    if (VARIANT == 3)
        return t % 8 < 4 ? 6144 : MAXT;
    if (res == 1)
        return mine + 8 > MAXT ? 8192 : mine;
    w = opp + 8;
    return w > MAXT ? 8192 : w;
}

int main()
{
    int t, opp, want, res, mp = 0, op = 0;
    int kin = 1, was = 1, lead = -1, my[3];

    init_random();
    my[0] = next_random(5000, 5999);
    my[1] = next_random(6000, 6999);
    my[2] = next_random(7000, 7999);
    want = sig[0];
    for (t = 1;; t++) {
        opp = play(want);
        res = count_points(mine, opp, &mp, &op);
        if (kin && t <= 4 && opp != sig[t - 1])
            kin = 0;
        if (kin && t >= 5 && t <= 7) {
            if (opp < sig[t - 1] || opp > sig[t - 1] + 999)
                kin = 0;
            else if (lead < 0 && opp != my[t - 5])
                lead = my[t - 5] > opp;
        }
        if (kin && t == 8 && (opp != sig[7] || lead < 0))
            kin = 0;
        if (kin && t >= 9 && opp != proto(t, !lead))
            kin = 0;
        /* the next throw, number t + 1 */
        if (kin && t < 4)
            want = sig[t];
        else if (kin && t < 7)
            want = my[t - 4];
        else if (kin && t == 7)
            want = sig[7];
        else if (kin)
            want = proto(t + 1, lead);
        else
            want = fallback(t + 1, opp, was ? 2 : res); /* start afresh */
        was = kin;
    }
    return 0;
}
