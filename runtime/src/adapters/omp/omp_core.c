/* OpenMP constructs as regions (a process-wide table by code address and construct) and each
 * thread's teams (record OmpTeams), shared by gomp.c and ompt.c. */
#include "omp.h"
#include "../../core/ext.h"

#include <sched.h>
#include <stdio.h>
#include <sys/mman.h>

int plx_omp_tool_active;

static const char *const names[PLX_OMP_CONSTRUCTS] = {
    "parallel", "loop", "sections", "single", "task", "task_create", "taskloop", "workshare",
    "distribute",
};

#define CONSTRUCT_SLOTS (1u << 14)

struct construct_slot {
    _Atomic uintptr_t key; /* site * 16 + construct + 1; 0 empty */
    _Atomic uint32_t id1;  /* region id + 1 once defined */
};
static struct construct_slot constructs[CONSTRUCT_SLOTS];

/* Lock-free: a slot is claimed by CAS on its key and its id published after the RegionDef is
 * written; a thread that finds the key claimed but not published waits for it (first sight). */
uint32_t plx_omp_region_at(uintptr_t site, int c, uintptr_t line)
{
    uintptr_t key = site * 16 + (uintptr_t)c + 1;
    for (uint32_t i = plx_hash_ptr(key) & (CONSTRUCT_SLOTS - 1), n = 0; n < CONSTRUCT_SLOTS;) {
        uintptr_t k = atomic_load_explicit(&constructs[i].key, memory_order_acquire);
        if (PLX_LIKELY(k == key)) {
            uint32_t id1;
            while ((id1 = atomic_load_explicit(&constructs[i].id1, memory_order_acquire)) == 0)
                sched_yield();
            return id1 - 1;
        }
        if (k == 0) {
            if (!atomic_compare_exchange_strong(&constructs[i].key, &k, key))
                continue;
            uint32_t id = plx_region_define_code(names[c], PLX_KIND_OMP, line);
            atomic_store_explicit(&constructs[i].id1, id + 1, memory_order_release);
            return id;
        }
        i = (i + 1) & (CONSTRUCT_SLOTS - 1);
        n++;
    }
    return plx_region_define_code(names[c], PLX_KIND_OMP, line); /* table full */
}

uint32_t plx_omp_region(uintptr_t site, int c)
{
    return plx_omp_region_at(site, c, site ? site - 1 : 0); /* the call instruction's line */
}

void plx_omp_leave(struct plx_thread *t, uint32_t region)
{
    uint64_t now = plx_ticks();
    if (t->depth == 0)
        return;
    struct plx_frame *f = &t->stack[t->depth - 1];
    if (f->key == PLX_OMP_KEY(region))
        plx_leave(t, f, now);
    else
        t->lost_events++; /* not the innermost region: left open by a jump out of it */
}

/* ---- teams per thread ------------------------------------------------------------------ */

#define TEAM_SLOTS 64

struct team_count {
    uint32_t region, level, size, num;
    uint64_t count;
};

struct omp_thread { /* t->ext[1]: only its thread writes it; read at its end */
    uint32_t n, last;
    uint64_t lost;
    struct team_count teams[TEAM_SLOTS];
    struct plx_omp_fork forks[PLX_OMP_FORK_LEVELS]; /* OMPT: teams it started, by level */
};

static struct omp_thread *omp_thread(struct plx_thread *t)
{
    if (PLX_LIKELY(t->ext[1] != NULL))
        return t->ext[1];
    void *p = mmap(NULL, sizeof(struct omp_thread), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    t->ext[1] = p;
    return p;
}

/* ---- the starter's call path on the workers ------------------------------------------------- */

/* A frame of a starter's path on a worker, keyed apart from the region's own frames. */
#define CONTEXT_KEY(region) ((uintptr_t)(region) | ((uintptr_t)3 << 61))

void plx_omp_context_take(struct plx_thread *t, struct plx_omp_context *c)
{
    c->thread = t->index;
    c->n = t->depth <= PLX_OMP_CONTEXT_MAX ? t->depth : 0;
    for (uint32_t i = 0; i < c->n; i++)
        c->region[i] = t->stack[i].region;
}

/* Enters ctx's path; returns the frames entered (fewer when the stack is full). */
static uint32_t context_enter(struct plx_thread *t, const struct plx_omp_context *c)
{
    if (t->buf) {
        uint64_t w[PLX_EXT_OMP_CONTEXT_WORDS];
        plx_ext_pack_omp_context(w, c->n, c->thread);
        plx_trace_ext(t, PLX_EXT_OMP_CONTEXT, w, PLX_EXT_OMP_CONTEXT_WORDS);
    }
    uint32_t d0 = t->depth;
    for (uint32_t i = 0; i < c->n; i++) {
        plx_enter(t, CONTEXT_KEY(c->region[i]), c->region[i]);
        if (t->depth == d0 + i)
            break; /* no room */
        uint32_t n = t->stack[t->depth - 1].node;
        if (!t->buf && n != PLX_NO_INDEX) { /* a path, not a call: plx_enter counted one */
            t->nodes[n].calls--;
            t->nodes[t->nodes[n].parent].child_calls--;
        }
    }
    return t->depth - d0;
}

void plx_omp_task_end(struct plx_thread *t, uint32_t region, uint32_t frames)
{
    if (frames == 0)
        return;
    plx_omp_leave(t, region);
    uint64_t now = plx_ticks();
    for (uint32_t i = 1; i < frames && t->depth; i++) {
        struct plx_frame *f = &t->stack[t->depth - 1];
        if (f->key != CONTEXT_KEY(f->region))
            return; /* left open inside the region (counted by plx_omp_leave) */
        plx_leave(t, f, now);
    }
}

struct plx_omp_fork *plx_omp_fork_slot(struct plx_thread *t, uint32_t level)
{
    struct omp_thread *o = level >= 1 && level <= PLX_OMP_FORK_LEVELS ? omp_thread(t) : NULL;
    return o ? &o->forks[level - 1] : NULL;
}

uint32_t plx_omp_task_begin(struct plx_thread *t, uint32_t region, uint32_t num, uint32_t size,
                            uint32_t level, const struct plx_omp_context *ctx)
{
    struct omp_thread *o = omp_thread(t);
    if (o) {
        struct team_count *c = &o->teams[o->last];
        if (!(o->n && c->region == region && c->num == num && c->size == size &&
              c->level == level)) {
            uint32_t i = 0;
            while (i < o->n && !(o->teams[i].region == region && o->teams[i].num == num &&
                                 o->teams[i].size == size && o->teams[i].level == level))
                i++;
            if (i == o->n && o->n < TEAM_SLOTS) {
                if (o->n == 0 && t->index != 0 && num != 0) {
                    char name[32]; /* a worker of a team: named after its first thread number */
                    snprintf(name, sizeof name, "omp thread %u", num);
                    plx_thread_set_name(t, name);
                }
                o->teams[o->n++] = (struct team_count){region, level, size, num, 0};
            }
            if (i < o->n)
                o->last = i;
            c = i < o->n ? &o->teams[i] : NULL;
        }
        if (c)
            c->count++;
        else
            o->lost++;
    }
    if (t->buf) {
        uint64_t w[PLX_EXT_OMP_TASK_WORDS];
        plx_ext_pack_omp_task(w, num, size, level, region);
        plx_trace_ext(t, PLX_EXT_OMP_TASK, w, PLX_EXT_OMP_TASK_WORDS);
    }
    uint32_t frames = ctx && num != 0 && ctx->n ? context_enter(t, ctx) : 0;
    plx_omp_enter(t, region);
    return frames + 1;
}

static void write_teams(struct plx_thread *t)
{
    struct omp_thread *o = t->ext[1];
    if (!o)
        return;
    for (uint32_t i = 0; i < o->n; i++) {
        struct team_count *c = &o->teams[i];
        struct plx_rec rec;
        plx_rec_init(&rec);
        plx_enc_omp_teams(&rec, t->index, c->region, c->level, c->size, c->num, c->count);
        plx_rec_write(&rec, 0);
    }
    if (o->lost) { /* implicit tasks of teams past the first TEAM_SLOTS */
        struct plx_rec rec;
        plx_rec_init(&rec);
        plx_enc_omp_teams(&rec, t->index, PLX_NO_INDEX, 0, 0, 0, o->lost);
        plx_rec_write(&rec, 0);
    }
    o->n = 0; /* written once, whoever writes the thread */
    o->lost = 0;
}

__attribute__((constructor(102))) static void omp_init(void)
{
    plx_ext_on_thread_end(write_teams);
}
