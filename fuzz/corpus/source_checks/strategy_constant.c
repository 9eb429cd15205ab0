/* Always throws 100: the simplest legal strategy. */
main() { for (;;) make_throw(100); }
