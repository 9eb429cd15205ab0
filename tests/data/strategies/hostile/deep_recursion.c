/* Recurses deeper than any stack within 1024 kB allows, at throw 3. */
int deep(int n) { volatile char pad[64]; pad[0] = (char)n; if (n == 0) return 0; return deep(n - 1) + pad[0] % 2; }
main() { make_throw(100); make_throw(100); for (;;) make_throw(100 + deep(10000000) % 2); }
