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
 * jail's parent reads; the command is started without it). An exit status
 * the command chooses can so never read as a signal.
 *
 * Whenever it ends (the command ended, or the jail asked), it ends the
 * run itself: it kills every other process of the namespace (kill(-1,
 * SIGKILL) from PID 1 reaches all of them), reaps each one (an orphan is
 * reparented to it), and once none is left writes that it did and exits.
 * A process that the kernel ends with the namespace is reaped without
 * adding its CPU time to anyone's; a process reaped here adds its own, and
 * that of every child it reaped, to the init's children's count, which the
 * jail reads from the kernel when it reaps the init (wait4's rusage): the
 * run's CPU is then every process's, in the kernel's own unit. The jail
 * asks through descriptor 4, a pipe whose write end only the jail's parent
 * holds (the command is started without the read end): a byte, or its
 * closing (the parent gone), ends the run. No process of the jail can ask
 * in its stead, or keep the init from answering: it holds neither pipe,
 * cannot trace the init, and every signal it sends the init is dropped by
 * the kernel (no handler) but SIGCHLD, which the init blocks and reads
 * from a signalfd only as a cue to look for ended children (wait4 with
 * WNOHANG: a forged one finds none).
 *
 * A bot's native program is given as descriptor 5 (its sealed copy, not a
 * file of the bot's root): where that descriptor is open when the init
 * starts, the command is executed from it (execveat, argv[1] as its
 * argv[0]), close-on-exec, so the command never holds it. Where it is
 * closed (every compile jail: descriptor 5 held the init itself and was
 * closed at its exec) the command is argv[1], a path.
 *
 * A bot that may not start processes (no control group counts its CPU)
 * gets a second seccomp filter from the server, as text in the init's
 * argv[0] after a ':' (four hexadecimal numbers per instruction: code,
 * jt, jf, k; 4, 2, 2 and 8 digits): the init's child installs it just
 * before its exec, so that the init may still fork the command once and
 * the command, from its first instruction, may not (bot_seccomp.rs
 * builds and tests the filter). A filter the init cannot read or install
 * is the command's failed start ({ 2, errno }): never a command run
 * without it.
 *
 * Records on descriptor 3, 8 bytes each, in the machine's byte order:
 *   { 1, wait status }  the command ended (init writes it);
 *   { 2, errno }        the command could not be executed (its child
 *                       writes it, then exits with 127), or the init could
 *                       not set itself up (fork, signalfd);
 *   { 3, 0 }            every other process of the namespace is killed and
 *                       reaped: the init's children's CPU is the run's.
 *
 * No C library: a static program of a few system calls that allocates
 * nothing, installs no signal handler, and runs nothing but the command.
 * Built by build.rs with the host's gcc; held by the server in a sealed
 * memory file.
 */

#if !defined(__x86_64__) || !defined(__linux__)
#error "the jail's init is written for x86-64 Linux (its system call numbers and calling convention); port sc() and the SYS_ numbers for another machine"
#endif

#define SYS_read 0
#define SYS_write 1
#define SYS_poll 7
#define SYS_rt_sigprocmask 14
#define SIG_BLOCK 0
#define SIG_SETMASK 2
#define SYS_fcntl 72
#define F_SETFD 2
#define FD_CLOEXEC 1
#define SYS_fork 57
#define SYS_execve 59
#define SYS_execveat 322
#define AT_EMPTY_PATH 0x1000
#define SYS_exit_group 231
#define SYS_wait4 61
#define SYS_kill 62
#define SYS_prctl 157
#define SYS_signalfd4 289
#define PR_SET_DUMPABLE 4
#define PR_SET_SECCOMP 22
#define SECCOMP_MODE_FILTER 2
#define EINVAL 22
#define MAX_FILTER 64
#define EINTR 4
#define ECHILD 10
#define WNOHANG 1
#define WALL 0x40000000
#define SIGKILL 9
#define SIGCHLD 17
#define O_NONBLOCK 04000
#define O_CLOEXEC 02000000
#define POLLIN 1

/* The status pipe and the jail's request pipe; the program, if given. */
#define STATUS_FD 3
#define ASK_FD 4
#define PROGRAM_FD 5

struct pollfd {
    int fd;
    short events;
    short revents;
};

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

/* The same with a fifth argument (execveat's flags). */
static long sc5(long n, long a, long b, long c, long d, long e)
{
    long r;
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    __asm__ volatile("syscall"
                     : "=a"(r)
                     : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8)
                     : "rcx", "r11", "memory");
    return r;
}

struct sock_filter {
    unsigned short code;
    unsigned char jt;
    unsigned char jf;
    unsigned int k;
};

struct sock_fprog {
    unsigned short len;
    struct sock_filter *filter;
};

/* The value of `n` hexadecimal digits at `s`, or -1 if one is not. */
static long hex(const char *s, int n)
{
    long v = 0;
    for (int i = 0; i < n; i++) {
        char c = s[i];
        int d;
        if (c >= '0' && c <= '9')
            d = c - '0';
        else if (c >= 'a' && c <= 'f')
            d = c - 'a' + 10;
        else
            return -1;
        v = v * 16 + d;
    }
    return v;
}

/* The filter in argv[0] after its ':' into `out`: its length, 0 where
   argv[0] has none, -EINVAL where it cannot be read. */
static long read_filter(const char *arg0, struct sock_filter *out)
{
    long n = 0;
    while (*arg0 && *arg0 != ':')
        arg0++;
    if (!*arg0)
        return 0;
    arg0++;
    while (*arg0) {
        long code = hex(arg0, 4), jt, jf, k;
        if (n == MAX_FILTER || code < 0)
            return -EINVAL;
        jt = hex(arg0 + 4, 2);
        jf = jt < 0 ? -1 : hex(arg0 + 6, 2);
        k = jf < 0 ? -1 : hex(arg0 + 8, 8);
        if (k < 0)
            return -EINVAL;
        out[n].code = (unsigned short)code;
        out[n].jt = (unsigned char)jt;
        out[n].jf = (unsigned char)jf;
        out[n].k = (unsigned int)k;
        n++;
        arg0 += 16;
    }
    return n == 0 ? -EINVAL : n;
}

static void record(int tag, int value)
{
    int rec[2];
    rec[0] = tag;
    rec[1] = value;
    sc(SYS_write, STATUS_FD, (long)rec, sizeof rec, 0);
}

__attribute__((noreturn)) static void leave(int code)
{
    for (;;)
        sc(SYS_exit_group, code, 0, 0, 0);
}

/* Ends the run: kills every other process of the namespace and reaps each
   until none is left (killing again before each wait, so that nothing a
   fork made meanwhile survives), says so, and exits. */
__attribute__((noreturn)) static void end_run(void)
{
    for (;;) {
        int status = 0;
        long r;
        sc(SYS_kill, -1, SIGKILL, 0, 0);
        r = sc(SYS_wait4, -1, (long)&status, WALL, 0);
        if (r == -ECHILD)
            break;
        if (r < 0 && r != -EINTR)
            leave(127);
    }
    record(3, 0);
    leave(0);
}

__attribute__((noreturn, used)) void init_main(long *sp)
{
    long argc = sp[0];
    char **argv = (char **)(sp + 1);
    char **envp = argv + argc + 1;
    unsigned long chld = 1UL << (SIGCHLD - 1), before = 0;
    long pid, sfd, program, filter_len;
    struct sock_filter filter[MAX_FILTER];
    if (argc < 2)
        leave(127);
    filter_len = read_filter(argv[0], filter);
    /* No process of the jail may trace this one (it holds the pipes): the
       command is exec'd, which makes it dumpable again. */
    sc(SYS_prctl, PR_SET_DUMPABLE, 0, 0, 0);
    /* The command gets neither pipe. */
    sc(SYS_fcntl, STATUS_FD, F_SETFD, FD_CLOEXEC, 0);
    sc(SYS_fcntl, ASK_FD, F_SETFD, FD_CLOEXEC, 0);
    /* Open (then close-on-exec) only where the server gave a program. */
    program = sc(SYS_fcntl, PROGRAM_FD, F_SETFD, FD_CLOEXEC, 0) == 0;
    /* An ended child is a readable signalfd (the signal stays blocked). */
    sc(SYS_rt_sigprocmask, SIG_BLOCK, (long)&chld, (long)&before, sizeof chld);
    sfd = sc(SYS_signalfd4, -1, (long)&chld, sizeof chld, O_NONBLOCK | O_CLOEXEC);
    if (sfd < 0) {
        record(2, (int)-sfd);
        leave(127);
    }
    pid = sc(SYS_fork, 0, 0, 0, 0);
    if (pid < 0) {
        record(2, (int)-pid);
        leave(127);
    }
    if (pid == 0) {
        long err;
        sc(SYS_rt_sigprocmask, SIG_SETMASK, (long)&before, 0, sizeof before);
        if (filter_len != 0) {
            struct sock_fprog prog = {(unsigned short)filter_len, filter};
            err = filter_len < 0
                      ? filter_len
                      : sc(SYS_prctl, PR_SET_SECCOMP, SECCOMP_MODE_FILTER, (long)&prog, 0);
            if (err < 0) {
                record(2, (int)-err);
                leave(127);
            }
        }
        if (program)
            err = sc5(SYS_execveat, PROGRAM_FD, (long)"", (long)(argv + 1), (long)envp,
                      AT_EMPTY_PATH);
        else
            err = sc(SYS_execve, (long)argv[1], (long)(argv + 1), (long)envp, 0);
        record(2, (int)-err);
        leave(127);
    }
    for (;;) {
        struct pollfd fds[2] = {{ASK_FD, POLLIN, 0}, {(int)sfd, POLLIN, 0}};
        long r = sc(SYS_poll, (long)fds, 2, -1, 0);
        if (r < 0) {
            if (r == -EINTR)
                continue;
            end_run();
        }
        /* The jail asks (a byte, its end closed, or no such pipe). */
        if (fds[0].revents)
            end_run();
        if (fds[1].revents) {
            char buf[128];
            while (sc(SYS_read, sfd, (long)buf, sizeof buf, 0) > 0) {
            }
            for (;;) {
                int status = 0;
                r = sc(SYS_wait4, -1, (long)&status, WALL | WNOHANG, 0);
                if (r == pid) {
                    record(1, status);
                    end_run();
                }
                if (r == -EINTR || r > 0)
                    continue;
                break;
            }
        }
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
