/* Finds a `syscall` instruction inside the runtime's make_throw and jumps
   there with the registers set up for open("/etc/passwd"), at throw 2. */
int make_throw();

main()
{
    unsigned char *p = (unsigned char *)make_throw;
    int i;
    make_throw(100);
    for (i = 0; i < 4096; i++)
        if (p[i] == 0x0f && p[i + 1] == 0x05)
            break;
    __asm__ volatile("mov $2, %%eax\n mov %1, %%rdi\n xor %%esi, %%esi\n xor %%edx, %%edx\n jmp *%0"
                     : : "r"(p + i), "r"("/etc/passwd") : "rax", "rdi", "rsi", "rdx", "memory");
    for (;;) make_throw(100);
}
