/* Writes through a wild pointer at throw 5: far beyond its memory. */
main() { int i; volatile int *p = (int *)0x40000000; for (i = 0; i < 4; i++) make_throw(100); *p = 1; for (;;) make_throw(100); }
