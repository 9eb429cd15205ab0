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
int wide(void) { return sizeof(fmaximum_numl(1, 2)) + sizeof(index(0, 0)) + sizeof(round(2.5)); }
int before(void) { return mine(2); }
int mine(x) int x; { return x + 100; }
main() { for (;;) make_throw(wide() * 10 + before()); }
