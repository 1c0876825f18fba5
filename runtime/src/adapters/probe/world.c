/* Stopping every other thread of this process from inside it, for rewriting function entries
 * while no thread executes them (plx ctl insert/remove, plx detach over the control socket).
 *
 * A thread cannot ptrace a thread of its own process, so the calling thread clone()s a helper
 * that shares the memory but is another process (CLONE_VM, no CLONE_THREAD), names it as its
 * tracer for Yama (PR_SET_PTRACER) and lets it PTRACE_SEIZE + PTRACE_INTERRUPT every thread but
 * the caller. A ptrace stop sends no signal: a thread in nanosleep, poll or a futex wait is
 * restarted by the kernel with the time it had left, so the program's sleeps are not cut short.
 * A thread stopped with its program counter inside bytes about to be displaced is single-stepped
 * out of them; one waiting in a system call there cannot be, and its range is reported blocked.
 *
 * Invariant: the helper runs on its own stack with the caller's TLS (no CLONE_SETTLS) while
 * the caller waits on a pipe, so it uses raw system calls only (no errno, no lock, no malloc:
 * a stopped thread may hold any lock of the C library). */
#include "world.h"

#include "../../core/plx_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#define HELPER_STACK (64 * 1024)
#define MAX_STEPS 16 /* the displaced bytes hold at most 5 instructions */

static long raw(long n, long a, long b, long c, long d)
{
    long ret;
    register long r10 __asm__("r10") = d;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10)
                     : "rcx", "r11", "memory");
    return ret;
}

#define RAW(n, a, b, c, d) raw((long)(n), (long)(a), (long)(b), (long)(c), (long)(d))

static int in_ranges(const struct plx_world *w, uint64_t pc)
{
    for (uint32_t i = 0; i < w->nranges; i++)
        if (pc > w->ranges[i].lo && pc < w->ranges[i].hi)
            return (int)i;
    return -1;
}

/* Waits for a stop of `tid`: its status, or -1 when it ended. */
static int wait_stop(pid_t tid)
{
    int status = 0;
    for (;;) {
        long r = RAW(SYS_wait4, tid, &status, __WALL, 0);
        if (r == -EINTR)
            continue;
        if (r < 0 || WIFEXITED(status) || WIFSIGNALED(status))
            return -1;
        return status;
    }
}

static int seized(const struct plx_world *w, pid_t tid)
{
    for (uint32_t i = 0; i < w->n; i++)
        if (w->tids[i] == tid)
            return 1;
    return 0;
}

/* Seizes and interrupts one thread; 0, 1 when it ended meanwhile, or -errno. */
static int stop_one(struct plx_world *w, pid_t tid)
{
    long r = RAW(SYS_ptrace, PTRACE_SEIZE, tid, 0, 0);
    if (r == -ESRCH)
        return 1;
    if (r < 0)
        return (int)r;
    RAW(SYS_ptrace, PTRACE_INTERRUPT, tid, 0, 0);
    int pending = 0;
    for (;;) {
        int status = wait_stop(tid);
        if (status < 0)
            return 1;
        if ((status >> 16) == PTRACE_EVENT_STOP)
            break;
        /* a signal came first: kept for the release, then wait for our stop */
        pending = WSTOPSIG(status);
        RAW(SYS_ptrace, PTRACE_INTERRUPT, tid, 0, 0);
        RAW(SYS_ptrace, PTRACE_CONT, tid, 0, 0);
    }
    w->tids[w->n] = tid;
    w->pending[w->n] = pending;
    w->n++;
    return 0;
}

/* Every thread of the process but the caller, listed again until none is new (threads start
 * while others are being stopped). 0 or -errno. */
static int stop_all(struct plx_world *w)
{
    for (;;) {
        int fd = (int)RAW(SYS_open, w->tasks, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0, 0);
        if (fd < 0)
            return fd;
        int added = 0;
        char buf[4096];
        long got;
        while ((got = RAW(SYS_getdents64, fd, buf, sizeof buf, 0)) > 0) {
            for (long off = 0; off < got;) {
                struct {
                    uint64_t ino;
                    int64_t off;
                    unsigned short reclen;
                    unsigned char type;
                    char name[];
                } *d = (void *)(buf + off);
                off += d->reclen;
                pid_t tid = 0;
                for (const char *c = d->name; *c >= '0' && *c <= '9'; c++)
                    tid = tid * 10 + (*c - '0');
                if (tid <= 0 || tid == w->caller || seized(w, tid))
                    continue;
                if (w->n == PLX_WORLD_MAX_THREADS) {
                    RAW(SYS_close, fd, 0, 0, 0);
                    return -E2BIG;
                }
                int rc = stop_one(w, tid);
                if (rc < 0) {
                    RAW(SYS_close, fd, 0, 0, 0);
                    return rc;
                }
                added += rc == 0;
            }
        }
        RAW(SYS_close, fd, 0, 0, 0);
        if (!added)
            return 0;
    }
}

/* Moves thread `i` out of the displaced ranges by single steps. */
static void step_out(struct plx_world *w, uint32_t i)
{
    pid_t tid = w->tids[i];
    struct user_regs_struct r;
    if (RAW(SYS_ptrace, PTRACE_GETREGS, tid, 0, &r) < 0)
        return;
    int k = in_ranges(w, r.rip);
    if (k < 0)
        return;
    /* stopped in a system call issued from the displaced bytes: stepping would wait for it */
    if ((int64_t)r.orig_rax >= 0) {
        w->blocked[k] = 1;
        return;
    }
    for (int s = 0; s < MAX_STEPS && k >= 0; s++) {
        if (RAW(SYS_ptrace, PTRACE_SINGLESTEP, tid, 0, 0) < 0)
            break;
        int status = wait_stop(tid);
        if (status < 0)
            return;
        if (WSTOPSIG(status) != SIGTRAP) { /* a signal: kept for the release */
            w->pending[i] = WSTOPSIG(status);
            break;
        }
        if (RAW(SYS_ptrace, PTRACE_GETREGS, tid, 0, &r) < 0)
            break;
        k = in_ranges(w, r.rip);
    }
    if (k >= 0)
        w->blocked[k] = 1;
    else
        w->stepped++;
}

static void release_all(struct plx_world *w)
{
    for (uint32_t i = 0; i < w->n; i++)
        RAW(SYS_ptrace, PTRACE_DETACH, w->tids[i], 0, w->pending[i]);
    w->n = 0;
}

static int helper_main(void *arg)
{
    struct plx_world *w = arg;
    char c = 0;
    if (RAW(SYS_read, w->to_helper[0], &c, 1, 0) != 1 || c != 'g')
        return 0;
    int rc = stop_all(w);
    if (rc == 0)
        for (uint32_t i = 0; i < w->n; i++)
            step_out(w, i);
    w->error = -rc;
    c = rc == 0 ? 's' : 'e';
    RAW(SYS_write, w->to_caller[1], &c, 1, 0);
    if (rc == 0) /* wait for the caller's writes, then let every thread go */
        while (RAW(SYS_read, w->to_helper[0], &c, 1, 0) == -EINTR)
            ;
    release_all(w);
    return 0;
}

static void close_pipes(struct plx_world *w)
{
    int *fds[] = {w->to_helper, w->to_caller};
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < 2; k++)
            if (fds[i][k] >= 0) {
                close(fds[i][k]);
                fds[i][k] = -1;
            }
}

int plx_world_stop(struct plx_world *w)
{
    w->process = getpid();
    snprintf(w->tasks, sizeof w->tasks, "/proc/%d/task", (int)w->process);
    w->caller = (pid_t)syscall(SYS_gettid);
    w->n = 0;
    w->stepped = 0;
    w->error = 0;
    w->to_helper[0] = w->to_helper[1] = w->to_caller[0] = w->to_caller[1] = -1;
    for (uint32_t i = 0; i < w->nranges; i++)
        w->blocked[i] = 0;
    if (pipe2(w->to_helper, O_CLOEXEC) != 0 || pipe2(w->to_caller, O_CLOEXEC) != 0) {
        w->error = errno;
        close_pipes(w);
        return -1;
    }
    w->stack = mmap(NULL, HELPER_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                    -1, 0);
    if (w->stack == MAP_FAILED) {
        w->error = errno;
        close_pipes(w);
        return -1;
    }
    /* exit signal 0: the program's wait(), even waitpid(-1), never sees the helper */
    w->helper = clone(helper_main, (char *)w->stack + HELPER_STACK,
                      CLONE_VM | CLONE_FILES | CLONE_UNTRACED, w);
    if (w->helper < 0) {
        w->error = errno;
        munmap(w->stack, HELPER_STACK);
        close_pipes(w);
        return -1;
    }
    (void)prctl(PR_SET_PTRACER, (unsigned long)w->helper, 0, 0, 0); /* EINVAL without Yama */
    char c = 'g';
    (void)RAW(SYS_write, w->to_helper[1], &c, 1, 0);
    long got;
    while ((got = RAW(SYS_read, w->to_caller[0], &c, 1, 0)) == -EINTR)
        ;
    if (got == 1 && c == 's')
        return 0;
    plx_world_release(w);
    if (w->error == 0)
        w->error = ECHILD;
    return -1;
}

void plx_world_release(struct plx_world *w)
{
    char c = 'r';
    (void)RAW(SYS_write, w->to_helper[1], &c, 1, 0);
    int status;
    while (RAW(SYS_wait4, w->helper, &status, __WALL, 0) == -EINTR)
        ;
    (void)prctl(PR_SET_PTRACER, 0, 0, 0, 0);
    munmap(w->stack, HELPER_STACK);
    close_pipes(w);
}
