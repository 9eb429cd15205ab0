/*
 * knobellib.h -- the five library routines of the KNOBELN contest.
 *
 * A strategy is a single C file (ANSI or K&R) without any #include: it may
 * call these five routines and nothing else. You need not include this
 * header in your submission (it would be rejected); declare the routines
 * yourself, or rely on implicit declarations as the 1994 example does. The
 * header is for reading, and for local development with the kit.
 *
 * The game (rules of 1994; RULES.txt gives this contest's a, b, k and L):
 * both players choose a number in 1..12288 at the same time; this is a
 * "throw". Equal numbers score nothing. Otherwise the higher number wins
 * unless it is more than twice the lower one, in which case the lower
 * number wins. The winner of a throw with number N gets floor(log2(N))
 * points. Each player's throws must form non-decreasing series, each at
 * least 8 throws long. A game has 1000 throws.
 *
 * How a strategy runs: the contest compiles it to WebAssembly (a 32-bit
 * machine, like the SPARCstation of 1994: int, long and pointers are 4
 * bytes) and links it with this runtime. The referee seeds the random
 * generator with a number of its choice and calls your main(); the program
 * sees only its own memory, and make_throw is its only way out. Your
 * program may use the memory and the CPU time per game that RULES.txt and
 * the acceptance of your registration give (by default 1024 kB of memory
 * for data and stack, and 1710000000 WebAssembly operators per game: the
 * announcement's 30 s on a SPARCstation 2). You may return from main()
 * after the last throw, but it is recommended to loop forever: the referee
 * ends the program after the last throw. (Built natively with the kit,
 * the runtime locks the process down instead: from main() on it can only
 * read its input, write its output and exit.)
 */

#ifndef KNOBELLIB_H
#define KNOBELLIB_H

/*
 * init_random() -- (re)starts the random generator with the seed the referee
 * gave this game and returns that seed (a non-negative int). Calling it is
 * optional: the generator starts seeded. Calling it again restarts the same
 * sequence. The same game seed gives the same random numbers, so a game can
 * be replayed exactly.
 */
int init_random();

/*
 * log2(number) -- floor of the base-2 logarithm of number, as an int:
 * log2(1) = 0, log2(6800) = 12, log2(12288) = 13. For number < 1 it returns 0.
 * (The integer routine of the contest, not the floating-point one of libm.)
 */
int log2(int number);

/*
 * next_random(low, high) -- a random int, uniformly distributed in
 * low..high inclusive. If high < low it returns low.
 */
int next_random(int low, int high);

/*
 * make_throw(my_throw) -- makes your throw for the current throw of the game
 * and returns the opponent's throw of the same throw. Each call is one throw.
 * A throw outside 1..12288, or one that breaks the series rule, makes your
 * program fail (it is stopped and the referee reports which rule it broke
 * in which throw).
 */
int make_throw(int my_throw);

/*
 * count_points(throw1, throw2, &points1, &points2) -- judges one throw in
 * which player 1 threw throw1 and player 2 threw throw2: adds the points of
 * that throw to *points1 or *points2, and returns who won the throw:
 * 1 (player 1), 2 (player 2) or 0 (equal numbers, nobody).
 */
int count_points(int throw1, int throw2, int *points1, int *points2);

#endif
