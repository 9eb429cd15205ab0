/*
 <<FROM>> team_name authstring
*/
#if 0
Strategy "macro megabytes".
A few lines of macros that the preprocessor multiplies into megabytes:
each level repeats the one below sixteen times, so the five levels make
about a million copies of one short word. The compile service must
refuse it for its length after preprocessing without reading all of it
into the server's memory, and say how long it got.
The strategy itself would throw zero forever; it never gets that far.
Written for the integration tests of the knobeln server, issue 25:
bounded memory outside the jail.
There is no other idea in it; the description only has to be long
enough for check 4, which asks for at least ten lines of text that
say what the strategy does and why.
#endif
#define A n=0;n=0;n=0;n=0;n=0;n=0;n=0;n=0;n=0;n=0;n=0;n=0;n=0;n=0;n=0;n=0;
#define B A A A A A A A A A A A A A A A A
#define C B B B B B B B B B B B B B B B B
#define D C C C C C C C C C C C C C C C C
#define E D D D D D D D D D D D D D D D D
main()
{
    int n = 0;
    E
    for (;;) {
        n = make_throw(n);
    }
}
