/*
 <<FROM>> team_name authstring
*/
#if 0
Strategy "token flood".
Macros that make just under the most the server reads after preprocessing:
each level repeats the one below sixteen times, so the five levels make
about half a million semicolons, each a lexical element. The service must
count them in bounded memory and refuse the program for their number,
and say how many there are.
The strategy itself would throw zero forever; it never gets that far.
Written for the integration tests of the knobeln server, issue 25:
bounded memory outside the jail.
There is no other idea in it; the description only has to be long
enough for check 4, which asks for at least ten lines of text that
say what the strategy does and why.
#endif
#define A ;;;;;;;;;;;;;;;;
#define B A A A A A A A A A A A A A A A A
#define C B B B B B B B B B B B B B B B B
#define D C C C C C C C C C C C C C C C C
#define E D D D D D D D
main()
{
    int n = 0;
    E
    for (;;) {
        n = make_throw(n);
    }
}
