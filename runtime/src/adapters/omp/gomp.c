/* GCC's libgomp measured by interposing its entry points (GOMP_*, omp_*_lock), resolved with
 * dlsym(RTLD_NEXT): LD_PRELOAD or linking libplx before libgomp suffices.
 *
 * A parallel region runs the outlined body through `outlined`, which enters the region on each
 * thread of the team and ends with a measured barrier: every thread's wait for the last one is
 * then that barrier's, and libgomp's own closing barrier finds the team already there. Loops and
 * sections are regions from their start call to their end call; a single from its start to the
 * thread's next barrier or work-share; static loops call nothing (their barrier is GOMP_barrier).
 * Task bodies are named after their construct for the compiler hooks. */
#include "omp.h"

#include <dlfcn.h>
#include <sched.h>
#include <stdbool.h>
#include <string.h>

#define PLX_EXPORT __attribute__((visibility("default")))
#define SITE ((uintptr_t)__builtin_return_address(0))
#define REAL(type, name)                                                                      \
    static __typeof__((type)0) real;                                                          \
    if (PLX_UNLIKELY(!real))                                                                  \
        real = (type)gomp_symbol(name)

/* libgomp's `name`. A program linked by plx-cc with --as-needed (Debian's default) whose only
 * OpenMP calls are ones libplx.so defines does not list libgomp at all: it is loaded then. */
static void *gomp_symbol(const char *name)
{
    void *p = dlsym(RTLD_NEXT, name);
    if (!p) {
        void *lib = dlopen("libgomp.so.1", RTLD_NOW | RTLD_GLOBAL);
        p = lib ? dlsym(lib, name) : NULL;
    }
    /* the pthread calls of libgomp's own code are what its measured entry points implement */
    plx_sync_internal_library(p);
    return p;
}

typedef void (*body_fn)(void *);
typedef unsigned long long ull;

/* Constructs open on this thread (region id + 1; 0 none), for the current team; in_team: the
 * thread runs a measured team's body. */
struct open_constructs {
    uint32_t single1, ws1, in_team;
};
static PLX_TLS struct open_constructs open_now;

static int (*q_thread_num)(void), (*q_num_threads)(void), (*q_level)(void);
static void (*real_barrier)(void);

static int queries(void)
{
    if (PLX_UNLIKELY(!q_level)) {
        q_thread_num = (int (*)(void))gomp_symbol("omp_get_thread_num");
        q_num_threads = (int (*)(void))gomp_symbol("omp_get_num_threads");
        real_barrier = (void (*)(void))gomp_symbol("GOMP_barrier");
        q_level = (int (*)(void))gomp_symbol("omp_get_level");
    }
    return q_thread_num && q_num_threads && real_barrier && q_level;
}

static void close_single(struct plx_thread *t)
{
    if (open_now.single1) {
        plx_omp_leave(t, open_now.single1 - 1);
        open_now.single1 = 0;
    }
}

static void close_ws(struct plx_thread *t)
{
    close_single(t);
    if (open_now.ws1) {
        plx_omp_leave(t, open_now.ws1 - 1);
        open_now.ws1 = 0;
    }
}

/* Whether the OpenMP runtime is LLVM's (which implements these entry points too and reports
 * them through OMPT): the wrappers then only pass calls on, as tail calls, so the runtime sees
 * the program's return address. Decided once. */
static int llvm_runtime(void)
{
    static int known; /* 0 not yet, 1 libgomp, 2 LLVM */
    if (PLX_UNLIKELY(!known))
        known = plx_omp_tool_active || dlsym(RTLD_DEFAULT, "__kmpc_fork_call") ? 2 : 1;
    return known == 2;
}
#define PASS_ON(CALL)                                                                         \
    do {                                                                                      \
        if (PLX_UNLIKELY(llvm_runtime()))                                                     \
            return CALL;                                                                      \
    } while (0)

/* The calling thread when it is measured through libgomp; NULL otherwise. */
static struct plx_thread *gomp_begin(void)
{
    return llvm_runtime() ? NULL : plx_omp_begin();
}

/* ---- parallel regions -------------------------------------------------------------------- */

struct team { /* on the encountering thread's stack for the region's lifetime */
    body_fn fn;
    void *data;
    uint32_t region, ws; /* ws: loop or sections started with the team, else PLX_NO_INDEX */
    uintptr_t site;
    struct plx_omp_context ctx; /* the encountering thread's path: the workers' prefix */
};

static void outlined(void *p)
{
    struct team *tm = p;
    struct open_constructs outer = open_now; /* a nested team's thread keeps the outer ones */
    open_now = (struct open_constructs){0, 0, 1};
    struct plx_thread *t = plx_omp_begin();
    uint32_t frames = 0;
    if (t) {
        frames = plx_omp_task_begin(t, tm->region, (uint32_t)q_thread_num(),
                                    (uint32_t)q_num_threads(), (uint32_t)q_level(), &tm->ctx);
        if (tm->ws != PLX_NO_INDEX) {
            plx_omp_enter(t, tm->ws);
            open_now.ws1 = tm->ws + 1;
        }
        plx_omp_end(t);
    }
    tm->fn(tm->data);
    if (frames && (t = plx_omp_begin()) != NULL) {
        close_ws(t);
        struct plx_sync_entry *e = plx_omp_sync(t, (const void *)tm->site, PLX_SYNC_OMP_BARRIER,
                                                tm->site);
        uint64_t t0 = plx_ticks();
        plx_omp_arrive(t, e, PLX_SYNC_OMP_BARRIER);
        plx_omp_end(t);
        real_barrier();
        t->guard++;
        plx_omp_depart(t, e, PLX_SYNC_OMP_BARRIER, t0);
        plx_omp_task_end(t, tm->region, frames);
        plx_omp_end(t);
    }
    open_now = outer;
}

/* Prepares `tm` for a team started at `site`; 0 when the region is not measured. */
static int team(struct team *tm, body_fn fn, void *data, uintptr_t site, int ws)
{
    struct plx_thread *t = gomp_begin();
    if (!t)
        return 0;
    int ok = queries();
    if (ok) {
        tm->fn = fn;
        tm->data = data;
        tm->site = site;
        tm->region = plx_omp_region_at(site, PLX_OMP_PARALLEL, (uintptr_t)fn);
        tm->ws = ws >= 0 ? plx_omp_region(site, ws) : PLX_NO_INDEX;
        plx_omp_context_take(t, &tm->ctx);
        if (PLX_UNLIKELY(plx_region_of_address((uintptr_t)fn) & PLX_REGION_MISSING))
            plx_region_bind((uintptr_t)fn, tm->region, 1); /* the region stands for it */
    }
    plx_omp_end(t);
    return ok;
}

PLX_EXPORT void GOMP_parallel(body_fn fn, void *data, unsigned n, unsigned flags)
{
    REAL(void (*)(body_fn, void *, unsigned, unsigned), "GOMP_parallel");
    struct team tm;
    if (team(&tm, fn, data, SITE, -1))
        real(outlined, &tm, n, flags);
    else
        real(fn, data, n, flags);
}

PLX_EXPORT void GOMP_parallel_sections(body_fn fn, void *data, unsigned n, unsigned count,
                                       unsigned flags)
{
    REAL(void (*)(body_fn, void *, unsigned, unsigned, unsigned), "GOMP_parallel_sections");
    struct team tm;
    if (team(&tm, fn, data, SITE, PLX_OMP_SECTIONS))
        real(outlined, &tm, n, count, flags);
    else
        real(fn, data, n, count, flags);
}

#define PARALLEL_LOOP(name)                                                                   \
    PLX_EXPORT void name(body_fn fn, void *data, unsigned n, long s, long e, long i, long c,  \
                         unsigned flags)                                                      \
    {                                                                                         \
        REAL(void (*)(body_fn, void *, unsigned, long, long, long, long, unsigned), #name);   \
        struct team tm;                                                                       \
        if (team(&tm, fn, data, SITE, PLX_OMP_LOOP))                                          \
            real(outlined, &tm, n, s, e, i, c, flags);                                        \
        else                                                                                  \
            real(fn, data, n, s, e, i, c, flags);                                             \
    }
#define PARALLEL_LOOP_RUNTIME(name)                                                           \
    PLX_EXPORT void name(body_fn fn, void *data, unsigned n, long s, long e, long i,          \
                         unsigned flags)                                                      \
    {                                                                                         \
        REAL(void (*)(body_fn, void *, unsigned, long, long, long, unsigned), #name);         \
        struct team tm;                                                                       \
        if (team(&tm, fn, data, SITE, PLX_OMP_LOOP))                                          \
            real(outlined, &tm, n, s, e, i, flags);                                           \
        else                                                                                  \
            real(fn, data, n, s, e, i, flags);                                                \
    }
PARALLEL_LOOP(GOMP_parallel_loop_static)
PARALLEL_LOOP(GOMP_parallel_loop_dynamic)
PARALLEL_LOOP(GOMP_parallel_loop_guided)
PARALLEL_LOOP(GOMP_parallel_loop_nonmonotonic_dynamic)
PARALLEL_LOOP(GOMP_parallel_loop_nonmonotonic_guided)
PARALLEL_LOOP_RUNTIME(GOMP_parallel_loop_runtime)
PARALLEL_LOOP_RUNTIME(GOMP_parallel_loop_nonmonotonic_runtime)
PARALLEL_LOOP_RUNTIME(GOMP_parallel_loop_maybe_nonmonotonic_runtime)

/* ---- barriers and work-sharing ------------------------------------------------------------- */

/* A barrier at `site`, run by `vf` or `bf`; an open single ends there. */
static bool measured_barrier(uintptr_t site, void (*vf)(void), bool (*bf)(void))
{
    struct plx_thread *t = gomp_begin();
    if (!t) {
        if (vf) {
            vf();
            return false;
        }
        return bf();
    }
    close_ws(t); /* a static loop ends at its barrier; a single at the next one */
    struct plx_sync_entry *e = plx_omp_sync(t, (const void *)site, PLX_SYNC_OMP_BARRIER, site);
    uint64_t t0 = plx_ticks();
    plx_omp_arrive(t, e, PLX_SYNC_OMP_BARRIER);
    plx_omp_end(t);
    bool rc = false;
    if (vf)
        vf();
    else
        rc = bf();
    t->guard++;
    plx_omp_depart(t, e, PLX_SYNC_OMP_BARRIER, t0);
    plx_omp_end(t);
    return rc;
}

PLX_EXPORT void GOMP_barrier(void)
{
    if (queries())
        measured_barrier(SITE, real_barrier, NULL);
}

PLX_EXPORT bool GOMP_barrier_cancel(void)
{
    REAL(bool (*)(void), "GOMP_barrier_cancel");
    return measured_barrier(SITE, NULL, real);
}

/* A loop or sections begins on this thread (ends at its end call). */
static void ws_open(uintptr_t site, int c)
{
    struct plx_thread *t = gomp_begin();
    if (!t)
        return;
    close_ws(t);
    uint32_t r = plx_omp_region(site, c);
    plx_omp_enter(t, r);
    open_now.ws1 = r + 1;
    plx_omp_end(t);
}

static void ws_close(void)
{
    struct plx_thread *t = gomp_begin();
    if (!t)
        return;
    close_ws(t);
    plx_omp_end(t);
}

#define LOOP_START(name)                                                                      \
    PLX_EXPORT bool name(long s, long e, long i, long c, long *is, long *ie)                  \
    {                                                                                         \
        REAL(bool (*)(long, long, long, long, long *, long *), #name);                        \
        ws_open(SITE, PLX_OMP_LOOP);                                                          \
        return real(s, e, i, c, is, ie);                                                      \
    }
#define LOOP_START_RUNTIME(name)                                                              \
    PLX_EXPORT bool name(long s, long e, long i, long *is, long *ie)                          \
    {                                                                                         \
        REAL(bool (*)(long, long, long, long *, long *), #name);                              \
        ws_open(SITE, PLX_OMP_LOOP);                                                          \
        return real(s, e, i, is, ie);                                                         \
    }
#define LOOP_START_ULL(name)                                                                  \
    PLX_EXPORT bool name(bool up, ull s, ull e, ull i, ull c, ull *is, ull *ie)               \
    {                                                                                         \
        REAL(bool (*)(bool, ull, ull, ull, ull, ull *, ull *), #name);                        \
        ws_open(SITE, PLX_OMP_LOOP);                                                          \
        return real(up, s, e, i, c, is, ie);                                                  \
    }
#define LOOP_START_ULL_RUNTIME(name)                                                          \
    PLX_EXPORT bool name(bool up, ull s, ull e, ull i, ull *is, ull *ie)                      \
    {                                                                                         \
        REAL(bool (*)(bool, ull, ull, ull, ull *, ull *), #name);                             \
        ws_open(SITE, PLX_OMP_LOOP);                                                          \
        return real(up, s, e, i, is, ie);                                                     \
    }
LOOP_START(GOMP_loop_static_start)
LOOP_START(GOMP_loop_dynamic_start)
LOOP_START(GOMP_loop_guided_start)
LOOP_START(GOMP_loop_nonmonotonic_dynamic_start)
LOOP_START(GOMP_loop_nonmonotonic_guided_start)
LOOP_START(GOMP_loop_ordered_static_start)
LOOP_START(GOMP_loop_ordered_dynamic_start)
LOOP_START(GOMP_loop_ordered_guided_start)
LOOP_START_RUNTIME(GOMP_loop_runtime_start)
LOOP_START_RUNTIME(GOMP_loop_nonmonotonic_runtime_start)
LOOP_START_RUNTIME(GOMP_loop_maybe_nonmonotonic_runtime_start)
LOOP_START_RUNTIME(GOMP_loop_ordered_runtime_start)
LOOP_START_ULL(GOMP_loop_ull_static_start)
LOOP_START_ULL(GOMP_loop_ull_dynamic_start)
LOOP_START_ULL(GOMP_loop_ull_guided_start)
LOOP_START_ULL(GOMP_loop_ull_nonmonotonic_dynamic_start)
LOOP_START_ULL(GOMP_loop_ull_nonmonotonic_guided_start)
LOOP_START_ULL_RUNTIME(GOMP_loop_ull_runtime_start)

/* GCC 9 and later: any schedule, with reductions or a work-share memory. */
PLX_EXPORT bool GOMP_loop_start(long s, long e, long i, long sched, long c, long *is, long *ie,
                                uintptr_t *reductions, void **mem)
{
    REAL(bool (*)(long, long, long, long, long, long *, long *, uintptr_t *, void **),
         "GOMP_loop_start");
    ws_open(SITE, PLX_OMP_LOOP);
    return real(s, e, i, sched, c, is, ie, reductions, mem);
}

PLX_EXPORT bool GOMP_loop_ordered_start(long s, long e, long i, long sched, long c, long *is,
                                        long *ie, uintptr_t *reductions, void **mem)
{
    REAL(bool (*)(long, long, long, long, long, long *, long *, uintptr_t *, void **),
         "GOMP_loop_ordered_start");
    ws_open(SITE, PLX_OMP_LOOP);
    return real(s, e, i, sched, c, is, ie, reductions, mem);
}

/* The end of a loop or sections without nowait is a barrier, named after its call site. */

PLX_EXPORT void GOMP_loop_end(void)
{
    REAL(void (*)(void), "GOMP_loop_end");
    ws_close();
    measured_barrier(SITE, real, NULL);
}

PLX_EXPORT bool GOMP_loop_end_cancel(void)
{
    REAL(bool (*)(void), "GOMP_loop_end_cancel");
    ws_close();
    return measured_barrier(SITE, NULL, real);
}

PLX_EXPORT void GOMP_loop_end_nowait(void)
{
    REAL(void (*)(void), "GOMP_loop_end_nowait");
    ws_close();
    real();
}

PLX_EXPORT unsigned GOMP_sections_start(unsigned count)
{
    REAL(unsigned (*)(unsigned), "GOMP_sections_start");
    ws_open(SITE, PLX_OMP_SECTIONS);
    return real(count);
}

PLX_EXPORT unsigned GOMP_sections2_start(unsigned count, uintptr_t *reductions, void **mem)
{
    REAL(unsigned (*)(unsigned, uintptr_t *, void **), "GOMP_sections2_start");
    ws_open(SITE, PLX_OMP_SECTIONS);
    return real(count, reductions, mem);
}

PLX_EXPORT void GOMP_sections_end(void)
{
    REAL(void (*)(void), "GOMP_sections_end");
    ws_close();
    measured_barrier(SITE, real, NULL);
}

PLX_EXPORT bool GOMP_sections_end_cancel(void)
{
    REAL(bool (*)(void), "GOMP_sections_end_cancel");
    ws_close();
    return measured_barrier(SITE, NULL, real);
}

PLX_EXPORT void GOMP_sections_end_nowait(void)
{
    REAL(void (*)(void), "GOMP_sections_end_nowait");
    ws_close();
    real();
}

/* The thread that executes a single: a region until its next barrier or work-share. */
static void single_open(uintptr_t site)
{
    struct plx_thread *t = gomp_begin();
    if (!t)
        return;
    close_single(t);
    uint32_t r = plx_omp_region(site, PLX_OMP_SINGLE);
    plx_omp_enter(t, r);
    open_now.single1 = r + 1;
    plx_omp_end(t);
}

PLX_EXPORT bool GOMP_single_start(void)
{
    REAL(bool (*)(void), "GOMP_single_start");
    ws_close();
    bool mine = real();
    if (mine)
        single_open(SITE);
    return mine;
}

PLX_EXPORT void *GOMP_single_copy_start(void)
{
    REAL(void *(*)(void), "GOMP_single_copy_start");
    ws_close();
    void *p = real();
    if (p == NULL)
        single_open(SITE);
    return p;
}

PLX_EXPORT void GOMP_single_copy_end(void *data)
{
    REAL(void (*)(void *), "GOMP_single_copy_end");
    ws_close();
    real(data);
}

/* ---- static loops -------------------------------------------------------------------------- */

/* A schedule(static) loop calls nothing in libgomp: GCC computes each thread's iterations
 * inline from omp_get_num_threads() and omp_get_thread_num(), called one right after the other
 * (their return addresses at most STATIC_PAIR bytes apart). That pair, in a measured team's
 * body, opens a loop region named after the first call (the loop's line), closed by the next
 * barrier, work-share or the end of the body. The iterations are not known. GCC reads the pair
 * once per body: a second static loop of the same region has no region of its own. */
#define STATIC_PAIR 16
static PLX_TLS uintptr_t num_threads_ret; /* return address of the last omp_get_num_threads */

PLX_EXPORT int omp_get_num_threads(void)
{
    REAL(int (*)(void), "omp_get_num_threads");
    PASS_ON(real());
    num_threads_ret = SITE;
    return real();
}

PLX_EXPORT int omp_get_thread_num(void)
{
    REAL(int (*)(void), "omp_get_thread_num");
    PASS_ON(real());
    uintptr_t ret = SITE, nt = num_threads_ret;
    if (PLX_UNLIKELY(nt != 0)) {
        num_threads_ret = 0;
        if (ret > nt && ret - nt <= STATIC_PAIR && open_now.in_team && !open_now.ws1)
            ws_open(nt, PLX_OMP_LOOP);
    }
    return real();
}

/* ---- critical sections, atomics, ordered, locks --------------------------------------------- */

static char unnamed_critical, atomic_lock, ordered_lock; /* their objects' addresses */

/* A lock without a try: every acquisition counts as uncontended (wait time tells). */
#define HELD(kind, key, CALL)                                                                 \
    do {                                                                                      \
        struct plx_thread *t = gomp_begin();                                                  \
        if (!t) {                                                                             \
            CALL;                                                                             \
            return;                                                                           \
        }                                                                                     \
        struct plx_sync_entry *e = plx_omp_sync(t, (key), (kind), SITE);                      \
        plx_omp_end(t);                                                                       \
        uint64_t t0 = plx_ticks();                                                            \
        CALL;                                                                                 \
        t->guard++;                                                                           \
        plx_omp_acquired(t, e, (kind), t0, 0);                                                \
        plx_omp_end(t);                                                                       \
    } while (0)

#define UNHELD(kind, key, CALL)                                                               \
    do {                                                                                      \
        struct plx_thread *t = gomp_begin();                                                  \
        if (t) {                                                                              \
            plx_omp_released(t, plx_omp_sync(t, (key), (kind), SITE), (kind));                \
            plx_omp_end(t);                                                                   \
        }                                                                                     \
        CALL;                                                                                 \
    } while (0)

PLX_EXPORT void GOMP_critical_start(void)
{
    REAL(void (*)(void), "GOMP_critical_start");
    HELD(PLX_SYNC_OMP_CRITICAL, &unnamed_critical, real());
}
PLX_EXPORT void GOMP_critical_end(void)
{
    REAL(void (*)(void), "GOMP_critical_end");
    UNHELD(PLX_SYNC_OMP_CRITICAL, &unnamed_critical, real());
}
PLX_EXPORT void GOMP_critical_name_start(void **name)
{
    REAL(void (*)(void **), "GOMP_critical_name_start");
    HELD(PLX_SYNC_OMP_CRITICAL, name, real(name));
}
PLX_EXPORT void GOMP_critical_name_end(void **name)
{
    REAL(void (*)(void **), "GOMP_critical_name_end");
    UNHELD(PLX_SYNC_OMP_CRITICAL, name, real(name));
}
PLX_EXPORT void GOMP_atomic_start(void)
{
    REAL(void (*)(void), "GOMP_atomic_start");
    HELD(PLX_SYNC_OMP_ATOMIC, &atomic_lock, real());
}
PLX_EXPORT void GOMP_atomic_end(void)
{
    REAL(void (*)(void), "GOMP_atomic_end");
    UNHELD(PLX_SYNC_OMP_ATOMIC, &atomic_lock, real());
}
PLX_EXPORT void GOMP_ordered_start(void)
{
    REAL(void (*)(void), "GOMP_ordered_start");
    HELD(PLX_SYNC_OMP_ORDERED, &ordered_lock, real());
}
PLX_EXPORT void GOMP_ordered_end(void)
{
    REAL(void (*)(void), "GOMP_ordered_end");
    UNHELD(PLX_SYNC_OMP_ORDERED, &ordered_lock, real());
}

/* omp locks: tried first, so a contended acquisition is known. */
#define LOCK(key, TRY, OK, BLOCK)                                                             \
    do {                                                                                      \
        struct plx_thread *t = gomp_begin();                                                  \
        if (!t) {                                                                             \
            BLOCK;                                                                            \
            return;                                                                           \
        }                                                                                     \
        struct plx_sync_entry *e = plx_omp_sync(t, (key), PLX_SYNC_OMP_LOCK, SITE);           \
        plx_omp_end(t);                                                                       \
        uint64_t t0 = plx_ticks();                                                            \
        int contended = 0;                                                                    \
        if (!(OK(TRY))) {                                                                     \
            contended = 1;                                                                    \
            BLOCK;                                                                            \
        }                                                                                     \
        t->guard++;                                                                           \
        plx_omp_acquired(t, e, PLX_SYNC_OMP_LOCK, t0, contended);                             \
        plx_omp_end(t);                                                                       \
    } while (0)

#define TRY(key, CALL, OK)                                                                    \
    do {                                                                                      \
        int rc = CALL;                                                                        \
        struct plx_thread *t;                                                                 \
        if (OK(rc) && (t = gomp_begin()) != NULL) {                                           \
            uint64_t now = plx_ticks();                                                       \
            plx_omp_acquired(t, plx_omp_sync(t, (key), PLX_SYNC_OMP_LOCK, SITE),              \
                             PLX_SYNC_OMP_LOCK, now, 0);                                      \
            plx_omp_end(t);                                                                   \
        }                                                                                     \
        return rc;                                                                            \
    } while (0)

#define NONZERO(x) ((x) != 0)
typedef void (*lock_fn)(void *);
typedef int (*test_fn)(void *);

PLX_EXPORT void omp_set_lock(void *l)
{
    REAL(lock_fn, "omp_set_lock");
    PASS_ON(real(l));
    static test_fn test;
    if (!test)
        test = (test_fn)gomp_symbol("omp_test_lock");
    LOCK(l, test(l), NONZERO, real(l));
}
PLX_EXPORT int omp_test_lock(void *l)
{
    REAL(test_fn, "omp_test_lock");
    PASS_ON(real(l));
    TRY(l, real(l), NONZERO);
}
PLX_EXPORT void omp_unset_lock(void *l)
{
    REAL(lock_fn, "omp_unset_lock");
    PASS_ON(real(l));
    UNHELD(PLX_SYNC_OMP_LOCK, l, real(l));
}
PLX_EXPORT void omp_set_nest_lock(void *l)
{
    REAL(lock_fn, "omp_set_nest_lock");
    PASS_ON(real(l));
    static test_fn test;
    if (!test)
        test = (test_fn)gomp_symbol("omp_test_nest_lock");
    LOCK(l, test(l), NONZERO, real(l));
}
PLX_EXPORT int omp_test_nest_lock(void *l)
{
    REAL(test_fn, "omp_test_nest_lock");
    PASS_ON(real(l));
    TRY(l, real(l), NONZERO);
}
PLX_EXPORT void omp_unset_nest_lock(void *l)
{
    REAL(lock_fn, "omp_unset_nest_lock");
    PASS_ON(real(l));
    UNHELD(PLX_SYNC_OMP_LOCK, l, real(l));
}

/* An init call names its lock. */
static void lock_defined(void *l, uintptr_t site)
{
    struct plx_thread *t = gomp_begin();
    if (!t)
        return;
    plx_sync_define(l, PLX_SYNC_OMP_LOCK, site, 1);
    plx_omp_end(t);
}
PLX_EXPORT void omp_init_lock(void *l)
{
    REAL(lock_fn, "omp_init_lock");
    PASS_ON(real(l));
    real(l);
    lock_defined(l, SITE);
}
PLX_EXPORT void omp_init_nest_lock(void *l)
{
    REAL(lock_fn, "omp_init_nest_lock");
    PASS_ON(real(l));
    real(l);
    lock_defined(l, SITE);
}

/* ---- tasks ------------------------------------------------------------------------------------ */

/* A task runs through `task_body`: its argument block is the original one behind a header
 * naming the body and the task's region (built on the creating thread's stack, copied by
 * libgomp as it copies any task's arguments). */
struct task_header {
    body_fn fn;
    void (*cpyfn)(void *, void *);
    void *data;     /* the original arguments, for cpyfn (creating thread only) */
    uint32_t region;
    uint32_t offset; /* of the arguments in the block */
};

#define TASK_BLOCK_MAX 4096 /* larger argument blocks run unmeasured (no stack copy) */

static void task_body(void *p)
{
    struct task_header *h = p;
    struct plx_thread *t = plx_omp_begin();
    if (t) {
        plx_omp_enter(t, h->region);
        plx_omp_end(t);
    }
    h->fn((char *)p + h->offset);
    if (t && (t = plx_omp_begin()) != NULL) {
        plx_omp_leave(t, h->region);
        plx_omp_end(t);
    }
}

static void task_copy(void *dst, void *src)
{
    struct task_header *h = src;
    memcpy(dst, h, sizeof *h);
    h->cpyfn((char *)dst + h->offset, h->data);
}

/* GCC 11's signature; older compilers pass fewer arguments, which libgomp reads only when a
 * flag says they are there. */
PLX_EXPORT void GOMP_task(body_fn fn, void *data, void (*cpyfn)(void *, void *), long arg_size,
                          long arg_align, bool if_clause, unsigned flags, void **depend,
                          int priority, void *detach)
{
    REAL(void (*)(body_fn, void *, void (*)(void *, void *), long, long, bool, unsigned, void **,
                  int, void *),
         "GOMP_task");
    uintptr_t site = SITE;
    struct plx_thread *t = gomp_begin();
    if (!t || arg_align > 64 || arg_size < 0 || arg_size > TASK_BLOCK_MAX) {
        if (t)
            plx_omp_end(t);
        real(fn, data, cpyfn, arg_size, arg_align, if_clause, flags, depend, priority, detach);
        return;
    }
    long align = arg_align > (long)_Alignof(struct task_header) ? arg_align
                                                                 : (long)_Alignof(struct task_header);
    uint32_t offset = (uint32_t)((sizeof(struct task_header) + align - 1) / align * align);
    _Alignas(64) char block[TASK_BLOCK_MAX + 128];
    struct task_header *h = (struct task_header *)block;
    *h = (struct task_header){fn, cpyfn, data, plx_omp_region_at(site, PLX_OMP_TASK, (uintptr_t)fn),
                              offset};
    if (!cpyfn && arg_size)
        memcpy(block + offset, data, (size_t)arg_size);
    uint32_t r = plx_omp_region_at(site, PLX_OMP_TASK_CREATE, (uintptr_t)fn);
    plx_omp_enter(t, r);
    plx_omp_end(t);
    real(task_body, block, cpyfn ? task_copy : NULL, (long)offset + arg_size, align, if_clause,
         flags, depend, priority, detach);
    t->guard++;
    plx_omp_leave(t, r);
    plx_omp_end(t);
}

/* A wait for tasks: acquired when they are done (no release pairs with it). */
#define TASK_WAIT(CALL)                                                                       \
    do {                                                                                      \
        uintptr_t site = SITE;                                                                \
        struct plx_thread *t = gomp_begin();                                                  \
        if (!t) {                                                                             \
            CALL;                                                                             \
            return;                                                                           \
        }                                                                                     \
        struct plx_sync_entry *e = plx_omp_sync(t, (const void *)site, PLX_SYNC_OMP_TASKWAIT, \
                                                site);                                        \
        plx_omp_end(t);                                                                       \
        uint64_t t0 = plx_ticks();                                                            \
        CALL;                                                                                 \
        t->guard++;                                                                           \
        plx_omp_depart(t, e, PLX_SYNC_OMP_TASKWAIT, t0);                                      \
        plx_omp_end(t);                                                                       \
    } while (0)

PLX_EXPORT void GOMP_taskwait(void)
{
    REAL(void (*)(void), "GOMP_taskwait");
    TASK_WAIT(real());
}
PLX_EXPORT void GOMP_taskgroup_end(void)
{
    REAL(void (*)(void), "GOMP_taskgroup_end");
    TASK_WAIT(real());
}

/* ---- taskloops ---------------------------------------------------------------------------------- */

/* A taskloop's tasks run through one of TASKLOOP_SLOTS wrappers, each bound on first sight to
 * one construct (its body and step): libgomp writes each task's bounds into the first two words
 * of the task's arguments, which the wrapper reads, so the argument block stays the program's.
 * A task is a region `task@` (the taskloop's line) on the thread that runs it, and its
 * iterations a value of the user event "omp taskloop iterations" there (count: tasks, sum:
 * iterations). Constructs past the slots run unmeasured (their taskloop region still counts). */
#define TASKLOOP_SLOTS 32

struct taskloop_slot {
    _Atomic(body_fn) fn; /* claimed by CAS; the rest is published by `ready` */
    long long step;
    uint32_t region;
    _Atomic int ready;
};
static struct taskloop_slot taskloops[TASKLOOP_SLOTS];
static uint32_t taskloop_event = UINT32_MAX;

static void taskloop_run(struct taskloop_slot *s, void *p)
{
    body_fn fn = atomic_load_explicit(&s->fn, memory_order_relaxed);
    struct plx_thread *t = plx_omp_begin();
    if (t) {
        long long n = (((long long *)p)[1] - ((long long *)p)[0]) / s->step;
        plx_uevent_record(t, taskloop_event, (double)n);
        plx_omp_enter(t, s->region);
        plx_omp_end(t);
    }
    fn(p);
    if (t && (t = plx_omp_begin()) != NULL) {
        plx_omp_leave(t, s->region);
        plx_omp_end(t);
    }
}

#define TL(i)                                                                                 \
    static void taskloop_##i(void *p)                                                         \
    {                                                                                         \
        taskloop_run(&taskloops[i], p);                                                       \
    }
TL(0) TL(1) TL(2) TL(3) TL(4) TL(5) TL(6) TL(7) TL(8) TL(9) TL(10) TL(11) TL(12) TL(13) TL(14)
TL(15) TL(16) TL(17) TL(18) TL(19) TL(20) TL(21) TL(22) TL(23) TL(24) TL(25) TL(26) TL(27)
TL(28) TL(29) TL(30) TL(31)
#undef TL
static const body_fn taskloop_wrappers[TASKLOOP_SLOTS] = {
    taskloop_0,  taskloop_1,  taskloop_2,  taskloop_3,  taskloop_4,  taskloop_5,  taskloop_6,
    taskloop_7,  taskloop_8,  taskloop_9,  taskloop_10, taskloop_11, taskloop_12, taskloop_13,
    taskloop_14, taskloop_15, taskloop_16, taskloop_17, taskloop_18, taskloop_19, taskloop_20,
    taskloop_21, taskloop_22, taskloop_23, taskloop_24, taskloop_25, taskloop_26, taskloop_27,
    taskloop_28, taskloop_29, taskloop_30, taskloop_31,
};

/* The wrapper for body `fn` stepping by `step` (the task region's site `site`), or NULL. */
static body_fn taskloop_wrapper(body_fn fn, long long step, uintptr_t site)
{
    if (step == 0)
        return NULL;
    for (uint32_t i = 0; i < TASKLOOP_SLOTS; i++) {
        struct taskloop_slot *s = &taskloops[i];
        body_fn f = atomic_load_explicit(&s->fn, memory_order_acquire);
        if (f == NULL) {
            if (!atomic_compare_exchange_strong(&s->fn, &f, fn)) {
                i--; /* claimed meanwhile: look at it again */
                continue;
            }
            if (taskloop_event == UINT32_MAX)
                taskloop_event = plx_uevent_id("omp taskloop iterations");
            s->step = step;
            s->region = plx_omp_region_at(site, PLX_OMP_TASK, (uintptr_t)fn);
            atomic_store_explicit(&s->ready, 1, memory_order_release);
            return taskloop_wrappers[i];
        }
        if (f == fn) {
            while (!atomic_load_explicit(&s->ready, memory_order_acquire))
                sched_yield();
            if (s->step == step)
                return taskloop_wrappers[i];
        }
    }
    return NULL;
}

/* The taskloop on the creating thread: a region `taskloop@` over the call (task creation, the
 * tasks it runs itself and, without nogroup, the wait for the others). */
#define TASKLOOP(STEP)                                                                  \
    {                                                                                         \
        uintptr_t site = SITE;                                                                \
        struct plx_thread *t = gomp_begin();                                                  \
        if (!t) {                                                                             \
            real(fn, data, cpyfn, arg_size, arg_align, flags, num_tasks, priority, start,     \
                 end, step);                                                                  \
            return;                                                                           \
        }                                                                                     \
        body_fn w = taskloop_wrapper(fn, (long long)(STEP), site);                            \
        uint32_t r = plx_omp_region_at(site, PLX_OMP_TASKLOOP, (uintptr_t)fn);                \
        plx_omp_enter(t, r);                                                                  \
        plx_omp_end(t);                                                                       \
        real(w ? w : fn, data, cpyfn, arg_size, arg_align, flags, num_tasks, priority, start, \
             end, step);                                                                      \
        t->guard++;                                                                           \
        plx_omp_leave(t, r);                                                                  \
        plx_omp_end(t);                                                                       \
    }

PLX_EXPORT void GOMP_taskloop(body_fn fn, void *data, void (*cpyfn)(void *, void *),
                              long arg_size, long arg_align, unsigned flags,
                              unsigned long num_tasks, int priority, long start, long end,
                              long step)
{
    REAL(void (*)(body_fn, void *, void (*)(void *, void *), long, long, unsigned, unsigned long,
                  int, long, long, long),
         "GOMP_taskloop");
    TASKLOOP(step)
}

/* The ull variant's bounds are unsigned; a downward loop's step is a negative number in two's
 * complement (GOMP_TASK_FLAG_UP clear): the difference of bounds divided by it as signed. */
PLX_EXPORT void GOMP_taskloop_ull(body_fn fn, void *data, void (*cpyfn)(void *, void *),
                                  long arg_size, long arg_align, unsigned flags,
                                  unsigned long num_tasks, int priority, ull start, ull end,
                                  ull step)
{
    REAL(void (*)(body_fn, void *, void (*)(void *, void *), long, long, unsigned, unsigned long,
                  int, ull, ull, ull),
         "GOMP_taskloop_ull");
    TASKLOOP((long long)step)
}
