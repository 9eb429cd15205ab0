#if 0
Crasher: plays five throws and then writes through a wild pointer, in every game (disqualified in its second game).
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
    int i;
    volatile int *p = (int *)0x40000000;
    for (i = 0; i < 5; i++)
        make_throw(200);
    *p = 1;
    for (;;)
        make_throw(200);
}
