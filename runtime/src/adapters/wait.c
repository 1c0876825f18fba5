/* Calls that block a thread until time passes or a descriptor is ready: sleep, usleep,
 * nanosleep, clock_nanosleep, poll, ppoll, select, pselect, epoll_wait, epoll_pwait. Each is a
 * region of kind 5, like accept: the time a thread spends in one is waiting, which the critical
 * path never counts as CPU (plx-analysis critpath: a kind 5 call with no stream event inside).
 * Interposed by symbol (LD_PRELOAD suffices); recorded only for a measured thread outside the
 * runtime (its guard free) inside one of its measured calls, the real call run with the guard
 * released, errno the real call's. The runtime's own waits call the real functions. */
#include "../core/hotpath.h"

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
#define NOT_MEASURED 0xFFFFFFFFu
/* Keyed like socket.c's regions: the id with the top bit set, never a function address. */
#define WAIT_KEY(id) ((uintptr_t)(id) | ((uintptr_t)1 << 63))

struct region {
    _Atomic uint32_t id1; /* 1 + region id; NOT_MEASURED if the table had no room; 0 unknown */
    const char *name;
};

struct wait {
    struct plx_thread *t; /* the measured thread whose region is open, or NULL */
    uint32_t region;
};

/* The region's 1 + id, defined on first use (kind 5). Called with the guard held, or before
 * the program's threads run. */
static uint32_t region_id1(struct region *r)
{
    uint32_t v = atomic_load_explicit(&r->id1, memory_order_relaxed);
    if (PLX_UNLIKELY(v == 0)) {
        uint32_t id = plx_region_of_name(r->name, PLX_KIND_SOCKET);
        v = id & PLX_REGION_EXCLUDED ? NOT_MEASURED : (id & PLX_REGION_ID_MASK) + 1;
        atomic_store_explicit(&r->id1, v, memory_order_relaxed);
    }
    return v;
}

/* Before the real call: the region is entered (clock read last). */
__attribute__((noinline)) static struct wait wait_begin(struct region *r)
{
    struct wait w = {NULL, 0};
    if (!plx_active)
        return w;
    int saved = errno;
    /* only inside a measured call (a thread not yet attached has none): a program's waits are
     * its calls', and a process with no measured code (a launcher's event loop) stays
     * unmeasured */
    struct plx_thread *t = plx_self;
    if (t && !t->guard && t->depth > 0) {
        t->guard++;
        uint32_t v = region_id1(r);
        if (v != NOT_MEASURED) {
            w.t = t;
            w.region = v - 1;
            plx_enter(t, WAIT_KEY(w.region), w.region);
        }
        t->guard--;
    }
    errno = saved;
    return w;
}

/* After it: the region is left (the clock read first). */
__attribute__((noinline)) static void wait_end(struct wait w)
{
    struct plx_thread *t = w.t;
    if (!t)
        return;
    int saved = errno;
    uint64_t now = plx_ticks();
    /* the guard is taken from outside only by the process end, which has written this thread */
    if (!t->guard && !t->dead) {
        t->guard++;
        struct plx_frame *f = t->depth ? &t->stack[t->depth - 1] : NULL;
        if (f && f->key == WAIT_KEY(w.region))
            plx_leave(t, f, now);
        else
            t->lost_events++; /* no frame (stack full) or not ours */
        t->guard--;
    }
    errno = saved;
}

/* The runtime's own waits call the real functions: nothing of the runtime is recorded. */
typedef int (*nanosleep_fn)(const struct timespec *, struct timespec *);
typedef int (*clock_nanosleep_fn)(clockid_t, int, const struct timespec *, struct timespec *);

int plx_real_nanosleep(const struct timespec *req, struct timespec *rem)
{
    static _Atomic nanosleep_fn real;
    nanosleep_fn f = atomic_load_explicit(&real, memory_order_relaxed);
    if (!f) {
        f = (nanosleep_fn)dlsym(RTLD_NEXT, "nanosleep");
        atomic_store_explicit(&real, f, memory_order_relaxed);
    }
    return f(req, rem);
}

int plx_real_clock_nanosleep(clockid_t c, int flags, const struct timespec *req,
                             struct timespec *rem)
{
    static _Atomic clock_nanosleep_fn real;
    clock_nanosleep_fn f = atomic_load_explicit(&real, memory_order_relaxed);
    if (!f) {
        f = (clock_nanosleep_fn)dlsym(RTLD_NEXT, "clock_nanosleep");
        atomic_store_explicit(&real, f, memory_order_relaxed);
    }
    return f(c, flags, req, rem);
}

#if defined(__SANITIZE_THREAD__)
#define PLX_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define PLX_TSAN 1
#endif
#endif

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
            (void)region_id1(&r_##name);                                                   \
    }
#else
#define WAIT_REGION_INIT(name)
#endif

/* A wrapper of `name` returning TYPE with parameters PARAMS and arguments ARGS. */
#define LIST(...) __VA_ARGS__
#define WAIT_CALL(type, name, PARAMS, ARGS)                                                   \
    static struct region r_##name = {0, #name};                                            \
    WAIT_REGION_INIT(name)                                                                 \
    PLX_EXPORT type name(LIST PARAMS)                                                      \
    {                                                                                      \
        struct region *const r_ = &r_##name;                                               \
        static type (*_Atomic real_)(LIST PARAMS);                                         \
        type (*f_)(LIST PARAMS) = atomic_load_explicit(&real_, memory_order_relaxed);      \
        if (!f_) {                                                                         \
            f_ = (type(*)(LIST PARAMS))dlsym(RTLD_NEXT, #name);                             \
            atomic_store_explicit(&real_, f_, memory_order_relaxed);                       \
        }                                                                                  \
        struct wait w_ = wait_begin(r_);                                                  \
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
