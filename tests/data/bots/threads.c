/* Plays echo. In round 3 it computes on four threads and joins them,
   then tries to start processes: fork (glibc's: the clone system call),
   the fork system call, and posix_spawn (clone3, then clone with CLONE_VM
   | CLONE_VFORK, glibc's vfork's way; vfork itself is refused alike by
   number, bot_seccomp.rs's tests), and a thread whose caller waits for
   it as a vfork's parent (clone with CLONE_THREAD | CLONE_VFORK: no stop
   reaches a caller waiting so, red team). It reports each on its
   standard error: "threads: ok", "<way>: ok" or "<way> refused: <error>". */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static void *work(void *arg) {
    unsigned long n = (unsigned long)arg, sum = 0;
    for (unsigned long i = 1; i <= n; i++) sum += i;
    return (void *)sum;
}

static volatile int vfork_thread_ran;

/* A thread of the caller, which waits for it to end (CLONE_VFORK). */
static int vfork_thread(void *arg) {
    (void)arg;
    vfork_thread_ran = 1;
    return 0;
}

static void report(const char *way, long pid, int err) {
    if (pid < 0) {
        fprintf(stderr, "%s refused: %s\n", way, strerror(err));
        return;
    }
    int status = 0;
    waitpid((pid_t)pid, &status, 0);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 7)
        fprintf(stderr, "%s: ok\n", way);
    else
        fprintf(stderr, "%s: child ended with status %d\n", way, status);
}

static void try_everything(void) {
    pthread_t t[4];
    int ok = 1;
    for (int i = 0; i < 4; i++)
        if (pthread_create(&t[i], NULL, work, (void *)100000UL) != 0) ok = 0;
    for (int i = 0; ok && i < 4; i++) {
        void *r;
        pthread_join(t[i], &r);
        if ((unsigned long)r != 100000UL * 100001UL / 2) ok = 0;
    }
    fprintf(stderr, ok ? "threads: ok\n" : "threads: failed\n");

    pid_t pid = fork();
    if (pid == 0) _exit(7);
    report("fork", pid, errno);

    long raw = syscall(SYS_fork);
    if (raw == 0) syscall(SYS_exit, 7);
    report("fork call", raw, errno);

    static char stack[64 << 10];
    int flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD |
                CLONE_SYSVSEM | CLONE_VFORK;
    int tid = clone(vfork_thread, stack + sizeof stack, flags, NULL);
    if (tid < 0)
        fprintf(stderr, "vfork thread refused: %s\n", strerror(errno));
    else
        fprintf(stderr, vfork_thread_ran ? "vfork thread: ok\n" : "vfork thread: not run\n");

    char *argv[] = {"sh", "-c", "exit 7", NULL};
    int e = posix_spawn(&pid, "/bin/sh", NULL, NULL, argv, environ);
    report("posix_spawn", e ? -1 : pid, e);
    fflush(stderr);
}

int main(void) {
    char line[256];
    int round = 0;
    while (fgets(line, sizeof line, stdin)) {
        if (strncmp(line, "END", 3) == 0) return 0;
        if (++round == 3) try_everything();
        int x = 0;
        sscanf(line, "ECHO %d", &x);
        printf("%d\n", x);
        fflush(stdout);
    }
    return 0;
}
