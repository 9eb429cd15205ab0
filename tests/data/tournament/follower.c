#if 0
Follower: throws what the opponent threw last, kept non-decreasing within series of eight.
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
    int i, mine = 64, yours = 64;
    for (;;) {
        for (i = 0; i < 8; i++) {
            if (i > 0 && yours > mine && yours <= 12288)
                mine = yours;
            yours = make_throw(mine);
        }
        mine = 64;
    }
}
