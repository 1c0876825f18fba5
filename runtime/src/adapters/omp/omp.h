/* OpenMP measurement shared by the two ways in: libgomp's entry points (gomp.c) and LLVM's
 * OpenMP tools interface (ompt.c). Constructs are regions of kind 7 named by their code address;
 * barriers, critical sections, locks and task waits are synchronization objects (kinds 7-12).
 *
 * Invariants: everything here runs on the thread it describes, with that thread's guard held
 * by the caller (plx_omp_begin / plx_omp_end); nothing allocates except on a thread's or a
 * construct's first sight. */
#ifndef PLX_OMP_H
#define PLX_OMP_H

#include "../../core/hotpath.h"

/* Constructs, in the order of their names (omp_core.c). */
enum plx_omp_construct {
    PLX_OMP_PARALLEL, PLX_OMP_LOOP, PLX_OMP_SECTIONS, PLX_OMP_SINGLE, PLX_OMP_TASK,
    PLX_OMP_TASK_CREATE, PLX_OMP_TASKLOOP, PLX_OMP_WORKSHARE, PLX_OMP_DISTRIBUTE,
    PLX_OMP_CONSTRUCTS
};

/* Set once LLVM's runtime has started the tool: the libgomp wrappers then only pass calls on
 * (libomp implements the GOMP_ entry points too, and reports them itself). */
PLX_HIDDEN extern int plx_omp_tool_active;

/* The calling thread, its guard taken; NULL when nothing is to be recorded. */
static inline struct plx_thread *plx_omp_begin(void)
{
    struct plx_thread *t = plx_thread();
    if (t)
        t->guard++;
    return t;
}

static inline void plx_omp_end(struct plx_thread *t)
{
    t->guard--;
}

/* The region of construct `c` at return address `site` (defined on first sight), its source
 * line that of the call; with _at, that of code address `line` (an outlined body's entry: GCC
 * gives the call into libgomp the line of the statement before the construct). */
PLX_HIDDEN uint32_t plx_omp_region(uintptr_t site, int c);
PLX_HIDDEN uint32_t plx_omp_region_at(uintptr_t site, int c, uintptr_t line);

/* A construct region on the calling thread, keyed apart from functions and user regions. */
#define PLX_OMP_KEY(region) ((uintptr_t)(region) | ((uintptr_t)1 << 62))
static inline void plx_omp_enter(struct plx_thread *t, uint32_t region)
{
    plx_enter(t, PLX_OMP_KEY(region), region);
}
PLX_HIDDEN void plx_omp_leave(struct plx_thread *t, uint32_t region);

/* The call path of the thread that starts a team, at the fork: the regions of its open frames,
 * outermost first, and its thread index. A deeper path (n > PLX_OMP_CONTEXT_MAX) is not kept:
 * n is then 0 and the workers' paths start at the region. */
#define PLX_OMP_CONTEXT_MAX 64
struct plx_omp_context {
    uint32_t n, thread;
    uint32_t region[PLX_OMP_CONTEXT_MAX];
};
PLX_HIDDEN void plx_omp_context_take(struct plx_thread *t, struct plx_omp_context *c);

/* A team started by the calling thread at nesting `level` (OMPT's parallel data points to it):
 * one slot per level in the thread's own memory, rewritten only by its next team at that level
 * (after the workers have read it: at their implicit task's begin, before the team's end).
 * NULL past PLX_OMP_FORK_LEVELS or when the thread's memory cannot be had. */
#define PLX_OMP_FORK_LEVELS 8
struct plx_omp_fork {
    uintptr_t site;
    uint32_t level;
    struct plx_omp_context ctx;
};
PLX_HIDDEN struct plx_omp_fork *plx_omp_fork_slot(struct plx_thread *t, uint32_t level);

/* An implicit task of a team: thread `num` of `size` at nesting `level` (1 = outermost) enters
 * the parallel region `region`; counted per thread (record OmpTeams) and, when tracing, an
 * event. A worker (`ctx` not NULL, num != 0) first enters ctx's path as frames that count no
 * call (trace: an omp_context event announces them), so its paths read as the starter's:
 * `main => parallel@x.c:12 => work`. Returns the frames to leave at the task's end (the region's
 * and its context's: plx_omp_task_end). */
PLX_HIDDEN uint32_t plx_omp_task_begin(struct plx_thread *t, uint32_t region, uint32_t num,
                                       uint32_t size, uint32_t level,
                                       const struct plx_omp_context *ctx);
PLX_HIDDEN void plx_omp_task_end(struct plx_thread *t, uint32_t region, uint32_t frames);

/* Synchronization: the thread's entry for object `key` of `kind`, named after `site`. */
static inline struct plx_sync_entry *plx_omp_sync(struct plx_thread *t, const void *key, int kind,
                                                  uintptr_t site)
{
    return plx_sync_entry(t, key, kind, site);
}
/* A barrier (or wait) in two halves: the arrival releases the object, the departure acquires
 * it, having waited since `t0`. A lock: acquired after waiting since `t0`, then released. */
static inline void plx_omp_arrive(struct plx_thread *t, struct plx_sync_entry *e, int kind)
{
    if (e)
        plx_sync_released(t, e, kind, plx_ticks(), 0);
}
static inline void plx_omp_depart(struct plx_thread *t, struct plx_sync_entry *e, int kind,
                                  uint64_t t0)
{
    uint64_t now = plx_ticks();
    if (e)
        plx_sync_acquired(t, e, kind, now, now - t0, 1, 0);
}
static inline void plx_omp_acquired(struct plx_thread *t, struct plx_sync_entry *e, int kind,
                                    uint64_t t0, int contended)
{
    uint64_t now = plx_ticks();
    if (e)
        plx_sync_acquired(t, e, kind, now, now - t0, contended, 1);
}
static inline void plx_omp_released(struct plx_thread *t, struct plx_sync_entry *e, int kind)
{
    if (e)
        plx_sync_released(t, e, kind, plx_ticks(), 1);
}

#endif /* PLX_OMP_H */
