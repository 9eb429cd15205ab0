/* <<FROM>> hostile_team secret123 */
#if 0
This strategy line 1 describes a plan of throwing numbers in the game of knobeln.
This strategy line 2 describes a plan of throwing numbers in the game of knobeln.
This strategy line 3 describes a plan of throwing numbers in the game of knobeln.
This strategy line 4 describes a plan of throwing numbers in the game of knobeln.
This strategy line 5 describes a plan of throwing numbers in the game of knobeln.
This strategy line 6 describes a plan of throwing numbers in the game of knobeln.
This strategy line 7 describes a plan of throwing numbers in the game of knobeln.
This strategy line 8 describes a plan of throwing numbers in the game of knobeln.
This strategy line 9 describes a plan of throwing numbers in the game of knobeln.
This strategy line 10 describes a plan of throwing numbers in the game of knobeln.
This strategy line 11 describes a plan of throwing numbers in the game of knobeln.
This strategy line 12 describes a plan of throwing numbers in the game of knobeln.
This strategy line 13 describes a plan of throwing numbers in the game of knobeln.
This strategy line 14 describes a plan of throwing numbers in the game of knobeln.
This strategy line 15 describes a plan of throwing numbers in the game of knobeln.
This strategy line 16 describes a plan of throwing numbers in the game of knobeln.
#endif
typedef __typeof__(_BitInt(128)) wide;
main() { wide t = next_random(1, 9); for (;;) { t = t * 1000003; make_throw(1 + (int)(t & 1023)); } }
