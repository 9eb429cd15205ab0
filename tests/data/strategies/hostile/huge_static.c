/* A 4 MB static array: the program cannot even be loaded within 1024 kB. */
static int big[1 << 20];
main() { big[12345] = 100; for (;;) make_throw(big[12345]); }
