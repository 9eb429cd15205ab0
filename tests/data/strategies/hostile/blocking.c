/* After two throws, reads its input without throwing first: blocks forever. */
static long sys(long n, long a, long b, long c) { long r; __asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory"); return r; }
main() { char buf[16]; make_throw(100); make_throw(100); for (;;) sys(0, 0, (long)buf, sizeof buf); }
