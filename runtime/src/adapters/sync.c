/* Synchronization objects measured without recompiling (interposed by symbol, so LD_PRELOAD
 * suffices): mutexes, condition variables, rwlocks, barriers, spin locks, POSIX semaphores and
 * pthread_join. Per thread and object: acquisitions, contended acquisitions (a try failed
 * first), wait time, hold time, releases; acquire/release events in the trace.
 *
 * The real functions are called with the thread's guard released, so a signal handler may run
 * measured code while a thread waits; the guard covers only the bookkeeping. A release is
 * recorded before the real unlock, so it precedes the next holder's acquire in time. */
#include "../core/hotpath.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>

#define PLX_EXPORT __attribute__((visibility("default")))
#define SITE ((uintptr_t)__builtin_return_address(0))

typedef int (*fn1)(void *);
typedef int (*fn2)(void *, const void *);

static struct {
    fn1 mutex_lock, mutex_trylock, mutex_unlock, cond_signal, cond_broadcast, barrier_wait;
    fn1 rdlock, wrlock, tryrdlock, trywrlock, rwunlock, spin_lock, spin_trylock, spin_unlock;
    fn1 sem_wait, sem_trywait, sem_post;
    fn2 mutex_timedlock, cond_wait, timedrdlock, timedwrlock, sem_timedwait, mutex_init,
        cond_init, rwlock_init;
    int (*cond_timedwait)(void *, void *, const struct timespec *);
    int (*barrier_init)(void *, const void *, unsigned);
    int (*spin_init)(void *, int);
    int (*sem_init)(void *, int, unsigned);
    int (*join)(pthread_t, void **);
} real;

/* pthread_cond_* exist in two versions on x86-64: the current one must be called. */
static void *next(const char *name)
{
    void *p = NULL;
    if (name[8] == 'c' && name[9] == 'o') /* pthread_cond_... */
        p = dlvsym(RTLD_NEXT, name, "GLIBC_2.3.2");
    return p ? p : dlsym(RTLD_NEXT, name);
}

static void *lazy(void **slot, const char *name)
{
    if (!*slot)
        *slot = next(name);
    return *slot;
}

/* Resolved by the constructor; lazily when called before it (another library's constructor). */
#define REAL(field, name)                                                                     \
    ((typeof(real.field))(real.field ? (void *)real.field : lazy((void **)&real.field, name)))

__attribute__((constructor(101))) static void resolve(void)
{
    REAL(mutex_lock, "pthread_mutex_lock");
    REAL(mutex_trylock, "pthread_mutex_trylock");
    REAL(mutex_unlock, "pthread_mutex_unlock");
    REAL(mutex_timedlock, "pthread_mutex_timedlock");
    REAL(mutex_init, "pthread_mutex_init");
    REAL(cond_wait, "pthread_cond_wait");
    REAL(cond_timedwait, "pthread_cond_timedwait");
    REAL(cond_signal, "pthread_cond_signal");
    REAL(cond_broadcast, "pthread_cond_broadcast");
    REAL(cond_init, "pthread_cond_init");
    REAL(rdlock, "pthread_rwlock_rdlock");
    REAL(wrlock, "pthread_rwlock_wrlock");
    REAL(tryrdlock, "pthread_rwlock_tryrdlock");
    REAL(trywrlock, "pthread_rwlock_trywrlock");
    REAL(timedrdlock, "pthread_rwlock_timedrdlock");
    REAL(timedwrlock, "pthread_rwlock_timedwrlock");
    REAL(rwunlock, "pthread_rwlock_unlock");
    REAL(rwlock_init, "pthread_rwlock_init");
    REAL(barrier_wait, "pthread_barrier_wait");
    REAL(barrier_init, "pthread_barrier_init");
    REAL(spin_lock, "pthread_spin_lock");
    REAL(spin_trylock, "pthread_spin_trylock");
    REAL(spin_unlock, "pthread_spin_unlock");
    REAL(spin_init, "pthread_spin_init");
    REAL(sem_wait, "sem_wait");
    REAL(sem_trywait, "sem_trywait");
    REAL(sem_timedwait, "sem_timedwait");
    REAL(sem_post, "sem_post");
    REAL(sem_init, "sem_init");
    REAL(join, "pthread_join");
}

/* The calling thread with its entry for `obj`; NULL if unmeasured (not measuring, inside the
 * runtime, a library's thread, or a call from the OpenMP runtime's own code:
 * plx_sync_internal_site). */
static struct plx_thread *begin(const void *obj, int kind, uintptr_t site, struct plx_sync_entry **e)
{
    struct plx_thread *t = plx_wrapper_thread();
    if (!t || plx_sync_internal_site(site))
        return NULL;
    t->guard++;
    *e = plx_sync_entry(t, obj, kind, site);
    t->guard--;
    return *e ? t : NULL;
}

static void acquired(struct plx_thread *t, struct plx_sync_entry *e, int kind, uint64_t t0,
                     uint64_t t1, int contended, int holds)
{
    t->guard++;
    plx_sync_acquired(t, e, kind, t1, t1 - t0, contended, holds);
    t->guard--;
}

static void released(struct plx_thread *t, struct plx_sync_entry *e, int kind, int holds)
{
    t->guard++;
    plx_sync_released(t, e, kind, plx_ticks(), holds);
    t->guard--;
}

/* A lock: try first (uncontended: one clock read), then block. `ok` tells success codes;
 * HOLDS: PLX_SYNC_HOLDS, or PLX_SYNC_HOLDS_SHARED for a read lock. */
#define LOCK(kind, obj, TRY, BLOCK, OK) LOCK_AS(kind, PLX_SYNC_HOLDS, obj, TRY, BLOCK, OK)
#define LOCK_AS(kind, HOLDS, obj, TRY, BLOCK, OK)                                             \
    do {                                                                                   \
        struct plx_sync_entry *e;                                                          \
        struct plx_thread *t = begin(obj, kind, SITE, &e);                                 \
        if (!t)                                                                            \
            return BLOCK;                                                                  \
        uint64_t t0 = plx_ticks(), t1 = t0;                                                \
        int rc = TRY, contended = 0;                                                       \
        if (!(OK)) {                                                                       \
            contended = 1;                                                                 \
            rc = BLOCK;                                                                    \
            t1 = plx_ticks();                                                              \
        }                                                                                  \
        if (OK)                                                                            \
            acquired(t, e, kind, t0, t1, contended, HOLDS);                                \
        return rc;                                                                         \
    } while (0)

#define UNLOCK(kind, obj, CALL)                                                               \
    do {                                                                                   \
        struct plx_sync_entry *e;                                                          \
        struct plx_thread *t = begin(obj, kind, SITE, &e);                                 \
        if (t)                                                                             \
            released(t, e, kind, 1);                                                       \
        return CALL;                                                                       \
    } while (0)

/* A try: acquired without waiting when it succeeds. */
#define TRY(kind, obj, CALL, OK) TRY_AS(kind, PLX_SYNC_HOLDS, obj, CALL, OK)
#define TRY_AS(kind, HOLDS, obj, CALL, OK)                                                    \
    do {                                                                                   \
        struct plx_sync_entry *e;                                                          \
        struct plx_thread *t = begin(obj, kind, SITE, &e);                                 \
        int rc = CALL;                                                                     \
        if (t && (OK)) {                                                                   \
            uint64_t now = plx_ticks();                                                    \
            acquired(t, e, kind, now, now, 0, HOLDS);                                      \
        }                                                                                  \
        return rc;                                                                         \
    } while (0)

#define MUTEX_OK (rc == 0 || rc == EOWNERDEAD)
PLX_EXPORT int pthread_mutex_lock(pthread_mutex_t *m)
{
    LOCK(PLX_SYNC_MUTEX, m, REAL(mutex_trylock, "pthread_mutex_trylock")(m), REAL(mutex_lock, "pthread_mutex_lock")(m), MUTEX_OK);
}
PLX_EXPORT int pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *at)
{
    LOCK(PLX_SYNC_MUTEX, m, REAL(mutex_trylock, "pthread_mutex_trylock")(m), REAL(mutex_timedlock, "pthread_mutex_timedlock")(m, at), MUTEX_OK);
}
PLX_EXPORT int pthread_mutex_trylock(pthread_mutex_t *m)
{
    TRY(PLX_SYNC_MUTEX, m, REAL(mutex_trylock, "pthread_mutex_trylock")(m), rc == 0);
}
PLX_EXPORT int pthread_mutex_unlock(pthread_mutex_t *m)
{
    UNLOCK(PLX_SYNC_MUTEX, m, REAL(mutex_unlock, "pthread_mutex_unlock")(m));
}

PLX_EXPORT int pthread_rwlock_rdlock(pthread_rwlock_t *l)
{
    LOCK_AS(PLX_SYNC_RWLOCK, PLX_SYNC_HOLDS_SHARED, l, REAL(tryrdlock, "pthread_rwlock_tryrdlock")(l), REAL(rdlock, "pthread_rwlock_rdlock")(l), rc == 0);
}
PLX_EXPORT int pthread_rwlock_wrlock(pthread_rwlock_t *l)
{
    LOCK(PLX_SYNC_RWLOCK, l, REAL(trywrlock, "pthread_rwlock_trywrlock")(l), REAL(wrlock, "pthread_rwlock_wrlock")(l), rc == 0);
}
PLX_EXPORT int pthread_rwlock_timedrdlock(pthread_rwlock_t *l, const struct timespec *at)
{
    LOCK_AS(PLX_SYNC_RWLOCK, PLX_SYNC_HOLDS_SHARED, l, REAL(tryrdlock, "pthread_rwlock_tryrdlock")(l), REAL(timedrdlock, "pthread_rwlock_timedrdlock")(l, at), rc == 0);
}
PLX_EXPORT int pthread_rwlock_timedwrlock(pthread_rwlock_t *l, const struct timespec *at)
{
    LOCK(PLX_SYNC_RWLOCK, l, REAL(trywrlock, "pthread_rwlock_trywrlock")(l), REAL(timedwrlock, "pthread_rwlock_timedwrlock")(l, at), rc == 0);
}
PLX_EXPORT int pthread_rwlock_tryrdlock(pthread_rwlock_t *l)
{
    TRY_AS(PLX_SYNC_RWLOCK, PLX_SYNC_HOLDS_SHARED, l, REAL(tryrdlock, "pthread_rwlock_tryrdlock")(l), rc == 0);
}
PLX_EXPORT int pthread_rwlock_trywrlock(pthread_rwlock_t *l)
{
    TRY(PLX_SYNC_RWLOCK, l, REAL(trywrlock, "pthread_rwlock_trywrlock")(l), rc == 0);
}
PLX_EXPORT int pthread_rwlock_unlock(pthread_rwlock_t *l)
{
    UNLOCK(PLX_SYNC_RWLOCK, l, REAL(rwunlock, "pthread_rwlock_unlock")(l));
}

PLX_EXPORT int pthread_spin_lock(pthread_spinlock_t *s)
{
    LOCK(PLX_SYNC_SPIN, (void *)s, REAL(spin_trylock, "pthread_spin_trylock")((void *)s), REAL(spin_lock, "pthread_spin_lock")((void *)s), rc == 0);
}
PLX_EXPORT int pthread_spin_trylock(pthread_spinlock_t *s)
{
    TRY(PLX_SYNC_SPIN, (void *)s, REAL(spin_trylock, "pthread_spin_trylock")((void *)s), rc == 0);
}
PLX_EXPORT int pthread_spin_unlock(pthread_spinlock_t *s)
{
    UNLOCK(PLX_SYNC_SPIN, (void *)s, REAL(spin_unlock, "pthread_spin_unlock")((void *)s));
}

/* A semaphore is acquired without being held: no hold time, posts count as releases. */
PLX_EXPORT int sem_wait(sem_t *s)
{
    struct plx_sync_entry *e;
    struct plx_thread *t = begin(s, PLX_SYNC_SEM, SITE, &e);
    if (!t)
        return REAL(sem_wait, "sem_wait")(s);
    uint64_t t0 = plx_ticks(), t1 = t0;
    int rc = REAL(sem_trywait, "sem_trywait")(s), contended = 0;
    if (rc != 0 && errno == EAGAIN) {
        contended = 1;
        rc = REAL(sem_wait, "sem_wait")(s);
        t1 = plx_ticks();
    }
    if (rc == 0)
        acquired(t, e, PLX_SYNC_SEM, t0, t1, contended, 0);
    return rc;
}

PLX_EXPORT int sem_timedwait(sem_t *s, const struct timespec *at)
{
    struct plx_sync_entry *e;
    struct plx_thread *t = begin(s, PLX_SYNC_SEM, SITE, &e);
    if (!t)
        return REAL(sem_timedwait, "sem_timedwait")(s, at);
    uint64_t t0 = plx_ticks(), t1 = t0;
    int rc = REAL(sem_trywait, "sem_trywait")(s), contended = 0;
    if (rc != 0 && errno == EAGAIN) {
        contended = 1;
        rc = REAL(sem_timedwait, "sem_timedwait")(s, at);
        t1 = plx_ticks();
    }
    if (rc == 0)
        acquired(t, e, PLX_SYNC_SEM, t0, t1, contended, 0);
    return rc;
}

PLX_EXPORT int sem_trywait(sem_t *s)
{
    struct plx_sync_entry *e;
    struct plx_thread *t = begin(s, PLX_SYNC_SEM, SITE, &e);
    int rc = REAL(sem_trywait, "sem_trywait")(s);
    if (t && rc == 0)
        acquired(t, e, PLX_SYNC_SEM, plx_ticks(), plx_ticks(), 0, 0);
    return rc;
}

PLX_EXPORT int sem_post(sem_t *s)
{
    struct plx_sync_entry *e;
    struct plx_thread *t = begin(s, PLX_SYNC_SEM, SITE, &e);
    if (t)
        released(t, e, PLX_SYNC_SEM, 0);
    return REAL(sem_post, "sem_post")(s);
}

/* A condition wait releases the mutex while waiting: its hold pauses, and the trace gets the
 * mutex's release and reacquire (the lock arcs), without counting them as the program's. */
static int cond_wait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *at)
{
    struct plx_sync_entry *ec, *em = NULL;
    struct plx_thread *t = begin(c, PLX_SYNC_COND, SITE, &ec);
    if (!t)
        return at ? REAL(cond_timedwait, "pthread_cond_timedwait")(c, m, at)
                  : REAL(cond_wait, "pthread_cond_wait")(c, m);
    t->guard++;
    em = plx_sync_entry(t, m, PLX_SYNC_MUTEX, SITE);
    uint64_t t0 = plx_ticks();
    if (em && em->depth)
        em->hold += t0 - em->hold_start;
    /* inside a Java monitor wait or Thread.sleep the JVM's waits are that wait (java_blocked):
     * no lock arcs */
    if (em && !t->java_blocked) {
        uint64_t w[PLX_EXT_RELEASE_WORDS];
        plx_ext_pack_release(w, em->object, PLX_SYNC_MUTEX);
        plx_trace_ext(t, PLX_EXT_RELEASE, w, PLX_EXT_RELEASE_WORDS);
    }
    t->guard--;
    int rc = at ? REAL(cond_timedwait, "pthread_cond_timedwait")(c, m, at)
                : REAL(cond_wait, "pthread_cond_wait")(c, m);
    uint64_t t1 = plx_ticks();
    t->guard++;
    if (em)
        em->hold_start = t1;
    if (em && !t->java_blocked) {
        uint64_t w[PLX_EXT_ACQUIRE_WORDS];
        plx_ext_pack_acquire(w, em->object, PLX_SYNC_MUTEX, 0, 0, 0);
        plx_trace_ext(t, PLX_EXT_ACQUIRE, w, PLX_EXT_ACQUIRE_WORDS);
    }
    plx_sync_acquired(t, ec, PLX_SYNC_COND, t1, t1 - t0, rc == 0, 0);
    t->guard--;
    return rc;
}

PLX_EXPORT int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
    return cond_wait(c, m, NULL);
}

PLX_EXPORT int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *at)
{
    return cond_wait(c, m, at);
}

PLX_EXPORT int pthread_cond_signal(pthread_cond_t *c)
{
    struct plx_sync_entry *e;
    struct plx_thread *t = begin(c, PLX_SYNC_COND, SITE, &e);
    if (t)
        released(t, e, PLX_SYNC_COND, 0);
    return REAL(cond_signal, "pthread_cond_signal")(c);
}

PLX_EXPORT int pthread_cond_broadcast(pthread_cond_t *c)
{
    struct plx_sync_entry *e;
    struct plx_thread *t = begin(c, PLX_SYNC_COND, SITE, &e);
    if (t)
        released(t, e, PLX_SYNC_COND, 0);
    return REAL(cond_broadcast, "pthread_cond_broadcast")(c);
}

/* Arrival is a release (the last arrival frees the others), leaving an acquire. */
PLX_EXPORT int pthread_barrier_wait(pthread_barrier_t *b)
{
    struct plx_sync_entry *e;
    struct plx_thread *t = begin(b, PLX_SYNC_BARRIER, SITE, &e);
    if (!t)
        return REAL(barrier_wait, "pthread_barrier_wait")(b);
    uint64_t t0 = plx_ticks();
    released(t, e, PLX_SYNC_BARRIER, 0);
    int rc = REAL(barrier_wait, "pthread_barrier_wait")(b);
    acquired(t, e, PLX_SYNC_BARRIER, t0, plx_ticks(), 1, 0);
    return rc;
}

PLX_EXPORT int pthread_join(pthread_t th, void **ret)
{
    struct plx_sync_entry *e;
    struct plx_thread *t = begin((const void *)th, PLX_SYNC_THREAD, SITE, &e);
    if (!t)
        return REAL(join, "pthread_join")(th, ret);
    uint64_t t0 = plx_ticks();
    int rc = REAL(join, "pthread_join")(th, ret);
    if (rc == 0) {
        acquired(t, e, PLX_SYNC_THREAD, t0, plx_ticks(), 1, 0);
        t->guard++;
        plx_sync_thread_joined(t, e); /* the handle may name the next thread */
        t->guard--;
    }
    return rc;
}

/* Init calls name their object after the caller. */
static void defined(const void *obj, int kind, uintptr_t site)
{
    /* only a measured thread's inits: a library's helper threads (and a library's work inside
     * a wrapped call, guard held) define objects nobody reports */
    struct plx_thread *t = plx_self;
    if (!plx_active || !t || t->guard || plx_sync_internal_site(site))
        return;
    t->guard++;
    plx_sync_define(obj, kind, site, 1);
    t->guard--;
}

PLX_EXPORT int pthread_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *a)
{
    int rc = REAL(mutex_init, "pthread_mutex_init")(m, a);
    defined(m, PLX_SYNC_MUTEX, SITE);
    return rc;
}
PLX_EXPORT int pthread_cond_init(pthread_cond_t *c, const pthread_condattr_t *a)
{
    int rc = REAL(cond_init, "pthread_cond_init")(c, a);
    defined(c, PLX_SYNC_COND, SITE);
    return rc;
}
PLX_EXPORT int pthread_rwlock_init(pthread_rwlock_t *l, const pthread_rwlockattr_t *a)
{
    int rc = REAL(rwlock_init, "pthread_rwlock_init")(l, a);
    defined(l, PLX_SYNC_RWLOCK, SITE);
    return rc;
}
PLX_EXPORT int pthread_barrier_init(pthread_barrier_t *b, const pthread_barrierattr_t *a, unsigned n)
{
    int rc = REAL(barrier_init, "pthread_barrier_init")(b, a, n);
    defined(b, PLX_SYNC_BARRIER, SITE);
    return rc;
}
PLX_EXPORT int pthread_spin_init(pthread_spinlock_t *s, int shared)
{
    int rc = REAL(spin_init, "pthread_spin_init")((void *)s, shared);
    defined((void *)s, PLX_SYNC_SPIN, SITE);
    return rc;
}
PLX_EXPORT int sem_init(sem_t *s, int shared, unsigned value)
{
    int rc = REAL(sem_init, "sem_init")(s, shared, value);
    defined(s, PLX_SYNC_SEM, SITE);
    return rc;
}
