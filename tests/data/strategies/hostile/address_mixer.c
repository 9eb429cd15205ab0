/* Address mixer (issue 9, item 2): mixes the addresses of a local, a
   static and a function, uninitialised stack and the memory above its
   frame (where the kernel put the arguments, the environment and the
   auxiliary vector with its random bytes) into its throws. With address
   randomisation, or anything of the start-up left readable, two games with
   the same seeds differ. Pure C; keeps every rule. */
static int s;

main()
{
    unsigned char probe = 0;
    volatile unsigned char *above = &probe;
    volatile unsigned char junk[512];
    unsigned long h = (unsigned long)&probe ^ ((unsigned long)&s << 7) ^ (unsigned long)main;
    int i, base;
    for (i = 0; i < 512; i++)
        h = h * 131 + junk[i];
    for (i = 1; i < 512; i++)
        h = h * 31 + above[i];
    for (;;) {
        base = 1 + (int)(h % 6000);
        for (i = 0; i < 8; i++)
            make_throw(base + i);
        h = h * 6364136223846793005UL + 1442695040888963407UL;
    }
}
