/* Recurses without end at throw 3, with nothing in memory: only the call
   stack fills up (two calls per level, so no compiler turns it into a
   loop). */
int deep(int n) { if (n == 0) return 0; return deep(n + 1) + deep(n + 2); }
main() { make_throw(100); make_throw(100); for (;;) make_throw(100 + deep(1) % 2); }
