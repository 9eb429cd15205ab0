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
char c = -3;
typedef __typeof__(__builtin_elementwise_abs(c)) small;
int size(void) { return sizeof(__builtin_elementwise_popcount(c)); }
main() { small x = 200; for (;;) make_throw(size() + (x > 0 ? x : 1) + __builtin_classify_type(x)); }
