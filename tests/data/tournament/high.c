#if 0
High: throws 300 in every throw of every game.
Together with the other two constant strategies of this test field it
plays rock, paper, scissors: this one beats the middle one (300 is at most twice 150) and loses to the low one.
Equal numbers score nothing, so its self-game ends 0 : 0.
A constant is a non-decreasing series as long as the game, so the run
rule (series of at least k throws) always holds, and 300 lies in 1..12288.
In the Knobeln Evolution the three chase each other round and round:
the population ends in a cycle, not in a fixed point.
This strategy is part of the test field of the contest mails: their
snapshots, the totals of GRP against GRR, and the number of generations
that mail, article and site report.
It uses only make_throw, one of the five library routines.
The program never ends by itself: the referee stops it after the last
throw of the game.
It has no memory and no random numbers.
Line 15 of the description.
#endif
main()
{
    for (;;)
        make_throw(300);
}
