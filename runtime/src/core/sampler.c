/* The CPU sampler (PLX_CPU_SAMPLE=MS): a runtime thread that reads the CPU clock of every
 * measured thread every MS ms and appends the samples to process.plx as CpuSamples records (21),
 * in batches.
 *
 * Invariants: the sampler thread is the runtime's own — created past the measuring trampoline,
 * all signals blocked, its plx_self the dead state so no hook ever records or attaches it. The
 * batch buffer, the scratch arrays and `stopped` are guarded by `smp_lock` (a spin lock, not a
 * pthread mutex: the program's mutexes are measured); the sampler holds it for one sample and a
 * batch write, the process end for the final sample and the last batch. Once `stopped` is set
 * nothing more is sampled or written; the sampler ends at its next wake-up (it is detached).
 * Thread clocks are read under the thread registry's lock (plx_threads_sample_cpu): a thread
 * that has ended has left the registry first. The hot path is untouched. */
#include "plx_internal.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define BATCH 64 /* samples per write */

static atomic_flag smp_lock = ATOMIC_FLAG_INIT;
static _Atomic int stopped;
static int started;
static int atfork; /* handlers registered: a fork()ed child inherits them, never again */
static uint32_t period_ms;
static unsigned char *buf; /* framed records waiting to be written */
static size_t len, cap;
static unsigned pending;   /* samples in buf */
static uint32_t *idx;      /* scratch: one sample's thread indices and CPU ns */
static uint64_t *cpu;
static uint32_t scratch;
static uint64_t dropped;   /* threads left out of a sample for want of memory */

static void lock(void)
{
    while (atomic_flag_test_and_set_explicit(&smp_lock, memory_order_acquire))
        sched_yield();
}

/* The lock within about 100 ms, else 0 (the signal path: the sampler may be stuck behind the
 * registry lock of the thread the signal interrupted). */
static int lock_bounded(void)
{
    for (int i = 0; i < 2100; i++) {
        if (!atomic_flag_test_and_set_explicit(&smp_lock, memory_order_acquire))
            return 1;
        if (i < 100) {
            sched_yield();
        } else {
            struct timespec d = {0, 50000};
            plx_real_nanosleep(&d, NULL);
        }
    }
    return 0;
}

static void unlock(void)
{
    atomic_flag_clear_explicit(&smp_lock, memory_order_release);
}

static void *grow(void *old, size_t old_bytes, size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    if (old) {
        memcpy(p, old, old_bytes);
        munmap(old, old_bytes);
    }
    return p;
}

static void flush_locked(void)
{
    if (len)
        plx_write_framed(buf, len);
    len = 0;
    pending = 0;
}

/* One sample into the batch; the batch goes out when full. Caller holds smp_lock. */
static void sample_locked(void)
{
    uint32_t want = plx_threads_live_count() + 16;
    if (want > scratch) {
        uint32_t n = want * 2;
        uint32_t *i2 = grow(NULL, 0, (size_t)n * 4);
        uint64_t *c2 = grow(NULL, 0, (size_t)n * 8);
        if (i2 && c2) {
            if (idx) {
                munmap(idx, (size_t)scratch * 4);
                munmap(cpu, (size_t)scratch * 8);
            }
            idx = i2;
            cpu = c2;
            scratch = n;
        } else {
            if (i2)
                munmap(i2, (size_t)n * 4);
            if (c2)
                munmap(c2, (size_t)n * 8);
        }
    }
    if (!scratch)
        return;
    uint64_t ticks;
    uint32_t n = plx_threads_sample_cpu(idx, cpu, scratch, &ticks);
    if (n == scratch)
        dropped++; /* possibly: the registry may have held more */
    size_t need = PLX_RECORD_HEADER_SIZE + PLX_CPU_SAMPLES_FIXED_SIZE +
                  (size_t)n * PLX_CPU_SAMPLES_ENTRIES_ITEM_SIZE;
    if (len + need > cap)
        flush_locked();
    if (need > cap) {
        size_t c = cap ? cap : 65536;
        while (c < need)
            c *= 2;
        unsigned char *b = grow(NULL, 0, c);
        if (!b)
            return;
        if (buf)
            munmap(buf, cap);
        buf = b;
        cap = c;
    }
    struct plx_rec rec;
    plx_rec_over(&rec, buf, (uint32_t)len, (uint32_t)cap);
    plx_enc_cpu_samples(&rec, ticks, n);
    for (uint32_t i = 0; i < n; i++)
        plx_enc_cpu_samples_entries(&rec, idx[i], cpu[i]);
    plx_rec_end(&rec);
    len = rec.len;
    if (++pending >= BATCH)
        flush_locked();
}

static void add_ms(struct timespec *t, uint32_t ms)
{
    t->tv_sec += ms / 1000;
    t->tv_nsec += (long)(ms % 1000) * 1000000L;
    if (t->tv_nsec >= 1000000000L) {
        t->tv_sec++;
        t->tv_nsec -= 1000000000L;
    }
}

static int before(const struct timespec *a, const struct timespec *b)
{
    return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

static void *sampler_main(void *arg)
{
    (void)arg;
    plx_thread_mark_internal();
    struct timespec next, now;
    clock_gettime(CLOCK_MONOTONIC, &next);
    while (!atomic_load(&stopped)) {
        add_ms(&next, period_ms);
        /* absolute deadlines keep the period; after a long stall (the machine was busy, the
         * process stopped) the next deadline is a period from now, not a burst of catch-ups */
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (before(&next, &now)) {
            next = now;
            add_ms(&next, period_ms);
        }
        while (plx_real_clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR)
            ;
        lock();
        if (!atomic_load(&stopped))
            sample_locked();
        unlock();
    }
    return NULL;
}

/* fork() waits for a sample in progress, so the child's copy of the buffer is whole. */
static void before_fork(void)
{
    if (started)
        lock();
}

static void after_fork_parent(void)
{
    if (started)
        unlock();
}

static int spawn(void)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old); /* the new thread inherits the mask */
    pthread_t th;
    int rc = plx_create_internal_thread(&th, sampler_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

void plx_sampler_start(void)
{
    period_ms = plx_cfg.cpu_sample_ms;
    if (!period_ms)
        return;
    atomic_store(&stopped, 0);
    int rc = spawn();
    if (rc != 0) {
        plx_warn("cannot start the CPU sampler: %s; no CPU samples", strerror(rc));
        return;
    }
    if (!atfork)
        pthread_atfork(before_fork, after_fork_parent, NULL);
    atfork = 1;
    started = 1;
}

void plx_sampler_stop(void)
{
    if (!started || atomic_load(&stopped))
        return;
    if (!lock_bounded()) {
        /* the sampler is stuck mid-sample: its buffered samples are lost (spec/format.md) */
        atomic_store(&stopped, 1);
        if (plx_cfg.verbose)
            plx_warn("CPU sampler busy at the end: %u buffered samples not written", pending);
        return;
    }
    atomic_store(&stopped, 1);
    sample_locked(); /* the final sample: every thread still registered */
    flush_locked();
    if (dropped && plx_cfg.verbose)
        plx_warn("CPU samples: %llu samples may have left threads out (no memory)",
                 (unsigned long long)dropped);
    unlock();
}

/* In a fork()ed child: the parent's samples are not the child's; the sampler thread did not
 * survive the fork, so a new one starts (the child's process.plx is already open). */
void plx_sampler_after_fork(void)
{
    if (!started)
        return;
    atomic_flag_clear(&smp_lock); /* taken by before_fork */
    len = 0;
    pending = 0;
    dropped = 0;
    started = 0;
    plx_sampler_start();
}
