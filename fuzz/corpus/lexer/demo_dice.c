/*
 <<FROM>> TEAM AUTH
*/
#if 0
DICE -- a random player with uniform distributions; it ignores the
opponent completely.

This is the honest dice of the field, a descendant of the example
strategy of the announcement.  Each series has a random length from 8
to 8 + EXT throws.  It starts with a number drawn uniformly from
LOW..HIGH; every following throw of the series adds a random step from
0..STEP, so the series never goes down; the numbers are capped at HIGH.
Then a new series starts with a new random number (going down is legal
then, since the series was at least 8 throws long).
Why play dice?  A random player cannot be exploited systematically: an
opponent cannot predict its next number, so overbidding and baiting
work only by luck.  It does not cooperate either; it is the noise in
the field that adaptive strategies have to cope with, and a test for
strategies that try to learn the habits of their opponent.
In the Knobeln Evolution random players usually die out, since they
do not arrange cooperation with anybody; they are here for variety.
VARIANT: 0: start uniform in 1..12288, steps up to 512, series of 8..16;
1: start in 6144..12288, steps up to 64, series of 8..16; 2: start in
2048..8192, steps up to 1024, capped at 8192, series of 8..24; 3: start
in 4096..12288, no steps (constant series), series of 8..24.
#endif

#define VARIANT 0

#if VARIANT == 1
#define LOW 6144
#define HIGH 12288
#define STEP 64
#define EXT 8
#else
#if VARIANT == 2
#define LOW 2048
#define HIGH 8192
#define STEP 1024
#define EXT 16
#else
#if VARIANT == 3
#define LOW 4096
#define HIGH 12288
#define STEP 0
#define EXT 16
#else
#define LOW 1
#define HIGH 12288
#define STEP 512
#define EXT 8
#endif
#endif
#endif

int init_random();
int next_random();
int make_throw();

int main()
{
    int len, i, v;

    init_random();
    for (;;) {
        len = next_random(8, 8 + EXT);
        v = next_random(LOW, HIGH);
        for (i = 0; i < len; i++) {
            make_throw(v);
            v += next_random(0, STEP);
            if (v > HIGH)
                v = HIGH;
        }
    }
    return 0;
}
