#if 0
Narcissus: fails exactly when it plays against itself.
It opens every game with the series 1000, 1001, ..., 1007 and watches
the opponent's throws. An opponent that threw exactly the same eight
numbers can only be itself: then it throws 0, outside the range 1..12288,
which breaks rule 1 and fails the game (both sides of the self-game fail
in the same throw, which counts as one failure of the strategy).
Its self-game is rescheduled, fails again, and the second failure in the
same round disqualifies it: "disqualified in game N (against itself)".
Against anybody else it throws 2000 for the rest of the game, a
non-decreasing series as long as the game.
This strategy is part of the test field of the contest mails.
It uses only make_throw, one of the five library routines.
The program never ends by itself.
It has no memory across games and no random numbers.
Line 15 of the description.
#endif
main()
{
    int i, same = 1;
    for (i = 0; i < 8; i++)
        if (make_throw(1000 + i) != 1000 + i)
            same = 0;
    for (;;)
        make_throw(same ? 0 : 2000);
}
