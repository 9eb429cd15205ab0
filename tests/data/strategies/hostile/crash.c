/* Dereferences a null pointer at throw 5. */
main() { int i; volatile int *p = 0; for (i = 0; i < 4; i++) make_throw(100); *p = 1; for (;;) make_throw(100); }
