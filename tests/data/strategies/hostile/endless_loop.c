/* Throws twice, then computes forever without throwing: CPU time limit. */
main() { volatile int x = 0; make_throw(100); make_throw(100); for (;;) x++; }
