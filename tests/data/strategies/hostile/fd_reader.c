/* Descriptor thief (issue 9, item 6): reads and writes every descriptor
   from 3 to 1023 with raw system calls (read and write are allowed under
   seccomp strict) and throws 1 + the number of bytes it got through. A
   descriptor the server left open would show. Inline assembly: built
   without the compile checks, to test the spawner. */
static long sys(long n, long a, long b, long c) { long r; __asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory"); return r; }
main()
{
    char buf[64];
    long fd, r, got = 0;
    for (fd = 3; fd < 1024; fd++) {
        r = sys(0, fd, (long)buf, sizeof buf);
        if (r > 0)
            got += r;
        r = sys(1, fd, (long)"x", 1);
        if (r > 0)
            got += r;
    }
    if (got > 12000)
        got = 12000;
    for (;;)
        make_throw(1 + (int)got);
}
