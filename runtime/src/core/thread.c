/* Per-thread state: creation, the slow paths of the hot path, and writing a thread's data.
 *
 * A thread owns its state; the registry list links live threads so the process end can write
 * those still running. Whoever unlinks a thread from the list writes its data: the thread itself
 * at its exit (TLS destructor), or the process end. Only the thread itself frees its memory. */
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

static struct plx_thread dead = {.guard = 1, .dead = 1};
static struct plx_thread *live;
static atomic_flag reg_lock = ATOMIC_FLAG_INIT;
static _Atomic uint32_t next_index;
static _Atomic uint32_t live_count; /* length of `live` */
static pthread_key_t exit_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

#define RSTAT_REGIONS (1u << 16) /* trace mode throttling covers the first 64 Ki regions */

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
        struct plx_symbol sym = {NULL, PLX_NO_INDEX, 0, NULL, 0};
        attachable = plx_pending_start && plx_symbol_lookup(plx_pending_start, &sym) == 0 &&
                             sym.module_id == 0
                         ? 1
                         : 2;
    }
    return attachable == 1;
}

/* Creates the calling thread's state; the caller has made plx_self the dead state meanwhile. */
static struct plx_thread *plx_thread_new(uint32_t parent, uintptr_t start_routine)
{
    size_t head = round_page(sizeof(struct plx_thread));
    size_t stack = round_page((size_t)plx_cfg.max_depth * sizeof(struct plx_frame));
    size_t nodes = plx_cfg.trace ? 0 : round_page((size_t)plx_cfg.max_nodes * sizeof(struct plx_node));
    size_t tbuf = plx_cfg.trace ? round_page(plx_cfg.buffer_bytes) : 0;
    size_t rstats = plx_cfg.trace && plx_throttle_calls ? RSTAT_REGIONS * 16 : 0;
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
        t->nodes = plx_live_map("nodes", t->index, sizeof(struct plx_node), plx_cfg.max_nodes,
                                &t->live_nodes);
        if (!t->nodes)
            t->nodes = (struct plx_node *)(mem + head + stack);
        t->max_nodes = plx_cfg.max_nodes;
        t->nodes[0] = (struct plx_node){PLX_NO_INDEX, PLX_NO_INDEX, PLX_NO_INDEX, PLX_NO_INDEX, 0, 0, 0, 0};
        t->nnodes = 1;
        t->cur = 0;
        if (t->live_nodes)
            t->live_nodes->count = 1;
    }
    if (tbuf) {
        t->buf = (uint64_t *)(mem + head + stack + nodes);
        t->pos = t->buf;
        /* Room is kept past `end` for the largest single event: a time reset (2 words), then an
         * extended event with up to 5 payload words; writers check `pos < end` first. */
        t->end = t->buf + tbuf / 8 - 8;
    }
    if (rstats)
        t->rstats = (uint64_t *)(mem + head + stack + nodes + tbuf);
    t->tid = (uint32_t)syscall(SYS_gettid);
    t->parent = parent;
    t->pthread = (unsigned long)pthread_self();
    t->start_cpu_ns = plx_cpu_ns();
    t->start_ticks = plx_ticks();
    t->base = t->last = t->start_ticks;
    struct plx_symbol sym;
    if (t->index == 0)
        strcpy(t->name, "main");
    else if (start_routine && plx_symbol_lookup(start_routine, &sym) == 0)
        snprintf(t->name, sizeof t->name, "%s", sym.name);
    else
        snprintf(t->name, sizeof t->name, "thread-%u", t->index);
    write_thread_info(t);
    plx_counters_thread_start(t);
    pthread_once(&key_once, make_key);
    pthread_setspecific(exit_key, t);
    reg_take();
    t->next = live;
    live = t;
    atomic_fetch_add_explicit(&live_count, 1, memory_order_relaxed);
    reg_give();
    return t;
}

struct plx_thread *plx_thread_attach_as(uint32_t parent, uintptr_t start_routine)
{
    int saved = errno;
    plx_self = &dead; /* hooks called while attaching record nothing */
    struct plx_thread *t = plx_thread_new(parent, start_routine);
    plx_self = t;
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

uint32_t plx_node_new(struct plx_thread *t, uint32_t parent, uint32_t region)
{
    if (t->nnodes >= t->max_nodes) {
        t->lost_nodes++;
        return PLX_NO_INDEX;
    }
    uint32_t n = t->nnodes++;
    t->nodes[n] = (struct plx_node){parent, region, PLX_NO_INDEX, t->nodes[parent].first_child, 0, 0, 0, 0};
    t->nodes[parent].first_child = n;
    if (t->live_nodes)
        __atomic_store_n(&t->live_nodes->count, t->nnodes, __ATOMIC_RELEASE);
    return n;
}

void plx_throttle_check(struct plx_thread *t, uint32_t region, uint64_t calls, uint64_t incl)
{
    if (t->rstats) { /* trace mode: per-region totals of this thread */
        if (region >= RSTAT_REGIONS)
            return;
        calls = ++t->rstats[2 * region];
        incl = t->rstats[2 * region + 1] += incl;
        if (calls != plx_throttle_calls)
            return;
    } else if (t->buf) {
        return;
    }
    if (region == PLX_REGION_FLUSH || incl >= plx_throttle_ticks * calls)
        return;
    t->guard++;
    plx_region_throttle(region, calls, incl);
    t->guard--;
}

/* ---- trace buffer -------------------------------------------------------------------- */

static void write_chunk(struct plx_thread *t)
{
    uint32_t count = (uint32_t)(t->pos - t->buf);
    if (count == 0)
        return;
    uint64_t ct = plx_ticks(), cm = plx_monotonic_ns();
    struct plx_rec rec;
    plx_rec_init(&rec);
    plx_enc_trace_chunk(&rec, t->index, count, t->base, ct, cm);
    /* a chunk the file did not take is lost, and counted so (the trace holds trace_events) */
    if (plx_rec_write_bulk(&rec, 1, t->buf) == 0)
        t->trace_events += count;
    else
        t->lost_events += count;
    t->pos = t->buf;
    t->base = t->last;
}

/* Writes the buffer as one chunk; the write is recorded as region plx_flush in the next one. */
void plx_trace_flush(struct plx_thread *t)
{
    int saved = errno;
    t->guard++;
    uint64_t t0 = plx_ticks();
    if (t0 - t->last > PLX_EV_DELTA_MAX)
        t0 = t->last; /* the reset comes with the next event */
    write_chunk(t);
    uint64_t t1 = plx_ticks();
    if (t1 - t0 > PLX_EV_DELTA_MAX)
        t1 = t0;
    *t->pos++ = (PLX_EV_ENTER << PLX_EV_KIND_SHIFT) | ((uint64_t)PLX_REGION_FLUSH << PLX_EV_REGION_SHIFT) |
                (t0 - t->last);
    *t->pos++ = (PLX_EV_EXIT << PLX_EV_KIND_SHIFT) | ((uint64_t)PLX_REGION_FLUSH << PLX_EV_REGION_SHIFT) |
                (t1 - t0);
    t->last = t1;
    t->guard--;
    errno = saved;
}

void plx_trace_time_reset(struct plx_thread *t, uint64_t now)
{
    *t->pos++ = (PLX_EV_EXT << PLX_EV_KIND_SHIFT) | ((uint64_t)PLX_EXT_TIME_RESET << PLX_EV_SUBTYPE_SHIFT) |
                ((uint64_t)PLX_EXT_TIME_RESET_WORDS << PLX_EV_WORDS_SHIFT);
    plx_ext_pack_time_reset(t->pos, now);
    t->pos += PLX_EXT_TIME_RESET_WORDS;
    t->last = now;
}

void plx_trace_slow(struct plx_thread *t, uint64_t word, uint64_t now)
{
    if (t->pos >= t->end)
        plx_trace_flush(t);
    if ((int64_t)(now - t->last) < 0)
        now = t->last; /* the thread moved to a core whose counter lags: keep its events in order */
    uint64_t d = now - t->last;
    if (d > PLX_EV_DELTA_MAX) {
        plx_trace_time_reset(t, now);
        d = 0;
    }
    *t->pos++ = (word & ~PLX_EV_DELTA_MAX) | d;
    t->last = now;
}

/* An extended event now (trace mode only): subtype, then up to 5 payload words. */
void plx_trace_ext(struct plx_thread *t, unsigned subtype, const uint64_t *payload, unsigned words)
{
    if (t->buf)
        plx_trace_ext_at(t, plx_ticks(), subtype, payload, words);
}

/* The same at `now`, a clock value the caller read (one earlier than the thread's last event
 * is moved to that event's time, as in plx_trace_slow). */
void plx_trace_ext_at(struct plx_thread *t, uint64_t now, unsigned subtype, const uint64_t *payload,
                      unsigned words)
{
    if (!t->buf || words > 5)
        return;
    if (t->pos >= t->end || now - t->last > PLX_EV_DELTA_MAX)
        plx_trace_slow(t, PLX_EV_EXT << PLX_EV_KIND_SHIFT, now);
    else
        plx_trace_put(t, PLX_EV_EXT, 0, now);
    t->pos[-1] |= ((uint64_t)subtype << PLX_EV_SUBTYPE_SHIFT) | ((uint64_t)words << PLX_EV_WORDS_SHIFT);
    for (unsigned i = 0; i < words; i++)
        *t->pos++ = payload[i];
}

/* ---- CPU time of `cputime` functions -------------------------------------------------------- */

/* At the exit of a selected function: its inclusive CPU time goes to its node (profile mode,
 * written as NodeCpu) or into the trace as an event (trace mode). */
void plx_cpu_exit(struct plx_thread *t, struct plx_frame *f)
{
    uint64_t cpu = plx_cpu_ns() - (f->cpu & ~3ull);
    if (t->buf) {
        uint64_t w[PLX_EXT_CPU_WORDS];
        plx_ext_pack_cpu(w, f->region, cpu);
        plx_trace_ext(t, PLX_EXT_CPU, w, PLX_EXT_CPU_WORDS);
        return;
    }
    if (f->node == PLX_NO_INDEX)
        return;
    if (!t->node_cpu) {
        void *p = mmap(NULL, sizeof(uint64_t) * t->max_nodes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED)
            return;
        t->node_cpu = p;
    }
    t->node_cpu[f->node] += cpu;
}

void plx_frame_enter_slow(struct plx_thread *t, uint32_t value)
{
    struct plx_frame *f = t->depth ? &t->stack[t->depth - 1] : NULL;
    if (!f || f->region != (value & PLX_REGION_ID_MASK) || f->cpu)
        return; /* not pushed (too deep) */
    if (value & PLX_REGION_CPU)
        f->cpu = (plx_cpu_ns() & ~3ull) | 1; /* never 0 */
    if (value & PLX_REGION_COUNTERS)
        plx_counters_enter(t, f); /* last: the CPU clock's read stays outside the counts */
}

void plx_frame_exit_slow(struct plx_thread *t, struct plx_frame *f)
{
    if (f->cpu & 2)
        plx_counters_exit(t, f);
    if (f->cpu & 1)
        plx_cpu_exit(t, f);
    f->cpu = 0;
}

static void write_node_cpu(struct plx_thread *t)
{
    if (!t->node_cpu)
        return;
    struct plx_rec rec;
    plx_rec_init(&rec);
    uint32_t count = 0;
    for (uint32_t i = 1; i < t->nnodes; i++)
        count += t->node_cpu[i] != 0;
    plx_enc_node_cpu(&rec, t->index, count);
    for (uint32_t i = 1; i < t->nnodes; i++)
        if (t->node_cpu[i])
            plx_enc_node_cpu_entries(&rec, i - 1, t->node_cpu[i]); /* as numbered in ThreadProfile */
    plx_rec_write(&rec, 0);
}

/* ---- user events ------------------------------------------------------------------------ */

void plx_uevent_record(struct plx_thread *t, uint32_t id, double value)
{
    if (id >= PLX_MAX_UEVENTS)
        return;
    struct plx_uevent *e = &t->uevents[id];
    if (e->count == 0 || value < e->min)
        e->min = value;
    if (e->count == 0 || value > e->max)
        e->max = value;
    e->count++;
    e->sum += value;
    e->sumsq += value * value;
    if (id >= t->nuevents)
        t->nuevents = id + 1;
    if (t->buf) {
        uint64_t now = plx_ticks();
        if (t->pos >= t->end || now - t->last > PLX_EV_DELTA_MAX)
            plx_trace_slow(t, (PLX_EV_EXT << PLX_EV_KIND_SHIFT) | ((uint64_t)PLX_EXT_USER << PLX_EV_SUBTYPE_SHIFT), now);
        else
            plx_trace_put(t, PLX_EV_EXT, 0, now), t->pos[-1] |= (uint64_t)PLX_EXT_USER << PLX_EV_SUBTYPE_SHIFT;
        t->pos[-1] |= (uint64_t)PLX_EXT_USER_WORDS << PLX_EV_WORDS_SHIFT;
        plx_ext_pack_user(t->pos, id, value);
        t->pos += PLX_EXT_USER_WORDS;
    }
}

/* ---- writing a thread's data --------------------------------------------------------------- */

static void write_profile(struct plx_thread *t, uint64_t now, uint64_t cpu)
{
    struct plx_rec rec;
    plx_rec_init(&rec);
    uint32_t n = t->nodes ? t->nnodes - 1 : 0;
    plx_enc_thread_profile(&rec, t->index, now, cpu, t->trace_events, t->lost_events, t->lost_nodes, n);
    for (uint32_t i = 1; i <= n; i++) {
        const struct plx_node *nd = &t->nodes[i];
        uint32_t parent = nd->parent == 0 ? PLX_NO_INDEX : nd->parent - 1;
        plx_enc_thread_profile_nodes(&rec, parent, nd->region, nd->calls, nd->child_calls, nd->incl,
                                     nd->excl);
    }
    plx_rec_write(&rec, 0);
    for (uint32_t id = 0; id < t->nuevents; id++) {
        const struct plx_uevent *e = &t->uevents[id];
        if (!e->count)
            continue;
        plx_enc_user_event_stats(&rec, t->index, id, e->count, e->min, e->max, e->sum, e->sumsq);
        plx_rec_write(&rec, 0);
    }
}

/* Writes t's data: open regions are closed at `now` (profile mode), the trace buffer goes out. */
static void finish(struct plx_thread *t, uint64_t now, uint64_t cpu)
{
    t->guard++;
    plx_counters_thread_end(t); /* before the trace's last chunk: it may add counted calls */
    if (t->buf) {
        write_chunk(t);
    } else {
        while (t->depth > 0) {
            struct plx_frame *f = &t->stack[t->depth - 1];
            if (now < f->start)
                now = f->start;
            plx_leave(t, f, now);
        }
    }
    write_profile(t, now, cpu);
    write_node_cpu(t);
    plx_sync_write(t);
    plx_ext_thread_ended(t);
    if (t->live_nodes)
        plx_live_remove("nodes", t->index); /* its content is in the records now */
}

static int unlink_thread(struct plx_thread *t)
{
    int found = 0;
    reg_take();
    for (struct plx_thread **p = &live; *p; p = &(*p)->next)
        if (*p == t) {
            *p = t->next;
            found = 1;
            atomic_fetch_sub_explicit(&live_count, 1, memory_order_relaxed);
            break;
        }
    reg_give();
    return found;
}

void plx_thread_finish(struct plx_thread *t, uint64_t now)
{
    if (!t || t->dead)
        return;
    plx_self = &dead;
    if (unlink_thread(t))
        finish(t, now, plx_cpu_ns());
    plx_live_unmap(t->live_nodes);
    plx_live_unmap(t->live_sync);
    if (t->node_cpu)
        munmap(t->node_cpu, sizeof(uint64_t) * t->max_nodes);
    munmap(t->mem, t->mem_bytes);
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
    for (struct plx_thread *t = all; t; t = t->next)
        if (t != self)
            t->guard++;
    for (struct plx_thread *t = all; t; t = t->next) {
        uint64_t cpu = 0;
        if (t == self) {
            cpu = plx_cpu_ns();
        } else {
            clockid_t c;
            if (pthread_getcpuclockid((pthread_t)t->pthread, &c) == 0)
                cpu = thread_cpu_ns(c);
        }
        finish(t, now, cpu);
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
    struct plx_thread *t = plx_self;
    live = NULL;
    atomic_store_explicit(&live_count, 0, memory_order_relaxed);
    if (!t || t == &dead)
        return;
    uint64_t now = plx_ticks();
    t->tid = (uint32_t)syscall(SYS_gettid);
    t->pthread = (unsigned long)pthread_self();
    t->start_ticks = now;
    t->start_cpu_ns = plx_cpu_ns();
    if (t->live_nodes) { /* the mapping is the parent's file: copy the tree into our own */
        struct plx_live_header *h;
        struct plx_node *mine = plx_live_map("nodes", t->index, sizeof(struct plx_node), t->max_nodes, &h);
        if (mine) {
            memcpy(mine, t->nodes, sizeof(struct plx_node) * t->nnodes);
            h->count = t->nnodes;
        } else {
            mine = mmap(NULL, sizeof(struct plx_node) * t->max_nodes, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
            memcpy(mine, t->nodes, sizeof(struct plx_node) * t->nnodes);
            h = NULL;
        }
        plx_live_unmap(t->live_nodes);
        t->nodes = mine;
        t->live_nodes = h;
    }
    for (uint32_t i = 0; i < t->nnodes; i++) {
        struct plx_node *n = &t->nodes[i];
        n->calls = n->child_calls = n->incl = n->excl = 0;
    }
    for (uint32_t i = 0; i < t->depth; i++) {
        t->stack[i].start = now;
        t->stack[i].child = 0;
    }
    if (t->buf) {
        t->pos = t->buf;
        t->base = t->last = now;
        t->trace_events = 0;
        /* the child's trace starts inside the regions that are open */
        for (uint32_t i = 0; i < t->depth; i++)
            plx_trace_put(t, PLX_EV_ENTER, t->stack[i].region, now);
    }
    t->lost_events = t->lost_nodes = 0;
    memset(t->uevents, 0, sizeof t->uevents);
    plx_counters_after_fork(t);
    write_thread_info(t);
    t->next = NULL;
    live = t;
    atomic_store_explicit(&live_count, 1, memory_order_relaxed);
}

void plx_thread_mark_internal(void)
{
    plx_self = &dead;
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
        if (pthread_getcpuclockid((pthread_t)t->pthread, &c) != 0 || clock_gettime(c, &ts) != 0)
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
