/* SIGTRAP kept for call-stack sampling (stack_sampler.c, PLX_SAMPLE_SIGNAL=trap): a program's
 * sigaction() or signal() of SIGTRAP sets the disposition the sampler passes the program's own
 * traps on to, the sampler's handler staying installed — else a program taking SIGTRAP (Open
 * MPI's mpirun forwards it to the job) would receive every sample. Interposed by symbol; every
 * other call goes straight to the C library's. A program that installs handlers by the raw
 * rt_sigaction system call is not seen here: plx_stack_sampler_check finds it later
 * (docs/sampling.md). */
#include "../core/plx_internal.h"

#include <signal.h>

/* not instrumented: a sanitizer's runtime installs its handlers through these before it is
 * initialized itself */
#define PLX_EXPORT __attribute__((visibility("default"), no_sanitize("thread", "address")))

extern int __sigaction(int sig, const struct sigaction *act, struct sigaction *old);
extern sighandler_t bsd_signal(int sig, sighandler_t handler);
extern sighandler_t __sysv_signal(int sig, sighandler_t handler);

PLX_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    if (sig == SIGTRAP && plx_stack_sampler_keep_trap(act, old))
        return 0;
    return __sigaction(sig, act, old);
}

/* signal() and sysv_signal() as the C library defines them (BSD and System V semantics). */
__attribute__((no_sanitize("thread", "address"))) static sighandler_t kept(sighandler_t handler, int flags)
{
    struct sigaction act, old;
    memset(&act, 0, sizeof act);
    act.sa_handler = handler;
    act.sa_flags = flags;
    plx_stack_sampler_keep_trap(&act, &old);
    return old.sa_flags & SA_SIGINFO ? (sighandler_t)(void (*)(void))old.sa_sigaction : old.sa_handler;
}

PLX_EXPORT sighandler_t signal(int sig, sighandler_t handler)
{
    if (sig == SIGTRAP && plx_stack_sampler_keep_trap(NULL, NULL))
        return kept(handler, SA_RESTART);
    return bsd_signal(sig, handler);
}

PLX_EXPORT sighandler_t sysv_signal(int sig, sighandler_t handler)
{
    if (sig == SIGTRAP && plx_stack_sampler_keep_trap(NULL, NULL))
        return kept(handler, SA_RESETHAND | SA_NODEFER);
    return __sysv_signal(sig, handler);
}
