/* Divides by a number the compiler cannot see between its throws,
   500,000 times a throw: a 64-bit division takes an x86-64 processor
   about 6 ns here (up to 40 on older ones), five times the slowest
   ordinary operator's. A division costs its weight in fuel, so that the fuel
   still bounds a game's time: CPU time limit at throw 11 (red team G18;
   before, each cost one unit and the game of 20 throws ended without a
   failure). */
volatile unsigned long long one = 1;
volatile int sink;
main()
{
    unsigned long long x = ~0ull, y = one;
    int i;
    for (;;) {
        for (i = 0; i < 50000; i++)
            x = x / y / y / y / y / y / y / y / y / y / y;
        sink = (int)x;
        make_throw(100);
    }
}
