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
main() { int seen[20000]; int n = 0, i; for (i = 0; i < 20000; i++) seen[i] = 0;
  for (;;) { int t = make_throw(100 + seen[n % 20000] % 10); seen[n++ % 20000] = t; } }
