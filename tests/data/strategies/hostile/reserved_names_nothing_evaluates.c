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
_Atomic int a;
typedef __typeof__(__c11_atomic_load(&a, 5)) loaded;
int fence(int x) { return sizeof(__arithmetic_fence(x)); }
int kind(void) { return _Generic(__scoped_atomic_load_n(&a, 5, 0), int: 1, default: 2); }
int trait(char c) { return sizeof(__is_integral(c)); }
static int __helper(int x) { return x + 1; }
main() { loaded x = 2; for (;;) make_throw(__helper(fence(x) + kind() + trait(1))); }
