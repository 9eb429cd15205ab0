/* Pure C that tries what jump_runtime.c does with assembly: reads the
   "code" of make_throw through a function pointer and calls an address
   made from a number, at throw 2. A module's functions are not in its
   memory and a call goes only to a function of its table. */
int make_throw();

main()
{
    unsigned char *p = (unsigned char *)make_throw;
    int (*f)(int) = (int (*)(int))(p + 1000);
    make_throw(100 + p[0] % 2);
    make_throw(f(100));
    for (;;) make_throw(100);
}
