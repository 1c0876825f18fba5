/* The real nanosleep and clock_nanosleep (the next definitions after libplx's), for the
 * runtime's own waits: adapters/wait.c exports the program's as wait regions, and nothing the
 * runtime does is recorded. */
#include "plx_internal.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <time.h>

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
