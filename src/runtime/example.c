/*
Very simple strategy - select a random length of the next sequence
between MINLEN (=8) and MINLEN+EXTLEN (=16).
After that, pick random throws from max(my_last_throw,opponents_last_throw)
to MAXNUM (=12288) as long as the sequence goes.
*/


/*
 * my.c Simple strategy for the Knobeln contest
 *
 */

#define MINLEN 8 /* Min. length of non-decreasing */
#define EXTLEN 8 /* Potential extension to MINLEN */
#define GAMELEN 1000 /* Length of a whole game */
#define MAXNUM 12288 /* Biggest number available */

main()
{
 int len = 0;
 int mythrow = 0, yourthrow = 0;
 int myscore = 0, yourscore = 0;
 int whowins = 0;
 int gamecount = 0;
 (void) init_random();
 while (gamecount++ < GAMELEN) {
 if (len-- < 1) { /* Start next series */
 len = next_random(MINLEN,MINLEN+EXTLEN);
 mythrow = next_random(0,MAXNUM);
 } else { /* Continue series */
 mythrow = next_random((mythrow>yourthrow)?mythrow:yourthrow,
 MAXNUM);
 }
 yourthrow = make_throw(mythrow); /* Make/read throw */
 whowins = count_points(mythrow, yourthrow,
 &myscore, &yourscore);
 }
}

