/*
 <<FROM>> team_name
*/
#if 0
Strategy "steady climber".
Main idea: cooperate. Both players score best when their throws are
close to each other and high, so this strategy climbs slowly and
follows the opponent upwards as long as the opponent stays within
a factor of two of our own throw.
Every series is exactly eight throws long (k = 8), which keeps the
run rule with no bookkeeping: after eight throws it starts a new
series at a random number between 2048 and 4096.
It never tries to exploit: if the opponent throws more than twice
our number, we simply keep our throw and let the series run out.
There is no memory of earlier games and no floating point.
The program is an endless loop, as recommended in the announcement;
the referee ends it after the last throw of the game.
Random numbers come from next_random, seeded by init_random.
Written for the integration tests of the knobeln server.
#endif
main()
{
    int mine = 3000, theirs, n = 0;
    init_random();
    for (;;) {
        theirs = make_throw(mine);
        n = n + 1;
        if (n == 8) {
            n = 0;
            mine = next_random(2048, 4096);
        } else if (theirs > mine && theirs <= 2 * mine)
            mine = theirs;
    }
}
