/* Machine probe (issue 23): tries to make its play depend on anything of
   the machine or the run it could reach in pure C: addresses of a local,
   a static and a function, uninitialised locals and the whole of its
   memory (1024 kB), a NaN's bits, a float computation's rounding, and
   "timing by counting" (how far it gets in a fixed number of steps of
   a loop that races nothing). Every game with the same seeds must be the
   same, on every machine, CPU and number of workers. Keeps every rule. */
static int s;
static unsigned char *volatile mem;

union bits {
    double d;
    unsigned long long u;
};

main()
{
    volatile int uninit[64];
    volatile double zero = 0.0, third = 1.0 / 3.0;
    union bits nan, r;
    unsigned long long h = (unsigned long)&s ^ ((unsigned long)uninit << 7) ^ (unsigned long)main;
    unsigned long i;
    int base, k, t;
    nan.d = zero / zero;
    r.d = third * 3.0 - 1.0 + third * third;
    h = h * 31 + nan.u;
    h = h * 31 + r.u;
    for (i = 0; i < 64; i++)
        h = h * 131 + (unsigned)uninit[i];
    mem = (unsigned char *)0;
    for (i = 0; i < 1024 * 1024; i += 61)
        h = h * 131 + mem[i];
    for (;;) {
        /* Timing by counting: a loop of fixed length, then its count. */
        volatile unsigned long n = 0;
        for (k = 0; k < 1000; k++)
            n += (unsigned long)&k & 7;
        h = h * 6364136223846793005ULL + n + 1442695040888963407ULL;
        base = 1 + (int)(h % 6000);
        for (t = 0; t < 8; t++)
            make_throw(base + t);
    }
}
