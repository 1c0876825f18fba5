/* Per-thread state: the lifecycle of a thread (creation, registry, exit, the process end).
 * Its trace buffer is trace_buffer.c's, its callpath tree profile_tree.c's, what a forked child
 * resets thread_fork.c's.
 *
 * A thread owns its state; the registry list links live threads so the process end can write
 * those still running. Whoever unlinks a thread from the list writes its data: the thread itself
 * at its exit (TLS destructor), or the process end. Only the thread itself frees its memory.
 * A location that is no thread (plx_location_new: a JVM virtual thread) is run by one thread at
 * a time, the one that has made it its plx_self; plx_location_end, called by the adapter that
 * made it as it ends, writes it as the thread's exit does and frees it. */
#include "hotpath.h"
#include "counters.h"

#include <errno.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

PLX_TLS struct plx_thread *plx_self;
PLX_TLS uintptr_t plx_pending_start;
PLX_TLS uint32_t plx_pending_parent = PLX_NO_INDEX;
PLX_TLS void *plx_pending_block;
PLX_TLS uintptr_t plx_pending_site;
volatile int plx_active;
int plx_launcher;

static struct plx_thread dead = {.guard = 1, .dead = 1};
static struct plx_thread *live;
static atomic_flag reg_lock = ATOMIC_FLAG_INIT;
static _Atomic uint32_t next_index;
static _Atomic uint32_t live_count; /* length of `live` */
static pthread_key_t exit_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

static void reg_take(void)
{
    while (atomic_flag_test_and_set_explicit(&reg_lock, memory_order_acquire))
        sched_yield();
}

static void reg_give(void)
{
    atomic_flag_clear_explicit(&reg_lock, memory_order_release);
}

static uint64_t thread_cpu_ns(clockid_t c)
{
    struct timespec ts;
    if (clock_gettime(c, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t plx_cpu_ns(void)
{
    return thread_cpu_ns(CLOCK_THREAD_CPUTIME_ID);
}

static void on_thread_exit(void *p);

static void make_key(void)
{
    pthread_key_create(&exit_key, on_thread_exit);
}

static void *map(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static void write_thread_info(struct plx_thread *t)
{
    struct plx_rec rec;
    plx_rec_init(&rec);
    plx_enc_thread_info(&rec, t->index, t->tid, t->parent, t->start_ticks, t->start_cpu_ns, t->name);
    plx_rec_write(&rec, 0);
}

static size_t round_page(size_t n)
{
    return (n + 4095) & ~(size_t)4095;
}

/* The calling thread's first event: it is registered, named after its start routine when it
 * came from pthread_create. */
struct plx_thread *plx_thread_attach(void)
{
    struct plx_thread *t = plx_thread_attach_as(plx_pending_parent, plx_pending_start);
    if (t)
        t->create_site = plx_pending_site;
    free(plx_pending_block);
    plx_pending_block = NULL;
    plx_pending_comm = NULL;
    return t;
}

/* Whether a thread not yet measured is attached by an interposed library call (synchronization,
 * sockets): only threads the program started itself (start routine in the executable) — not
 * the helper threads of the libraries it uses (an MPI library's progress threads lock all the
 * time). Decided once per thread. */
static PLX_TLS int attachable; /* 0 not decided, 1 yes, 2 no */

int plx_program_thread(void)
{
    if (!attachable) {
        /* "no" while deciding: a wrapper the lookup itself reaches passes through (reading a
         * symbol table maps it, and a library may hook mmap with a lock of its own: UCX) */
        attachable = 2;
        struct plx_symbol sym = {NULL, PLX_NO_INDEX, 0, NULL, 0, 0};
        attachable = plx_pending_start && plx_symbol_lookup(plx_pending_start, &sym) == 0 &&
                             sym.module_id == 0
                         ? 1
                         : 2;
    }
    return attachable == 1;
}

/* Creates the calling thread's state; the caller has made plx_self the dead state meanwhile.
 * With `location` a name: the state of a location that is no thread of the process (a JVM
 * virtual thread), run by whichever thread makes it its plx_self: no CPU clock (its CPU time
 * is 0), no counters, no samples, no TLS destructor; the tid is its creator's. */
static struct plx_thread *plx_thread_new(uint32_t parent, uintptr_t start_routine,
                                         const char *location)
{
    size_t head = round_page(sizeof(struct plx_thread));
    size_t stack = round_page((size_t)plx_cfg.max_depth * sizeof(struct plx_frame));
    size_t nodes = plx_cfg.trace ? 0 : round_page((size_t)plx_cfg.max_nodes * sizeof(struct plx_node));
    size_t tbuf = plx_cfg.trace ? round_page(plx_cfg.buffer_bytes) : 0;
    size_t rstats = plx_cfg.trace && plx_throttle_calls ? PLX_RSTAT_REGIONS * 16 : 0;
    size_t total = head + stack + nodes + tbuf + rstats;
    char *mem = map(total);
    if (!mem)
        return NULL;
    struct plx_thread *t = (struct plx_thread *)mem;
    t->mem = mem;
    t->mem_bytes = total;
    t->stack = (struct plx_frame *)(mem + head);
    t->max_depth = plx_cfg.max_depth;
    t->index = atomic_fetch_add(&next_index, 1);
    if (nodes) {
        /* the tree lives in a file mapping so it survives SIGKILL; memory if that fails */
        t->max_nodes = plx_cfg.max_nodes;
        /* a location's in memory: a program's thousands of virtual threads alive at once would
         * each make and remove a file (beyond the pool's slots), at the file system's cost */
        if (!location)
            t->nodes = plx_live_take("nodes", t->index, sizeof(struct plx_node),
                                     plx_cfg.max_nodes, PLX_LIVE_NODES_FIRST, &t->live_nodes,
                                     &t->node_room);
        if (!t->nodes) {
            t->nodes = (struct plx_node *)(mem + head + stack);
            t->node_room = t->max_nodes;
        }
        t->nodes[0] = (struct plx_node){PLX_NO_INDEX, PLX_NO_INDEX, PLX_NO_INDEX, PLX_NO_INDEX, 0, 0, 0, 0};
        t->nnodes = 1;
        t->cur = 0;
        if (t->live_nodes)
            t->live_nodes->count = 1;
    }
    if (rstats)
        t->rstats = (uint64_t *)(mem + head + stack + nodes + tbuf);
    t->tid = (uint32_t)syscall(SYS_gettid);
    t->parent = parent;
    t->pthread = location ? 0 : (unsigned long)pthread_self();
    t->start_cpu_ns = location ? 0 : plx_cpu_ns();
    uint64_t now = plx_ticks();
    /* its wall time starts at its creation, when an interposed pthread_create saw it */
    t->start_ticks = plx_pending_created && plx_pending_created < now ? plx_pending_created : now;
    plx_pending_created = 0;
    t->base = t->last = now;
    if (tbuf)
        plx_trace_buffer_map(t, (uint64_t *)(mem + head + stack + nodes), tbuf / 8, !location);
    struct plx_symbol sym;
    if (location)
        snprintf(t->name, sizeof t->name, "%s", location);
    else if (t->index == 0)
        strcpy(t->name, "main");
    else if (start_routine && plx_symbol_lookup(start_routine, &sym) == 0)
        snprintf(t->name, sizeof t->name, "%s", sym.name);
    else
        snprintf(t->name, sizeof t->name, "thread-%u", t->index);
    if (location) {
        t->java_name = 1; /* its name is its own, never the kernel's of a thread that runs it */
        write_thread_info(t);
    } else {
        plx_thread_name_start(t, plx_pending_comm);
        write_thread_info(t);
        plx_counters_thread_start(t);
        pthread_once(&key_once, make_key);
        pthread_setspecific(exit_key, t);
    }
    reg_take();
    t->next = live;
    t->pprev = &live;
    if (live)
        live->pprev = &t->next;
    live = t;
    atomic_fetch_add_explicit(&live_count, 1, memory_order_relaxed);
    reg_give();
    if (!location)
        plx_stack_sampler_thread_start(t);
    return t;
}

struct plx_thread *plx_thread_attach_as(uint32_t parent, uintptr_t start_routine)
{
    int saved = errno;
    plx_self = &dead; /* hooks called while attaching record nothing */
    if (plx_launcher)
        return NULL; /* nor anything after, in a launcher: the thread stays the dead state */
    struct plx_thread *t = plx_thread_new(parent, start_routine, NULL);
    plx_self = t;
    errno = saved;
    return t;
}

struct plx_thread *plx_location_new(const char *name)
{
    struct plx_thread *self = plx_self;
    if (plx_launcher || !plx_active || (self && self->dead))
        return NULL;
    int saved = errno;
    plx_self = &dead;
    struct plx_thread *t = plx_thread_new(PLX_NO_INDEX, 0, name);
    plx_self = self;
    errno = saved;
    return t;
}

uint32_t plx_region_resolve(struct plx_thread *t, uintptr_t addr)
{
    int saved = errno;
    t->guard++;
    uint32_t v = plx_region_of_address_slow(addr);
    t->guard--;
    errno = saved;
    return v;
}

/* ---- writing a thread's data --------------------------------------------------------------- */

/* At the process's end: how many calls of t are still open (an OpenAtEnd record). */
static void record_open_at_end(struct plx_thread *t, uint64_t now)
{
    struct plx_rec rec;
    plx_rec_init(&rec);
    plx_enc_open_at_end(&rec, t->index, t->depth + (uint32_t)t->overflow, now);
    plx_rec_write(&rec, 0);
}

/* Writes t's data: regions still open (left by pthread_exit or a cancellation; or open when the
 * process ends, `at_end`: recorded as such) are closed at `now` in both modes, then the trace
 * buffer goes out. */
static void finish(struct plx_thread *t, uint64_t now, uint64_t cpu, int at_end)
{
    t->guard++;
    plx_counters_thread_end(t); /* before the trace's last chunk: it may add counted calls */
    if (at_end && t->depth)
        record_open_at_end(t, now);
    while (t->depth > 0) {
        struct plx_frame *f = &t->stack[t->depth - 1];
        if (now < f->start)
            now = f->start;
        plx_leave(t, f, now);
    }
    if (t->buf)
        plx_trace_write_chunk(t);
    plx_profile_write(t, now, cpu);
    plx_stack_sampler_write(t);
    plx_sync_write(t);
    plx_messages_write(t);
    plx_ext_thread_ended(t);
    /* their content is in the records now */
    plx_live_give("nodes", t->live_nodes);
    t->live_nodes = NULL;
    plx_trace_buffer_unmap(t);
}

static int unlink_thread(struct plx_thread *t)
{
    int found = 0;
    reg_take();
    if (t->pprev) { /* O(1): a program may run as many virtual threads as it likes */
        *t->pprev = t->next;
        if (t->next)
            t->next->pprev = t->pprev;
        t->pprev = NULL;
        found = 1;
        atomic_fetch_sub_explicit(&live_count, 1, memory_order_relaxed);
    }
    reg_give();
    return found;
}

/* Writes t's data unless the process end did (it unlinked t first), then frees t. */
static void release(struct plx_thread *t, uint64_t now)
{
    if (unlink_thread(t)) {
        plx_thread_name_end(t, 1);
        finish(t, now, t->pthread ? plx_cpu_ns() : 0, 0);
    }
    plx_live_unmap(t->live_sync);
    if (t->node_cpu)
        munmap(t->node_cpu, sizeof(uint64_t) * t->max_nodes);
    if (t->throttled)
        munmap(t->throttled, ((size_t)t->max_nodes + 63) / 64 * 8);
    munmap(t->mem, t->mem_bytes);
}

void plx_thread_finish(struct plx_thread *t, uint64_t now)
{
    if (!t || t->dead)
        return;
    plx_self = &dead;
    release(t, now);
}

void plx_location_end(struct plx_thread *t, uint64_t now)
{
    struct plx_thread *self = plx_self;
    if (!t || t == self)
        return;
    plx_self = &dead;
    if (!t->dead) /* else the process end wrote it: its memory stays */
        release(t, now);
    plx_self = self;
}

/* A measured thread's end (TLS destructor): it releases its own thread object, the one a
 * pthread_join of it acquires, then its data is written. */
static void on_thread_exit(void *p)
{
    struct plx_thread *t = p;
    if (plx_self != t)
        return;
    if (!t->guard && !t->dead && plx_active) {
        int saved = errno;
        t->guard++;
        plx_sync_thread_end(t);
        t->guard--;
        errno = saved;
    }
    plx_thread_finish(t, plx_ticks());
}

/* Process end: the calling thread and every thread still running are written. Threads still
 * running are stopped from recording first (their guard); their memory stays theirs. */
int plx_threads_busy(void)
{
    if (atomic_flag_test_and_set_explicit(&reg_lock, memory_order_acquire))
        return 1;
    int busy = 0;
    for (struct plx_thread *t = live; t; t = t->next)
        if (t != plx_self && t->guard)
            busy = 1;
    reg_give();
    return busy;
}

void plx_threads_finish_all(void)
{
    uint64_t now = plx_ticks();
    struct plx_thread *self = plx_self;
    reg_take();
    struct plx_thread *all = live;
    live = NULL;
    atomic_store_explicit(&live_count, 0, memory_order_relaxed);
    reg_give();
    for (struct plx_thread *t = all; t; t = t->next) {
        t->pprev = NULL; /* unlinked: the process end writes it */
        if (t != self)
            t->guard++;
    }
    for (struct plx_thread *t = all; t; t = t->next) {
        uint64_t cpu = 0;
        if (!t->pthread) {
            /* a location of no thread (plx_location_new): no CPU clock */
        } else if (t == self) {
            cpu = plx_cpu_ns();
        } else {
            clockid_t c;
            if (pthread_getcpuclockid((pthread_t)t->pthread, &c) == 0)
                cpu = thread_cpu_ns(c);
        }
        plx_thread_name_end(t, t == self);
        finish(t, now, cpu, 1);
        t->dead = 1;
    }
    if (self && self != &dead)
        plx_self = &dead;
}

/* In a fork()ed child only the calling thread exists: it keeps its callpath tree and open
 * regions with counts reset, so the child's profile holds what the child does. */
void plx_threads_after_fork(void)
{
    atomic_flag_clear(&reg_lock);
    plx_live_pool_after_fork();
    struct plx_thread *t = plx_self;
    live = NULL;
    atomic_store_explicit(&live_count, 0, memory_order_relaxed);
    if (!t || t == &dead)
        return;
    plx_thread_reset_after_fork(t);
    write_thread_info(t);
    t->next = NULL;
    t->pprev = &live;
    live = t;
    atomic_store_explicit(&live_count, 1, memory_order_relaxed);
}

void plx_thread_mark_internal(void)
{
    plx_self = &dead;
}

void plx_threads_each(void (*fn)(struct plx_thread *))
{
    reg_take();
    for (struct plx_thread *t = live; t; t = t->next)
        fn(t);
    reg_give();
}

uint32_t plx_threads_live_count(void)
{
    return atomic_load_explicit(&live_count, memory_order_relaxed);
}

/* A thread stays in `live` until its own exit unlinks it (under this lock) before it ends, and
 * only then frees its state: so every thread read here is alive and its pthread_t valid. */
uint32_t plx_threads_sample_cpu(uint32_t *index, uint64_t *cpu_ns, uint32_t max, uint64_t *ticks)
{
    uint32_t n = 0;
    reg_take();
    *ticks = plx_ticks();
    for (struct plx_thread *t = live; t && n < max; t = t->next) {
        clockid_t c;
        struct timespec ts;
        if (!t->pthread || pthread_getcpuclockid((pthread_t)t->pthread, &c) != 0 ||
            clock_gettime(c, &ts) != 0)
            continue;
        index[n] = t->index;
        cpu_ns[n] = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
        n++;
    }
    reg_give();
    return n;
}

void plx_thread_set_name(struct plx_thread *t, const char *name)
{
    snprintf(t->name, sizeof t->name, "%s", name);
    struct plx_rec rec;
    plx_rec_init(&rec);
    plx_enc_thread_name(&rec, t->index, name);
    plx_rec_write(&rec, 0);
}
