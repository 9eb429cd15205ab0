/* Multiplies a subnormal number between its throws, 200,000 times a
   throw: each product takes an x86-64 processor a microcode assist of
   about 50 ns, forty ordinary operators' time. A multiplication costs
   its weight in fuel, so that the fuel still bounds a game's time: CPU
   time limit at throw 4 (red team G18; before, each cost one unit, the
   game of 20 throws used a fifth of the fuel, and the contest's fuel took
   36-47 s of CPU per player instead of 2). */
volatile double one = 1.0, tiny = 1e-310;
volatile int sink;
main()
{
    double x = tiny, y = one;
    int i;
    for (;;) {
        for (i = 0; i < 20000; i++)
            x = x * y * y * y * y * y * y * y * y * y * y;
        sink = x != 0;
        make_throw(100);
    }
}
