/*
 * knobellib.c -- the KNOBELN strategy runtime (the contest's knobellib).
 *
 * Linked with every strategy; no C library. It provides:
 *   - the five routines of the rules: init_random, log2, next_random,
 *     make_throw, count_points (documented in knobellib.h);
 *   - memcpy, memset, memmove and memcmp, which compilers may emit on
 *     their own;
 *   - the start of the program, in one of two builds:
 *
 * WebAssembly (what the contest plays; compiled by clang for wasm32,
 * see the kit's README): the module imports exactly two functions of the
 * referee, "knobeln" "seed" (the game seed of this player's generator) and
 * "knobeln" "make_throw" (makes a throw, returns the opponent's), and
 * exports knobeln_start (seeds the generator) and main. Nothing else
 * crosses into the referee: the module sees only its own 1024 kB of
 * linear memory, and every instruction it executes is counted.
 *
 * x86-64 Linux (for local play with the kit's referee.c): the entry point
 * _start reads the game seed from argv[1], seeds the random generator,
 * wipes everything the kernel put on the initial stack (arguments,
 * environment, auxiliary vector with its random bytes, strings), moves to
 * a stack at a fixed distance from the top of the stack mapping, unmaps
 * the kernel's clock pages (vDSO), clears the registers, locks the process
 * down with seccomp strict mode (read, write, exit and sigreturn only) and
 * only then calls main(). make_throw writes "N\n" to standard output and
 * reads the opponent's throw as "N\n" from standard input. End of input
 * means the game is over: the program exits quietly. No constructor ever
 * runs (.init_array is never run) and the participant cannot define
 * _start (duplicate symbol at link time).
 */

typedef unsigned long long u64;
typedef unsigned long usize;

#ifndef __wasm__
#define SYS_read 0
#define SYS_write 1
#define SYS_munmap 11
#define SYS_exit 60
#define SYS_prctl 157
#define PR_SET_SECCOMP 22
#define SECCOMP_MODE_STRICT 1

/* Exit codes the referee understands as faults of the runtime, not the player. */
#define EXIT_BAD_SEED 120
#define EXIT_NO_LOCKDOWN 121
#define EXIT_BAD_START 123

/* Auxiliary vector entries (<elf.h>). */
#define AT_NULL 0
#define AT_EXECFN 31
#define AT_SYSINFO_EHDR 33

/* The strategy's stack starts this far below the top of the stack mapping. */
#define STACK_FROM_TOP 16384

static long knobeln_syscall3(long n, long a, long b, long c)
{
    long ret;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(n), "D"(a), "S"(b), "d"(c)
                     : "rcx", "r11", "memory");
    return ret;
}

static void knobeln_exit(int code)
{
    for (;;)
        knobeln_syscall3(SYS_exit, code, 0, 0);
}
#endif /* !__wasm__ */

/* ---- memory routines gcc may call on its own ---- */

void *memcpy(void *dst, const void *src, usize n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    while (n--)
        *d++ = *s++;
    return dst;
}

void *memmove(void *dst, const void *src, usize n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    if (d < s) {
        while (n--)
            *d++ = *s++;
    } else if (d > s) {
        d += n;
        s += n;
        while (n--)
            *--d = *--s;
    }
    return dst;
}

void *memset(void *dst, int c, usize n)
{
    unsigned char *d = dst;
    while (n--)
        *d++ = (unsigned char)c;
    return dst;
}

int memcmp(const void *a, const void *b, usize n)
{
    const unsigned char *x = a, *y = b;
    for (; n; n--, x++, y++)
        if (*x != *y)
            return *x < *y ? -1 : 1;
    return 0;
}

/* ---- random numbers: SplitMix64, seeded by the referee ---- */

static u64 knobeln_seed;
static u64 knobeln_rng;

static u64 knobeln_next64(void)
{
    u64 z;
    knobeln_rng += 0x9E3779B97F4A7C15ULL;
    z = knobeln_rng;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

int init_random()
{
    knobeln_rng = knobeln_seed;
    return (int)(knobeln_seed & 0x7fffffff);
}

int next_random(int low, int high)
{
    u64 span, limit, x;
    if (high <= low)
        return low;
    span = (u64)((long long)high - (long long)low) + 1;
    /* rejection sampling: no modulo bias */
    limit = (0xFFFFFFFFFFFFFFFFULL / span) * span;
    do
        x = knobeln_next64();
    while (x >= limit);
    return (int)((long long)low + (long long)(x % span));
}

int log2(int number)
{
    int r = 0;
    if (number < 1)
        return 0;
    while (number >>= 1)
        r++;
    return r;
}

int count_points(int throw1, int throw2, int *points1, int *points2)
{
    long long p = throw1, q = throw2;
    if (p == q)
        return 0;
    if (p > q) {
        if (2 * q >= p) {
            *points1 += log2(throw1);
            return 1;
        }
        *points2 += log2(throw2);
        return 2;
    }
    if (2 * p >= q) {
        *points2 += log2(throw2);
        return 2;
    }
    *points1 += log2(throw1);
    return 1;
}

/* ---- the referee ---- */

#ifdef __wasm__

__attribute__((import_module("knobeln"), import_name("make_throw"))) int
knobeln_referee_throw(int my_throw);
__attribute__((import_module("knobeln"), import_name("seed"))) long long knobeln_referee_seed(void);

/* Kept even when the strategy never throws (`used`: wasm-ld keeps it), so
   that every module imports both of the referee's functions. */
__attribute__((used)) int make_throw(int my_throw)
{
    return knobeln_referee_throw(my_throw);
}

/* The referee calls this first, then main. */
__attribute__((export_name("knobeln_start"))) void knobeln_start(void)
{
    knobeln_seed = (u64)knobeln_referee_seed();
    knobeln_rng = knobeln_seed;
}

#else /* x86-64 Linux */

static char knobeln_in[64];
static int knobeln_in_len;

int make_throw(int my_throw)
{
    char out[16];
    int n = 0, i, neg = 0, len;
    long long v = my_throw, value = 0;
    char digits[16];
    if (v < 0) {
        neg = 1;
        v = -v;
    }
    do {
        digits[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    len = 0;
    if (neg)
        out[len++] = '-';
    while (n)
        out[len++] = digits[--n];
    out[len++] = '\n';
    for (i = 0; i < len;) {
        long w = knobeln_syscall3(SYS_write, 1, (long)(out + i), len - i);
        if (w <= 0)
            knobeln_exit(0);
        i += (int)w;
    }
    /* read one line: the opponent's throw */
    for (;;) {
        for (i = 0; i < knobeln_in_len; i++) {
            if (knobeln_in[i] == '\n') {
                int j, sign = 1, k = 0;
                if (knobeln_in[0] == '-') {
                    sign = -1;
                    k = 1;
                }
                for (; k < i; k++)
                    value = value * 10 + (knobeln_in[k] - '0');
                for (j = i + 1; j < knobeln_in_len; j++)
                    knobeln_in[j - i - 1] = knobeln_in[j];
                knobeln_in_len -= i + 1;
                return (int)(sign * value);
            }
        }
        if (knobeln_in_len == (int)sizeof knobeln_in)
            knobeln_exit(0); /* cannot happen with the referee */
        {
            long r = knobeln_syscall3(SYS_read, 0, (long)(knobeln_in + knobeln_in_len),
                                      (long)sizeof knobeln_in - knobeln_in_len);
            if (r <= 0)
                knobeln_exit(0); /* game over */
            knobeln_in_len += (int)r;
        }
    }
}

/* ---- entry point ---- */

extern int main();

/* Runs on the kernel's initial stack: reads the seed, wipes the initial
 * stack and unmaps the vDSO; returns the strategy's stack pointer. */
unsigned long knobeln_setup(long *sp)
{
    long argc = sp[0];
    char **argv = (char **)(sp + 1);
    char **envp;
    unsigned long *aux;
    const char *s, *execfn = 0;
    unsigned long vdso = 0, top;
    volatile char *p;
    u64 seed = 0;
    if (argc < 2 || !argv[1] || !argv[1][0])
        knobeln_exit(EXIT_BAD_SEED);
    s = argv[1];
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            knobeln_exit(EXIT_BAD_SEED);
        seed = seed * 10 + (u64)(*s - '0');
    }
    knobeln_seed = seed;
    knobeln_rng = seed;
    for (envp = argv + argc + 1; *envp; envp++)
        ;
    for (aux = (unsigned long *)(envp + 1); aux[0] != AT_NULL; aux += 2) {
        if (aux[0] == AT_EXECFN)
            execfn = (const char *)aux[1];
        else if (aux[0] == AT_SYSINFO_EHDR)
            vdso = aux[1];
    }
    if (!execfn)
        knobeln_exit(EXIT_BAD_START);
    /* The file name is the last thing below the top of the stack mapping. */
    for (s = execfn; *s; s++)
        ;
    top = ((unsigned long)s + 1 + 4095) & ~4095UL;
    if ((unsigned long)sp < top - STACK_FROM_TOP + 2048)
        knobeln_exit(EXIT_BAD_START);
    /* The clock pages (vvar) and the vDSO: their contents change with time. */
    if (vdso)
        knobeln_syscall3(SYS_munmap, (long)(vdso - 16 * 4096), 20 * 4096, 0);
    for (p = (volatile char *)sp; p < (volatile char *)top; p++)
        *p = 0;
    return top - STACK_FROM_TOP;
}

/* Runs on the strategy's stack: lock-down, then main. */
void knobeln_main(void)
{
    if (knobeln_syscall3(SYS_prctl, PR_SET_SECCOMP, SECCOMP_MODE_STRICT, 0) != 0)
        knobeln_exit(EXIT_NO_LOCKDOWN);
    main(0, (char **)0, (char **)0);
    knobeln_exit(0);
}

__asm__(".text\n"
        ".global _start\n"
        ".type _start,@function\n"
        "_start:\n"
        "    xor %rbp, %rbp\n"
        "    mov %rsp, %rdi\n"
        "    and $-16, %rsp\n"
        "    call knobeln_setup\n"
        /* the strategy's stack; wipe what setup left above it */
        "    mov %rax, %rsp\n"
        "    mov %rax, %rdi\n"
        "    mov $" "16384" ", %rcx\n"
        "    xor %eax, %eax\n"
        "    cld\n"
        "    rep stosb\n"
        /* every register as at a fresh start */
        "    xor %ebx, %ebx\n"
        "    xor %ecx, %ecx\n"
        "    xor %edx, %edx\n"
        "    xor %esi, %esi\n"
        "    xor %edi, %edi\n"
        "    xor %r8d, %r8d\n"
        "    xor %r9d, %r9d\n"
        "    xor %r10d, %r10d\n"
        "    xor %r11d, %r11d\n"
        "    xor %r12d, %r12d\n"
        "    xor %r13d, %r13d\n"
        "    xor %r14d, %r14d\n"
        "    xor %r15d, %r15d\n"
        "    call knobeln_main\n"
        "    hlt\n");

#endif /* !__wasm__ */
