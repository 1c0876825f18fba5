/* The hot path: entering and leaving a region on the calling thread.
 *
 * Invariants: only the owning thread touches its stack, nodes and trace buffer; nothing here
 * allocates, locks or makes a system call except on the marked slow paths (first sight of a
 * region, a full trace buffer), which run with the thread's re-entry guard set. The clock is
 * read last on entry and first on exit so the hook's own cost stays outside the region. */
#ifndef PLX_HOTPATH_H
#define PLX_HOTPATH_H

#include "plx_internal.h"

static inline void plx_trace_put(struct plx_thread *t, uint64_t kind, uint32_t region, uint64_t now)
{
    uint64_t d = now - t->last;
    uint64_t word = (kind << PLX_EV_KIND_SHIFT) | ((uint64_t)region << PLX_EV_REGION_SHIFT) | d;
    if (PLX_UNLIKELY(t->pos >= t->end || d > PLX_EV_DELTA_MAX)) {
        plx_trace_slow(t, word, now);
        return;
    }
    *t->pos++ = word;
    t->last = now;
}

/* Finds or creates the callpath node for `region` under `parent`; most recent child first. */
static inline uint32_t plx_child(struct plx_thread *t, uint32_t parent, uint32_t region)
{
    struct plx_node *nodes = t->nodes;
    uint32_t c = nodes[parent].first_child;
    if (PLX_LIKELY(c != PLX_NO_INDEX && nodes[c].region == region))
        return c;
    uint32_t prev = c;
    while (c != PLX_NO_INDEX) {
        c = nodes[prev].next_sibling;
        if (c != PLX_NO_INDEX && nodes[c].region == region) {
            nodes[prev].next_sibling = nodes[c].next_sibling;
            nodes[c].next_sibling = nodes[parent].first_child;
            nodes[parent].first_child = c;
            return c;
        }
        prev = c;
    }
    return plx_node_new(t, parent, region);
}

/* Trace mode with a throttle: whether `region` is throttled on this thread (its calls word
 * has the top bit set); the frame remembers it (node PLX_NO_INDEX) for the exit. */
static inline int plx_trace_throttled(struct plx_thread *t, struct plx_frame *f, uint32_t region)
{
    f->node = region;
    if (region < PLX_RSTAT_REGIONS && (int64_t)t->rstats[2 * region] < 0) {
        f->node = PLX_NO_INDEX;
        return 1;
    }
    return 0;
}

/* A hook's CFA: its caller's stack pointer before the call (one `lea` under GCC). */
#define PLX_CALLER_SP() ((uintptr_t)__builtin_dwarf_cfa())

/* Enters `region`; `sp` and `site` are a compiler hook's (struct plx_frame), or PLX_SP_NONE. */
static inline __attribute__((always_inline)) void plx_enter_sp(struct plx_thread *t, uintptr_t key, uint32_t region, uintptr_t sp,
                                uintptr_t site)
{
    if (PLX_UNLIKELY(t->depth >= t->max_depth)) {
        t->overflow++;
        /* a call not measured; with a trace, its two events (entry and exit) not recorded */
        t->lost_events += plx_cfg.trace ? 2 : 1;
        return;
    }
    struct plx_frame *f = &t->stack[t->depth++];
    f->key = key;
    f->sp = sp;
    f->site = site;
    f->region = region;
    f->child = 0;
    f->cpu = 0;
    if (t->buf) {
        uint64_t now = plx_ticks();
        f->start = now;
        if (PLX_UNLIKELY(t->rstats != NULL) && plx_trace_throttled(t, f, region))
            return;
        plx_trace_put(t, PLX_EV_ENTER, region, now);
        return;
    }
    uint32_t n = plx_child(t, t->cur, region);
    /* a throttled callpath is not measured (its time stays in the parent), as a full table */
    if (PLX_UNLIKELY(n != PLX_NO_INDEX && t->nodes[n].calls == plx_throttle_calls) && t->throttled)
        n = plx_node_unless_throttled(t, n);
    f->node = n;
    if (PLX_LIKELY(n != PLX_NO_INDEX)) {
        t->nodes[n].calls++;
        t->nodes[t->cur].child_calls++;
        t->cur = n;
    }
    f->start = plx_ticks();
}

static inline void plx_enter(struct plx_thread *t, uintptr_t key, uint32_t region)
{
    plx_enter_sp(t, key, region, PLX_SP_NONE, 0);
}

/* Leaves the innermost region; the caller has checked that it matches. */
static inline void plx_leave(struct plx_thread *t, struct plx_frame *f, uint64_t now)
{
    uint64_t incl = now - f->start;
    if (PLX_UNLIKELY((int64_t)incl < 0))
        incl = 0; /* moved to a core whose counter lags */
    t->depth--;
    if (t->depth)
        f[-1].child += incl;
    if (t->buf) {
        if (PLX_UNLIKELY(t->rstats != NULL)) {
            plx_trace_throttle_leave(t, f, incl, now);
            return;
        }
        plx_trace_put(t, PLX_EV_EXIT, f->region, now);
        return;
    }
    uint32_t n = f->node;
    if (PLX_UNLIKELY(n == PLX_NO_INDEX)) { /* no room for its callpath: time stays in the parent */
        if (t->depth)
            f[-1].child -= incl;
        return;
    }
    struct plx_node *node = &t->nodes[n];
    node->incl += incl;
    node->excl += incl > f->child ? incl - f->child : 0;
    t->cur = node->parent;
    if (PLX_UNLIKELY(node->calls == plx_throttle_calls))
        plx_throttle_check(t, n);
}

/* Records a completed interval of the runtime's own work (region `region`, kind runtime) apart
 * from the program's call paths (docs/architecture.md, runtime rule 7). In a profile the interval is a
 * child of the thread's root, and every open frame starts that much later, so no function of
 * the program counts it, inclusive or exclusive. In a trace the interval is a pair of events
 * at its true times, inside whatever region is open; the reader sets it apart. */
static inline void plx_runtime_interval(struct plx_thread *t, uint32_t region, uint64_t t0, uint64_t t1)
{
    if (t->buf) {
        plx_trace_put(t, PLX_EV_ENTER, region, t0);
        plx_trace_put(t, PLX_EV_EXIT, region, t1);
        if (t->depth)
            t->stack[t->depth - 1].child += t1 - t0;
        return;
    }
    uint64_t d = t1 - t0;
    for (uint32_t i = 0; i < t->depth; i++)
        t->stack[i].start += d;
    uint32_t n = plx_child(t, 0, region);
    if (n == PLX_NO_INDEX)
        return;
    t->nodes[n].calls++; /* no child call of the root: the program made no call */
    t->nodes[n].incl += d;
    t->nodes[n].excl += d;
}

/* The thread's state, attaching it on its first event; NULL when nothing is to be recorded. */
static inline struct plx_thread *plx_thread(void)
{
    struct plx_thread *t = plx_self;
    if (PLX_LIKELY(t != NULL))
        return t->guard ? NULL : t;
    return plx_active ? plx_thread_attach() : NULL;
}

/* The same for an interposed library call (synchronization, sockets): a thread not yet
 * measured is attached only when the program started it itself (plx_program_thread). */
static inline struct plx_thread *plx_wrapper_thread(void)
{
    struct plx_thread *t = plx_self;
    if (PLX_LIKELY(t != NULL))
        return t->guard ? NULL : t;
    return plx_active && plx_program_thread() ? plx_thread_attach() : NULL;
}

#endif /* PLX_HOTPATH_H */
