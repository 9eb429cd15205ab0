/* 100, 100, 100, then 50 at throw 4: a series of 3 < 8 throws. */
main() { make_throw(100); make_throw(100); make_throw(100); for (;;) make_throw(50); }
