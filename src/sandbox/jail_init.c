/* The compile jail's first process: PID 1 of the jail's PID namespace.
 *
 * The kernel sends no signal of default action to the first process of a
 * PID namespace: a tool started as that process would see its file size
 * limit only as EFBIG and its soft CPU limit not at all. So the jail's
 * first process is this init, never a tool: it forks the command (argv[1],
 * with argv[1..] and the environment) as PID 2, an ordinary process that
 * gets SIGXFSZ and SIGXCPU, and only waits. It reaps every process of the
 * namespace that ends, and when the command ends it writes the command's
 * wait status, as the kernel gave it, to descriptor 3 (a pipe only the
 * jail's parent reads; the command is started without it) and exits: the
 * kernel then ends whatever is left in the namespace. An exit status the
 * command chooses can so never read as a signal.
 *
 * Records on descriptor 3, 8 bytes each, in the machine's byte order:
 *   { 1, wait status }  the command ended (init writes it);
 *   { 2, errno }        the command could not be executed (its child
 *                       writes it, then exits with 127).
 *
 * No C library: a static program of a few system calls that allocates
 * nothing, installs no signal handler (so no signal from inside the
 * namespace reaches it: the kernel drops them for a PID 1 without a
 * handler), and runs nothing but the command. Built by build.rs with the
 * host's gcc; held by the server in a sealed memory file.
 */

#if !defined(__x86_64__) || !defined(__linux__)
#error "the jail's init is written for x86-64 Linux (its system call numbers and calling convention); port sc() and the SYS_ numbers for another machine"
#endif

#define SYS_write 1
#define SYS_fcntl 72
#define F_SETFD 2
#define FD_CLOEXEC 1
#define SYS_fork 57
#define SYS_execve 59
#define SYS_exit_group 231
#define SYS_wait4 61
#define SYS_prctl 157
#define PR_SET_DUMPABLE 4
#define EINTR 4
#define WALL 0x40000000

static long sc(long n, long a, long b, long c, long d)
{
    long r;
    register long r10 __asm__("r10") = d;
    __asm__ volatile("syscall"
                     : "=a"(r)
                     : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10)
                     : "rcx", "r11", "memory");
    return r;
}

static void record(int tag, int value)
{
    int rec[2];
    rec[0] = tag;
    rec[1] = value;
    sc(SYS_write, 3, (long)rec, sizeof rec, 0);
}

__attribute__((noreturn)) static void leave(int code)
{
    for (;;)
        sc(SYS_exit_group, code, 0, 0, 0);
}

__attribute__((noreturn, used)) void init_main(long *sp)
{
    long argc = sp[0];
    char **argv = (char **)(sp + 1);
    char **envp = argv + argc + 1;
    long pid;
    if (argc < 2)
        leave(127);
    /* No process of the jail may trace this one (it holds descriptor 3):
       the command is exec'd, which makes it dumpable again. */
    sc(SYS_prctl, PR_SET_DUMPABLE, 0, 0, 0);
    pid = sc(SYS_fork, 0, 0, 0, 0);
    if (pid < 0) {
        record(2, (int)-pid);
        leave(127);
    }
    if (pid == 0) {
        long err;
        /* The command does not get the status pipe. */
        sc(SYS_fcntl, 3, F_SETFD, FD_CLOEXEC, 0);
        err = sc(SYS_execve, (long)argv[1], (long)(argv + 1), (long)envp, 0);
        record(2, (int)-err);
        leave(127);
    }
    for (;;) {
        int status = 0;
        long r = sc(SYS_wait4, -1, (long)&status, WALL, 0);
        if (r == pid) {
            record(1, status);
            leave(0);
        }
        if (r < 0 && r != -EINTR)
            leave(127);
    }
}

__asm__(".text\n"
        ".globl _start\n"
        "_start:\n"
        "  xor %ebp, %ebp\n"
        "  mov %rsp, %rdi\n"
        "  and $-16, %rsp\n"
        "  call init_main\n"
        "  hlt\n");
