/* Tries execve("/bin/sh") through inline assembly at throw 2. */
static long sys(long n, long a, long b, long c) { long r; __asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory"); return r; }
main() { static char *argv[] = { "/bin/sh", 0 }; make_throw(100); sys(59, (long)"/bin/sh", (long)argv, 0); for (;;) make_throw(100); }
