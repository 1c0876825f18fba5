/* Calls that block a thread until time passes or a descriptor is ready: sleep, usleep,
 * nanosleep, clock_nanosleep, poll, ppoll, select, pselect, epoll_wait, epoll_pwait, and Java's
 * Thread.sleep (the JVM's JVM_Sleep, region `Thread.sleep`). Each is a region of kind 5, like
 * accept: the time a thread spends in one is waiting, which the critical
 * path never counts as CPU (plx-analysis critpath: a kind 5 call with no stream event inside).
 * Interposed by symbol (LD_PRELOAD suffices); recorded for any measured thread outside the
 * runtime (its guard free), inside a measured call or not, the real call run with the guard
 * released, errno the real call's. The runtime's own waits call the real functions
 * (core/real_sleep.c). */
#include "../core/hotpath.h"
#include "call_region.h"

#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <stdatomic.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>

#define PLX_EXPORT __attribute__((visibility("default")))

#if defined(__SANITIZE_THREAD__)
#define PLX_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define PLX_TSAN 1
#endif
#endif

/* Before the real call: the region is entered (clock read last). */
__attribute__((noinline)) static struct plx_call wait_begin(struct plx_call_region *r)
{
    struct plx_call w = {NULL, 0};
    if (!plx_active)
        return w;
    int saved = errno;
    /* any measured thread, inside a measured call or not (an uninstrumented program's waits
     * are waits too): a thread the program started is attached by its first wait, as by its
     * first lock or socket call; a library's helper thread not yet measured stays unmeasured,
     * and a launcher's threads are never measured (process.c), so its event loop is not
     * recorded. Under ThreadSanitizer (see below) no thread is attached here. */
#ifdef PLX_TSAN
    struct plx_thread *t = plx_self && !plx_self->guard ? plx_self : NULL;
#else
    struct plx_thread *t = plx_wrapper_thread();
#endif
    if (t)
        w = plx_call_enter(t, r);
    errno = saved;
    return w;
}

/* After it: the region is left (the clock read first). */
__attribute__((noinline)) static void wait_end(struct plx_call w)
{
    struct plx_thread *t = w.t;
    if (!t)
        return;
    int saved = errno;
    uint64_t now = plx_ticks();
    /* the guard is taken from outside only by the process end, which has written this thread */
    if (!t->guard && !t->dead) {
        t->guard++;
        plx_call_leave(w, now);
        t->guard--;
    }
    errno = saved;
}

#ifdef PLX_TSAN
/* ThreadSanitizer runs these wrappers inside its own interceptors' blocking calls, where it
 * ignores synchronization (tsan's BlockingCall: "we do not expect to be executing any user/runtime
 * code"): a first sight's region definition there would be reported as racing with another
 * thread's under the same locks. In that build every wait region is defined at load, before any
 * thread of the program runs (a process then lists them even when unused). */
#define WAIT_REGION_INIT(name)                                                                \
    __attribute__((constructor(103))) static void define_##name(void)                      \
    {                                                                                      \
        if (plx_active)                                                                    \
            (void)plx_call_region_id1(&r_##name);                                          \
    }
#else
#define WAIT_REGION_INIT(name)
#endif

/* A wrapper of `name` returning TYPE with parameters PARAMS and arguments ARGS. */
#define LIST(...) __VA_ARGS__
#define WAIT_CALL(type, name, PARAMS, ARGS)                                                   \
    PLX_CALL_REGION(name);                                            \
    WAIT_REGION_INIT(name)                                                                 \
    PLX_EXPORT type name(LIST PARAMS)                                                      \
    {                                                                                      \
        struct plx_call_region *const r_ = &r_##name;                                               \
        static type (*_Atomic real_)(LIST PARAMS);                                         \
        type (*f_)(LIST PARAMS) = atomic_load_explicit(&real_, memory_order_relaxed);      \
        if (!f_) {                                                                         \
            f_ = (type(*)(LIST PARAMS))dlsym(RTLD_NEXT, #name);                             \
            atomic_store_explicit(&real_, f_, memory_order_relaxed);                       \
        }                                                                                  \
        struct plx_call w_ = wait_begin(r_);                                                  \
        type rc_ = f_(LIST ARGS);                                                          \
        wait_end(w_);                                                                      \
        return rc_;                                                                        \
    }

WAIT_CALL(unsigned, sleep, (unsigned s), (s))
WAIT_CALL(int, usleep, (useconds_t us), (us))
WAIT_CALL(int, nanosleep, (const struct timespec *req, struct timespec *rem), (req, rem))
WAIT_CALL(int, clock_nanosleep,
          (clockid_t c, int flags, const struct timespec *req, struct timespec *rem),
          (c, flags, req, rem))
WAIT_CALL(int, poll, (struct pollfd *fds, nfds_t n, int timeout), (fds, n, timeout))
WAIT_CALL(int, ppoll,
          (struct pollfd *fds, nfds_t n, const struct timespec *tmo, const sigset_t *mask),
          (fds, n, tmo, mask))
WAIT_CALL(int, select, (int n, fd_set *r, fd_set *w, fd_set *e, struct timeval *tmo),
          (n, r, w, e, tmo))
WAIT_CALL(int, pselect,
          (int n, fd_set *r, fd_set *w, fd_set *e, const struct timespec *tmo,
           const sigset_t *mask),
          (n, r, w, e, tmo, mask))
WAIT_CALL(int, epoll_wait, (int fd, struct epoll_event *ev, int max, int timeout),
          (fd, ev, max, timeout))
WAIT_CALL(int, epoll_pwait,
          (int fd, struct epoll_event *ev, int max, int timeout, const sigset_t *mask),
          (fd, ev, max, timeout, mask))

/* Java's Thread.sleep: libjava registers the JVM's JVM_Sleep as the native of Thread.sleep
 * (Thread.sleep0 in newer JDKs; both take the JNI environment, the class and a jlong), found
 * by symbol, so the preloaded runtime's comes first. The JVM sleeps in a timed condition wait
 * of its own: that wait and the locks around it are the sleep (java_blocked, as inside a Java
 * monitor wait), never a condition wait of the thread. */
static struct plx_call_region r_jvm_sleep = {0, "Thread.sleep"};
WAIT_REGION_INIT(jvm_sleep)

PLX_EXPORT void JVM_Sleep(void *env, void *thread_class, int64_t time)
{
    static void (*_Atomic real)(void *, void *, int64_t);
    void (*f)(void *, void *, int64_t) = atomic_load_explicit(&real, memory_order_relaxed);
    if (!f) {
        f = (void (*)(void *, void *, int64_t))dlsym(RTLD_NEXT, "JVM_Sleep");
        atomic_store_explicit(&real, f, memory_order_relaxed);
    }
    struct plx_call w = wait_begin(&r_jvm_sleep);
    int blocked = w.t ? w.t->java_blocked : 0;
    if (w.t)
        w.t->java_blocked = 1;
    f(env, thread_class, time);
    if (w.t)
        w.t->java_blocked = blocked;
    wait_end(w);
}
