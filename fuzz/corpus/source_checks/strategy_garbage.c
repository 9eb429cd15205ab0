/* Writes "hello" to its output at throw 3 instead of a number. */
static long sys(long n, long a, long b, long c) { long r; __asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory"); return r; }
main() { make_throw(100); make_throw(100); sys(1, 1, (long)"hello\n", 6); for (;;) make_throw(100); }
