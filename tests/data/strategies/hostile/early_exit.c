/* Returns from main after 10 throws: ends before the game is over. */
main() { int i; for (i = 0; i < 10; i++) make_throw(100); return 0; }
