/* LLVM's libomp measured through the OpenMP tools interface (OMPT, OpenMP 5.0): libomp finds
 * ompt_start_tool in libplx.so at its start-up and reports parallel regions, implicit and
 * explicit tasks, work-sharing, barriers, task waits and mutexes through the callbacks below.
 *
 * The few OMPT types used are declared here from the specification (omp-tools.h is not
 * installed with GCC). Parallel data points to the team's plx_omp_fork slot (code address,
 * nesting level, the encountering thread's call path) or, past the slots, holds INLINE_BIT, the
 * code address and, above bit 48, the level; an explicit task's data holds its construct's code
 * address with TASK_BIT, and RUNNING_BIT while its region is open. */
#include "omp.h"

#define PLX_EXPORT __attribute__((visibility("default")))

typedef union {
    uint64_t value;
    void *ptr;
} ompt_data_t;
typedef void (*ompt_callback_t)(void);
typedef int (*ompt_set_callback_t)(int event, ompt_callback_t callback);
typedef void (*(*ompt_lookup_t)(const char *))(void);
typedef struct {
    int (*initialize)(ompt_lookup_t lookup, int device, ompt_data_t *tool_data);
    void (*finalize)(ompt_data_t *tool_data);
    ompt_data_t tool_data;
} ompt_start_tool_result_t;

enum { /* ompt_callbacks_t */
    CB_PARALLEL_BEGIN = 3, CB_PARALLEL_END = 4, CB_TASK_CREATE = 5, CB_TASK_SCHEDULE = 6,
    CB_IMPLICIT_TASK = 7, CB_MUTEX_RELEASED = 17, CB_WORK = 20, CB_SYNC_REGION = 23,
    CB_LOCK_INIT = 24, CB_MUTEX_ACQUIRE = 26, CB_MUTEX_ACQUIRED = 27
};
enum { SCOPE_BEGIN = 1, SCOPE_END = 2 };
enum { /* ompt_sync_region_t */
    SYNC_BARRIER = 1, SYNC_BARRIER_IMPLICIT = 2, SYNC_BARRIER_EXPLICIT = 3,
    SYNC_BARRIER_IMPLEMENTATION = 4, SYNC_TASKWAIT = 5, SYNC_TASKGROUP = 6, SYNC_REDUCTION = 7,
    SYNC_BARRIER_IMPLICIT_WORKSHARE = 8, SYNC_BARRIER_IMPLICIT_PARALLEL = 9, SYNC_BARRIER_TEAMS = 10
};
enum { /* ompt_work_t */
    WORK_LOOP = 1, WORK_SECTIONS = 2, WORK_SINGLE_EXECUTOR = 3, WORK_SINGLE_OTHER = 4,
    WORK_WORKSHARE = 5, WORK_DISTRIBUTE = 6, WORK_TASKLOOP = 7
};
enum { /* ompt_mutex_t */
    MUTEX_LOCK = 1, MUTEX_TEST_LOCK = 2, MUTEX_NEST_LOCK = 3, MUTEX_TEST_NEST_LOCK = 4,
    MUTEX_CRITICAL = 5, MUTEX_ATOMIC = 6, MUTEX_ORDERED = 7
};
#define TASK_INITIAL 0x1
#define TASK_EXPLICIT 0x4
#define TASK_COMPLETE 1
#define TASK_CANCEL 3

#define TASK_BIT ((uint64_t)1 << 63)
#define RUNNING_BIT ((uint64_t)1 << 62)
#define SITE_MASK (RUNNING_BIT - 1)
#define INLINE_BIT ((uint64_t)1 << 63)
#define INLINE_SITE(v) ((uintptr_t)((v) & (((uint64_t)1 << 48) - 1)))
#define INLINE_LEVEL(v) ((uint32_t)(((v) & ~INLINE_BIT) >> 48))

static uintptr_t parallel_site(const ompt_data_t *p)
{
    if (!p || !p->value)
        return 0;
    return p->value & INLINE_BIT ? INLINE_SITE(p->value) : ((struct plx_omp_fork *)p->ptr)->site;
}

static uint32_t parallel_level(const ompt_data_t *p)
{
    if (!p || !p->value)
        return 0;
    return p->value & INLINE_BIT ? INLINE_LEVEL(p->value) : ((struct plx_omp_fork *)p->ptr)->level;
}

static const struct plx_omp_context *parallel_context(const ompt_data_t *p)
{
    return p && p->value && !(p->value & INLINE_BIT) ? &((struct plx_omp_fork *)p->ptr)->ctx
                                                     : NULL;
}

/* Per thread: nesting level of implicit tasks, open waits (a thread waiting at a barrier may
 * run a task that waits in turn) and the mutex being acquired. */
#define MAX_WAITS 16
struct ompt_thread_state {
    uint32_t level, nwaits;
    uint64_t wait_t0[MAX_WAITS];
    struct plx_sync_entry *wait_e[MAX_WAITS];
    uint64_t mutex_t0;
    uint32_t nworks;           /* work-sharing constructs open (their end has another address) */
    uint32_t work[MAX_WAITS];
};
static PLX_TLS struct ompt_thread_state st;

static void on_parallel_begin(ompt_data_t *task, const void *frame, ompt_data_t *parallel,
                              unsigned requested, int flags, const void *codeptr)
{
    /* the encountering thread is at its implicit tasks' level: the new team one deeper */
    uint32_t level = st.level + 1;
    struct plx_thread *t = plx_omp_begin();
    struct plx_omp_fork *f = t ? plx_omp_fork_slot(t, level) : NULL;
    if (f) {
        f->site = (uintptr_t)codeptr;
        f->level = level;
        plx_omp_context_take(t, &f->ctx);
        parallel->ptr = f;
    } else {
        parallel->value = INLINE_BIT | INLINE_SITE((uint64_t)(uintptr_t)codeptr) |
                          ((uint64_t)level << 48);
    }
    if (t)
        plx_omp_end(t);
}

static void on_implicit_task(int endpoint, ompt_data_t *parallel, ompt_data_t *task,
                             unsigned size, unsigned index, int flags)
{
    if (flags & TASK_INITIAL)
        return;
    struct plx_thread *t = plx_omp_begin();
    if (!t)
        return;
    if (endpoint == SCOPE_BEGIN) {
        uint32_t r = plx_omp_region(parallel_site(parallel), PLX_OMP_PARALLEL);
        uint32_t level = parallel_level(parallel);
        st.level = level ? level : 1;
        uint32_t frames = plx_omp_task_begin(t, r, index, size, st.level,
                                             parallel_context(parallel));
        /* region (32 bits), level (24) and the frames to leave (8) */
        task->value = (uint64_t)r | ((uint64_t)(st.level & 0xffffff) << 32) |
                      ((uint64_t)(frames & 0xff) << 56);
    } else {
        plx_omp_task_end(t, (uint32_t)task->value, (uint32_t)(task->value >> 56));
        /* back in the encountering task's level */
        st.level = (uint32_t)((task->value >> 32) & 0xffffff) - 1;
    }
    plx_omp_end(t);
}

static void on_work(int wstype, int endpoint, ompt_data_t *parallel, ompt_data_t *task,
                    uint64_t count, const void *codeptr)
{
    static const int construct[] = {
        [WORK_LOOP] = PLX_OMP_LOOP, [WORK_SECTIONS] = PLX_OMP_SECTIONS,
        [WORK_SINGLE_EXECUTOR] = PLX_OMP_SINGLE, [WORK_SINGLE_OTHER] = -1,
        [WORK_WORKSHARE] = PLX_OMP_WORKSHARE, [WORK_DISTRIBUTE] = PLX_OMP_DISTRIBUTE,
        [WORK_TASKLOOP] = PLX_OMP_TASKLOOP,
    };
    if (wstype < WORK_LOOP || wstype > WORK_TASKLOOP || construct[wstype] < 0)
        return;
    struct plx_thread *t = plx_omp_begin();
    if (!t)
        return;
    if (endpoint == SCOPE_BEGIN) {
        uintptr_t site = codeptr ? (uintptr_t)codeptr : parallel_site(parallel);
        uint32_t r = plx_omp_region(site, construct[wstype]);
        if (st.nworks < MAX_WAITS)
            st.work[st.nworks] = r;
        st.nworks++;
        plx_omp_enter(t, r);
    } else if (st.nworks) {
        uint32_t i = --st.nworks;
        if (i < MAX_WAITS)
            plx_omp_leave(t, st.work[i]);
    }
    plx_omp_end(t);
}

static void on_sync_region(int kind, int endpoint, ompt_data_t *parallel, ompt_data_t *task,
                           const void *codeptr)
{
    int sk, arrives = 1;
    switch (kind) {
    case SYNC_TASKWAIT:
    case SYNC_TASKGROUP:
        sk = PLX_SYNC_OMP_TASKWAIT;
        arrives = 0;
        break;
    case SYNC_REDUCTION:
        return;
    default:
        sk = PLX_SYNC_OMP_BARRIER;
    }
    struct plx_thread *t = plx_omp_begin();
    if (!t)
        return;
    if (endpoint == SCOPE_BEGIN) {
        /* an implicit barrier without a code address is its parallel region's */
        uintptr_t site = codeptr ? (uintptr_t)codeptr : parallel_site(parallel);
        struct plx_sync_entry *e = site ? plx_omp_sync(t, (const void *)site, sk, site) : NULL;
        if (st.nwaits < MAX_WAITS) {
            st.wait_e[st.nwaits] = e;
            st.wait_t0[st.nwaits] = plx_ticks();
        }
        st.nwaits++;
        if (arrives)
            plx_omp_arrive(t, e, sk);
    } else if (st.nwaits) {
        uint32_t i = --st.nwaits;
        if (i < MAX_WAITS)
            plx_omp_depart(t, st.wait_e[i], sk, st.wait_t0[i]);
    }
    plx_omp_end(t);
}

static int sync_kind(int mutex)
{
    switch (mutex) {
    case MUTEX_CRITICAL:
        return PLX_SYNC_OMP_CRITICAL;
    case MUTEX_ATOMIC:
        return PLX_SYNC_OMP_ATOMIC;
    case MUTEX_ORDERED:
        return PLX_SYNC_OMP_ORDERED;
    default:
        return PLX_SYNC_OMP_LOCK;
    }
}

static void on_mutex_acquire(int kind, unsigned hint, unsigned impl, uint64_t wait_id,
                             const void *codeptr)
{
    st.mutex_t0 = plx_ticks();
}

static void on_mutex_acquired(int kind, uint64_t wait_id, const void *codeptr)
{
    uint64_t t0 = st.mutex_t0;
    struct plx_thread *t = plx_omp_begin();
    if (!t)
        return;
    int sk = sync_kind(kind);
    plx_omp_acquired(t, plx_omp_sync(t, (const void *)(uintptr_t)wait_id, sk, (uintptr_t)codeptr),
                     sk, t0, 0);
    plx_omp_end(t);
}

static void on_mutex_released(int kind, uint64_t wait_id, const void *codeptr)
{
    struct plx_thread *t = plx_omp_begin();
    if (!t)
        return;
    int sk = sync_kind(kind);
    plx_omp_released(t, plx_omp_sync(t, (const void *)(uintptr_t)wait_id, sk, (uintptr_t)codeptr),
                     sk);
    plx_omp_end(t);
}

static void on_lock_init(int kind, unsigned hint, unsigned impl, uint64_t wait_id,
                         const void *codeptr)
{
    struct plx_thread *t = plx_omp_begin();
    if (!t)
        return;
    plx_sync_define((const void *)(uintptr_t)wait_id, sync_kind(kind), (uintptr_t)codeptr, 1);
    plx_omp_end(t);
}

static void on_task_create(ompt_data_t *parent, const void *frame, ompt_data_t *task, int flags,
                           int deps, const void *codeptr)
{
    if (!(flags & TASK_EXPLICIT))
        return;
    task->value = ((uint64_t)(uintptr_t)codeptr & SITE_MASK) | TASK_BIT;
    struct plx_thread *t = plx_omp_begin();
    if (!t)
        return;
    /* a creation is a region of no length: counted, not timed */
    uint32_t r = plx_omp_region((uintptr_t)codeptr, PLX_OMP_TASK_CREATE);
    plx_omp_enter(t, r);
    plx_omp_leave(t, r);
    plx_omp_end(t);
}

/* An explicit task's region is open while it runs on this thread; a task suspended (at a
 * taskwait, a yield) keeps it open below the tasks run meanwhile, so frames stay nested. */
static void on_task_schedule(ompt_data_t *prior, int status, ompt_data_t *next)
{
    struct plx_thread *t = plx_omp_begin();
    if (!t)
        return;
    if (prior && (prior->value & TASK_BIT) && (prior->value & RUNNING_BIT) &&
        (status == TASK_COMPLETE || status == TASK_CANCEL)) {
        plx_omp_leave(t, plx_omp_region((uintptr_t)(prior->value & SITE_MASK), PLX_OMP_TASK));
        prior->value &= ~RUNNING_BIT;
    }
    if (next && (next->value & TASK_BIT) && !(next->value & RUNNING_BIT)) {
        plx_omp_enter(t, plx_omp_region((uintptr_t)(next->value & SITE_MASK), PLX_OMP_TASK));
        next->value |= RUNNING_BIT;
    }
    plx_omp_end(t);
}

static int initialize(ompt_lookup_t lookup, int device, ompt_data_t *tool_data)
{
    ompt_set_callback_t set = (ompt_set_callback_t)lookup("ompt_set_callback");
    if (!set)
        return 0;
    plx_omp_tool_active = 1;
#define SET(event, fn) set(event, (ompt_callback_t)(void (*)(void))fn)
    SET(CB_PARALLEL_BEGIN, on_parallel_begin);
    SET(CB_IMPLICIT_TASK, on_implicit_task);
    SET(CB_WORK, on_work);
    SET(CB_SYNC_REGION, on_sync_region);
    SET(CB_MUTEX_ACQUIRE, on_mutex_acquire);
    SET(CB_MUTEX_ACQUIRED, on_mutex_acquired);
    SET(CB_MUTEX_RELEASED, on_mutex_released);
    SET(CB_LOCK_INIT, on_lock_init);
    SET(CB_TASK_CREATE, on_task_create);
    SET(CB_TASK_SCHEDULE, on_task_schedule);
#undef SET
    return 1; /* nonzero: keep the tool */
}

static void finalize(ompt_data_t *tool_data)
{
    plx_omp_tool_active = 0;
}

PLX_EXPORT ompt_start_tool_result_t *ompt_start_tool(unsigned omp_version,
                                                     const char *runtime_version)
{
    static ompt_start_tool_result_t result = {initialize, finalize, {0}};
    /* the caller is the OpenMP runtime, at its start-up: its barriers, locks and joins of its
     * workers are built on pthread calls, which OMPT reports as what they implement */
    plx_sync_internal_library(__builtin_return_address(0));
    return &result;
}
