/* Nine good throws, then 20000 at throw 10: outside 1..12288. */
main() { int i; for (i = 0; i < 9; i++) make_throw(100); for (;;) make_throw(20000); }
