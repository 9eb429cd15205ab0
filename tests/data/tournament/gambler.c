#if 0
Gambler: like the climber, but in a game of 60 throws, about one game in four, it throws 0 at a random point (a failure: out of range).
This strategy is part of the engine's test field. It is written for the
tests of the tournament engine: grouping, rescheduling, disqualification,
determinism and resumption after a crash of the server.
The description has to be at least fifteen non-blank lines long, as the
announcement of 1994 requires, so these lines explain the rules it keeps:
every series of throws is non-decreasing and at least eight throws long,
all throws lie between 1 and 12288, and the program never ends by itself.
It uses only the five library routines of the contest runtime.
Line 10 of the description.
Line 11 of the description.
Line 12 of the description.
Line 13 of the description.
Line 14 of the description.
Line 15 of the description.
#endif
main()
{
    int i, t, n = 0, fail_at = next_random(1, 240);
    for (;;) {
        t = next_random(50, 3000);
        for (i = 0; i < 8; i++, n++)
            make_throw(n == fail_at ? 0 : t + i);
    }
}
