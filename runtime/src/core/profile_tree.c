/* A thread's callpath tree (profile mode): its nodes, throttling, CPU time of `cputime`
 * functions, user-event statistics, and writing them as the thread's profile records. */
#include "hotpath.h"
#include "counters.h"

#include <string.h>
#include <sys/mman.h>

/* The tree has used the nodes its live file backs: the file backs twice as many, or, when the
 * disk has no room, the tree goes on in the mapping as memory (the file given up). 0 when a node
 * may be added. */
static int more_room(struct plx_thread *t)
{
    if (t->nnodes >= t->max_nodes)
        return -1;
    uint32_t want = t->node_room < t->max_nodes / 2 ? t->node_room * 2 : t->max_nodes;
    if (!t->live_nodes || plx_live_grow("nodes", t->live_nodes, want, &t->node_room) != 0) {
        plx_live_disown("nodes", t->live_nodes);
        t->node_room = t->max_nodes;
    }
    return 0;
}

uint32_t plx_node_new(struct plx_thread *t, uint32_t parent, uint32_t region)
{
    if (t->nnodes >= t->node_room && more_room(t) != 0) {
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

static int fast(uint32_t region, uint64_t calls, uint64_t incl)
{
    return region != PLX_REGION_FLUSH && incl < plx_throttle_ticks * calls;
}

void plx_throttle_check(struct plx_thread *t, uint32_t n)
{
    struct plx_node *node = &t->nodes[n];
    if (t->buf || !fast(node->region, node->calls, node->incl))
        return;
    t->guard++;
    if (!t->throttled) {
        void *p = mmap(NULL, ((size_t)t->max_nodes + 63) / 64 * 8, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        t->throttled = p == MAP_FAILED ? NULL : p;
    }
    if (t->throttled) {
        t->throttled[n / 64] |= 1ull << (n % 64);
        plx_region_throttle(node->region, node->calls, node->incl);
    }
    t->guard--;
}

uint32_t plx_node_unless_throttled(struct plx_thread *t, uint32_t n)
{
    return t->throttled[n / 64] >> (n % 64) & 1 ? PLX_NO_INDEX : n;
}

void plx_trace_throttle_leave(struct plx_thread *t, struct plx_frame *f, uint64_t incl, uint64_t now)
{
    if (f->node == PLX_NO_INDEX) { /* throttled at its entry: its time stays in the parent */
        if (t->depth)
            f[-1].child -= incl;
        return;
    }
    plx_trace_put(t, PLX_EV_EXIT, f->region, now);
    uint32_t region = f->region;
    if (region >= PLX_RSTAT_REGIONS)
        return;
    uint64_t calls = ++t->rstats[2 * region];
    uint64_t total = t->rstats[2 * region + 1] += incl;
    if (calls != plx_throttle_calls || !fast(region, calls, total))
        return;
    t->rstats[2 * region] |= 1ull << 63;
    t->guard++;
    plx_region_throttle(region, calls, total);
    t->guard--;
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

/* ---- writing the profile ------------------------------------------------------------------ */

/* ThreadProfile, the user events' statistics and NodeCpu of t, closed at `now`. */
void plx_profile_write(struct plx_thread *t, uint64_t now, uint64_t cpu)
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
    write_node_cpu(t);
}
