/*
 <<FROM>> TEAM AUTH
*/
#if 0
LOGDICE -- a random player with skewed distributions; it ignores the
opponent completely.

Like DICE, it throws random non-decreasing series of 8 to 16 throws,
but the first number of each series is not drawn uniformly:
  VARIANT 0: log-uniform: first a random power of two 2^e (e = 0..13),
             then a uniform number between 2^e and 2^(e+1)-1, so small
             numbers are as likely as large ones on a log scale;
             steps up to 1/32 of the number;
  VARIANT 1: bimodal: each series is either low (1000..2500, a bait for
             high throwers) or high (8000..12288), by a fair coin;
             steps up to 32;
  VARIANT 2: the larger of two uniform numbers in 1..12288, so high
             numbers are preferred; steps up to 128;
  VARIANT 3: the smaller of two uniform numbers, so low numbers are
             preferred (they win by the more-than-twice rule against
             high throwers, but score few points); steps up to 128.
Numbers are capped at 12288 and never go down inside a series; a new
series may start lower, which is legal after at least 8 throws.
It neither cooperates nor exploits on purpose: it is noise with a
shape, a test for the frequency analysis and learning of other players.
#endif

#define VARIANT 0

int init_random();
int next_random();
int make_throw();

#define MAXT 12288

static int first()
{
    int a, b, e;
    if (VARIANT == 1) {
        if (next_random(0, 1))
            return next_random(1000, 2500);
        return next_random(8000, MAXT);
    }
    if (VARIANT == 2 || VARIANT == 3) {
        a = next_random(1, MAXT);
        b = next_random(1, MAXT);
        if (VARIANT == 2)
            return a > b ? a : b;
        return a < b ? a : b;
    }
    e = next_random(0, 13);
    a = (1 << e) + next_random(0, (1 << e) - 1);
    return a > MAXT ? MAXT : a;
}

static int step(int v)
{
    if (VARIANT == 1)
        return next_random(0, 32);
    if (VARIANT == 0)
        return next_random(0, v / 32);
    return next_random(0, 128);
}

int main()
{
    int len, i, v;

    init_random();
    for (;;) {
        len = next_random(8, 16);
        v = first();
        for (i = 0; i < len; i++) {
            make_throw(v);
            v += step(v);
            if (v > MAXT)
                v = MAXT;
        }
    }
    return 0;
}
