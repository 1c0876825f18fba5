/* Counters: event names to perf_event attributes, per-thread groups, counted calls, reloads.
 *
 * Sets are defined process-wide (PLX_COUNTERS is set 0; each `counters` context adds one set
 * per event set it lists) and never freed: a reload adds a new epoch of contexts and sets, and
 * regions are re-pointed to the new contexts. Set and context tables are written by one thread
 * at a time (process start, then the reload thread) under `cfg_lock`; counting threads read a
 * set's fields only after its id was published through a region's context (release/acquire).
 * Each thread opens a set's group itself (perf_event_open on the calling thread), at its start
 * for set 0 and at its first counted call of a set for the others. A set whose every group
 * event the kernel lets user space read (rdpmc.h) is read with rdpmc, else with one read(). */
#include "counters.h"
#include "counter_events.h"
#include "rdpmc.h"

#include <ctype.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifdef PLX_HAVE_PAPI
#include <papi.h>
#endif


/* ---- event names (counter_events.c) ------------------------------------------------------ */

/* Fills `attr` for a perf name; 0 on success, -1 for a name that is not one. */
static int perf_attr(const char *name, struct perf_event_attr *attr)
{
    memset(attr, 0, sizeof *attr);
    attr->size = sizeof *attr;
    uint64_t config;
    if (plx_counter_event_lookup(name, &attr->type, &config) != 0)
        return -1;
    attr->config = config;
    return 0;
}

static int papi_name(const char *name)
{
    return plx_counter_papi_name(name);
}

/* ---- sets and contexts ------------------------------------------------------------------- */

struct set {
    uint32_t nevents, context, epoch, position;
    char *names[PLX_CTR_MAX_EVENTS];
    struct perf_event_attr attr[PLX_CTR_MAX_EVENTS];
    int papi[PLX_CTR_MAX_EVENTS]; /* a PAPI name (read through PAPI, not a perf group) */
    int refused[PLX_CTR_MAX_EVENTS]; /* errno of the probe, 0 when counted */
};

struct context {
    char *glob;
    uint32_t epoch, every, nsets, first_set; /* its sets are first_set .. first_set+nsets-1 */
};

static struct set sets[PLX_CTR_MAX_SETS];
static _Atomic uint32_t nsets_used;
static struct context contexts[PLX_CTR_MAX_CONTEXTS];
static uint32_t ncontexts;
/* The current configuration's contexts; a reload stages the next ones past them first. */
static _Atomic uint32_t epoch_first_context, epoch_contexts;
static uint32_t staged_first, staged_n;
static _Atomic uint32_t epoch_now;
static int have_thread_set;  /* PLX_COUNTERS gave set `thread_set` */
static uint32_t thread_set;
static int active;
static uint16_t *region_context; /* region id → context index + 1; reserved, zero-filled */
static atomic_flag cfg_lock = ATOMIC_FLAG_INIT;

static void cfg_take(void)
{
    while (atomic_flag_test_and_set_explicit(&cfg_lock, memory_order_acquire))
        sched_yield();
}

static void cfg_give(void)
{
    atomic_flag_clear_explicit(&cfg_lock, memory_order_release);
}

static long perf_open(struct perf_event_attr *attr, int group)
{
    return syscall(SYS_perf_event_open, attr, 0, -1, group, PERF_FLAG_FD_CLOEXEC);
}

/* Opens one event on the calling thread; on EACCES retries counting user space only. */
static int open_event(struct perf_event_attr *attr, int group)
{
    attr->read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
                        PERF_FORMAT_TOTAL_TIME_RUNNING;
    attr->disabled = 0;
    attr->exclude_hv = 1;
    long fd = perf_open(attr, group);
    if (fd < 0 && errno == EACCES && !attr->exclude_kernel) {
        attr->exclude_kernel = 1;
        fd = perf_open(attr, group);
    }
    return (int)fd;
}

#ifdef PLX_HAVE_PAPI
static int papi_ready; /* 1 initialised, -1 failed */

static int papi_init(void)
{
    if (papi_ready == 0) {
        int v = PAPI_library_init(PAPI_VER_CURRENT);
        papi_ready = (v == PAPI_VER_CURRENT &&
                      PAPI_thread_init((unsigned long (*)(void))pthread_self) == PAPI_OK)
                         ? 1
                         : -1;
    }
    return papi_ready == 1;
}
#endif

/* Whether the event can be counted here: 0, or the errno (PAPI: ENOENT, or EINVAL). */
static int probe(struct set *s, uint32_t i)
{
    if (s->papi[i]) {
#ifdef PLX_HAVE_PAPI
        int code;
        if (!papi_init())
            return ENOSYS;
        return PAPI_event_name_to_code(s->names[i], &code) == PAPI_OK ? 0 : ENODEV;
#else
        return ENOSYS;
#endif
    }
    struct perf_event_attr a = s->attr[i];
    int fd = open_event(&a, -1);
    if (fd < 0)
        return errno ? errno : EINVAL;
    s->attr[i] = a; /* with exclude_kernel when only that was allowed */
    plx_sys_close(fd);
    return 0;
}

static const char *why(int err)
{
    switch (err) {
    case ENOENT: case EOPNOTSUPP:
        return "no such event on this machine (no hardware PMU, or the PMU lacks it)";
    case EACCES: case EPERM:
        return "not permitted (kernel.perf_event_paranoid)";
    case ENOSYS:
        return "PAPI is not available (this build has no PAPI, or PAPI could not start)";
    case ENODEV:
        return "PAPI does not know this event here (papi_native_avail lists those it has)";
    case EINVAL:
        return "the kernel does not accept this event";
    default:
        return "perf_event_open failed";
    }
}

static void write_set(uint32_t id)
{
    const struct set *s = &sets[id];
    const struct context *c = s->context == PLX_NO_INDEX ? NULL : &contexts[s->context];
    struct plx_rec rec;
    plx_rec_init(&rec);
    plx_enc_counter_set(&rec, id, s->epoch, s->context, c ? c->every : 0, s->position,
                        c ? c->nsets : 1, c ? c->glob : "", s->nevents);
    for (uint32_t i = 0; i < s->nevents; i++) {
        plx_enc_counter_set_events(&rec, s->names[i], (uint32_t)s->refused[i]);
    }
    plx_rec_write(&rec, 0);
}

/* Refusals are reported once per event name and run (a name refused in one set is refused in
 * every set). */
static char *reported[PLX_CTR_MAX_SETS * PLX_CTR_MAX_EVENTS];
static uint32_t nreported;

static void report_refusal(const char *name, int err)
{
    for (uint32_t i = 0; i < nreported; i++)
        if (strcmp(reported[i], name) == 0)
            return;
    if (nreported < sizeof reported / sizeof reported[0])
        reported[nreported++] = plx_arena_strdup(name);
    plx_warn("counter '%s' refused: %s (%s, errno %d); the other counters are measured", name,
             why(err), strerror(err), err);
}

/* Defines a set from event names; returns its id, or PLX_NO_INDEX when the table is full. */
static uint32_t define_set(const char *const *names, unsigned n, uint32_t context, uint32_t position)
{
    uint32_t id = atomic_load_explicit(&nsets_used, memory_order_relaxed);
    if (id >= PLX_CTR_MAX_SETS) {
        plx_warn("more than %d counter sets in this run: the rest are not counted", PLX_CTR_MAX_SETS);
        return PLX_NO_INDEX;
    }
    struct set *s = &sets[id];
    memset(s, 0, sizeof *s);
    s->context = context;
    s->epoch = atomic_load_explicit(&epoch_now, memory_order_relaxed);
    s->position = position;
    for (unsigned i = 0; i < n && i < PLX_CTR_MAX_EVENTS; i++) {
        s->names[i] = plx_arena_strdup(names[i]);
        s->papi[i] = perf_attr(names[i], &s->attr[i]) != 0 && papi_name(names[i]);
        s->refused[i] = probe(s, i);
        if (s->refused[i])
            report_refusal(s->names[i], s->refused[i]);
        s->nevents++;
    }
    write_set(id);
    atomic_store_explicit(&nsets_used, id + 1, memory_order_release);
    return id;
}

void plx_counters_begin(void)
{
    cfg_take();
    staged_first = ncontexts;
    staged_n = 0;
}

void plx_counters_add_rule(const struct plx_filter_rule *rule)
{
    if (ncontexts >= PLX_CTR_MAX_CONTEXTS) {
        plx_warn("more than %d counters rules: '%s' is not counted", PLX_CTR_MAX_CONTEXTS, rule->glob);
        return;
    }
    uint32_t ci = ncontexts;
    struct context *c = &contexts[ci];
    c->glob = plx_arena_strdup(rule->glob);
    c->epoch = atomic_load_explicit(&epoch_now, memory_order_relaxed);
    c->every = rule->nsets > 1 ? rule->every : 0;
    c->nsets = rule->nsets; /* as written in each set's record */
    c->first_set = atomic_load_explicit(&nsets_used, memory_order_relaxed);
    for (unsigned i = 0; i < rule->nsets; i++)
        if (define_set(rule->events[i], rule->nevents[i], ci, i) == PLX_NO_INDEX) {
            c->nsets = i;
            break;
        }
    if (c->nsets == 0)
        return;
    ncontexts++;
    staged_n++;
    active = 1;
}

void plx_counters_commit(const char *path, int bad_lines)
{
    uint32_t e = atomic_load_explicit(&epoch_now, memory_order_relaxed);
    if (staged_n == 0 && e == 0) { /* a filter without counters rules */
        cfg_give();
        return;
    }
    struct plx_rec rec;
    plx_rec_init(&rec);
    plx_enc_counter_epoch(&rec, e, plx_ticks(), (uint32_t)bad_lines, staged_n, path ? path : "");
    plx_rec_write(&rec, 0);
    atomic_store(&epoch_contexts, 0);
    atomic_store(&epoch_first_context, staged_first);
    atomic_store(&epoch_contexts, staged_n);
    cfg_give();
}

uint32_t plx_counters_context_of(const char *name)
{
    uint32_t found = 0, first = atomic_load(&epoch_first_context);
    uint32_t n = atomic_load(&epoch_contexts);
    for (uint32_t i = first; i < first + n; i++)
        if (plx_glob_match(contexts[i].glob, name))
            found = i + 1; /* the last matching rule decides, as in the filter */
    return found;
}

void plx_counters_set_region(uint32_t region, uint32_t context)
{
    if (region_context && region < PLX_MAX_REGIONS)
        __atomic_store_n(&region_context[region], (uint16_t)context, __ATOMIC_RELEASE);
}

int plx_counters_active(void)
{
    return active;
}

/* ---- reload --------------------------------------------------------------------------------- */

/* The signal handler wakes the reload thread through a pipe, with raw system calls: the
 * runtime's own thread must not go through the program's measured wrappers (sem_wait, read). */
static int reload_pipe[2] = {-1, -1};
static int reload_signal = SIGUSR1;

static void on_reload_signal(int sig)
{
    (void)sig;
    int saved = errno;
    char c = 'r';
    (void)syscall(SYS_write, reload_pipe[1], &c, 1);
    errno = saved;
}

void plx_counters_reload(void)
{
    atomic_fetch_add(&epoch_now, 1);
    plx_filter_reload_counters(plx_cfg.filter);
    plx_regions_recount();
}

/* The runtime's own thread: re-reads the filter file's counters rules at each signal. */
static void *reload_main(void *arg)
{
    (void)arg;
    plx_thread_mark_internal();
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    for (;;) {
        char c;
        if (syscall(SYS_read, reload_pipe[0], &c, 1) != 1)
            continue;
        if (!plx_active)
            continue;
        plx_counters_reload();
        if (plx_cfg.verbose)
            plx_warn("counters: %s re-read (epoch %u)", plx_cfg.filter,
                     atomic_load(&epoch_now));
    }
    return NULL;
}

/* ---- per-thread state --------------------------------------------------------------------- */

struct cframe {
    uint32_t set, outer;  /* outer: stack index of the enclosing counted frame, or NO_INDEX */
    uint64_t start[PLX_CTR_MAX_EVENTS];
    uint64_t child[PLX_CTR_MAX_EVENTS];
};

struct accum { /* one (callpath node or region, set) of this thread */
    uint64_t key;  /* (node or region) << 8 | set, + 1; 0 = empty */
    uint32_t region, pad;
    uint64_t calls;
    uint64_t incl[PLX_CTR_MAX_EVENTS], excl[PLX_CTR_MAX_EVENTS];
};

#define ACCUM_SLOTS 8192u
#define CALL_SLOTS 1024u

struct plx_ctr_thread {
    int fd[PLX_CTR_MAX_SETS][PLX_CTR_MAX_EVENTS]; /* -1 not counted */
    int8_t pos[PLX_CTR_MAX_SETS][PLX_CTR_MAX_EVENTS]; /* place in the group's read, -1 none */
    int8_t state[PLX_CTR_MAX_SETS];  /* 0 not opened, 1 open, -1 could not be opened */
    int leader[PLX_CTR_MAX_SETS];
    uint8_t path[PLX_CTR_MAX_SETS][PLX_CTR_MAX_EVENTS]; /* enum plx_read_path */
    uint8_t rdpmc[PLX_CTR_MAX_SETS];  /* 1: the set is read with rdpmc */
    struct perf_event_mmap_page *page[PLX_CTR_MAX_SETS][PLX_CTR_MAX_EVENTS];
    uint64_t readings_rdpmc[PLX_CTR_MAX_SETS], readings_syscall[PLX_CTR_MAX_SETS];
#ifdef PLX_HAVE_PAPI
    int papi_set[PLX_CTR_MAX_SETS];  /* PAPI event set of the set's PAPI events, or -1 */
    int8_t papi_pos[PLX_CTR_MAX_SETS][PLX_CTR_MAX_EVENTS];
#endif
    uint32_t top;          /* stack index of the innermost counted frame, or NO_INDEX */
    uint32_t epoch_seen;
    uint64_t thread_start[PLX_CTR_MAX_EVENTS];
    uint64_t calls_key[CALL_SLOTS], calls[CALL_SLOTS]; /* (context, region) → calls here */
    uint64_t lost;         /* counted calls not accumulated: the table was full */
    struct cframe *stack;  /* indexed like the thread's frame stack */
    struct accum *acc;     /* ACCUM_SLOTS, open addressing */
    size_t bytes;
};

static void *map(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static struct plx_ctr_thread *ctr_of(struct plx_thread *t)
{
    if (t->ctr)
        return t->ctr;
    size_t head = (sizeof(struct plx_ctr_thread) + 4095) & ~(size_t)4095;
    size_t stack = ((size_t)t->max_depth * sizeof(struct cframe) + 4095) & ~(size_t)4095;
    size_t acc = (size_t)ACCUM_SLOTS * sizeof(struct accum);
    char *m = map(head + stack + acc);
    if (!m)
        return NULL;
    struct plx_ctr_thread *c = (struct plx_ctr_thread *)m;
    c->bytes = head + stack + acc;
    c->stack = (struct cframe *)(m + head);
    c->acc = (struct accum *)(m + head + stack);
    c->top = PLX_NO_INDEX;
    for (int s = 0; s < PLX_CTR_MAX_SETS; s++) {
        c->leader[s] = -1;
#ifdef PLX_HAVE_PAPI
        c->papi_set[s] = -1;
#endif
        for (int i = 0; i < PLX_CTR_MAX_EVENTS; i++)
            c->fd[s][i] = -1, c->pos[s][i] = -1;
    }
    t->ctr = c;
    return c;
}

#define POS_TIME (-2) /* a clock event: the group's time enabled */

static int is_clock(const struct perf_event_attr *a)
{
    return a->type == PERF_TYPE_SOFTWARE &&
           (a->config == PERF_COUNT_SW_TASK_CLOCK || a->config == PERF_COUNT_SW_CPU_CLOCK);
}

/* An event the PMU counts (not a software or tracepoint event): rdpmc may read it. */
static int on_pmu(const struct perf_event_attr *a)
{
    return a->type != PERF_TYPE_SOFTWARE && a->type != PERF_TYPE_TRACEPOINT;
}

/* Each event's read path of set `id` (opened), and its rdpmc pages when the set takes rdpmc. */
static void choose_paths(struct plx_ctr_thread *c, uint32_t id)
{
    const struct set *s = &sets[id];
    for (uint32_t i = 0; i < s->nevents; i++) {
        uint8_t p = PLX_PATH_NONE;
        if (c->pos[id][i] == POS_TIME) {
            p = PLX_PATH_TIME;
        } else if (c->fd[id][i] >= 0) {
            p = PLX_PATH_READ;
            if (plx_rdpmc_available() && on_pmu(&s->attr[i])) {
                void *m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, c->fd[id][i], 0);
                if (m != MAP_FAILED) {
                    c->page[id][i] = m;
                    if (plx_rdpmc_allowed(m))
                        p = PLX_PATH_RDPMC;
                }
            }
        }
#ifdef PLX_HAVE_PAPI
        if (s->papi[i] && c->papi_set[id] >= 0)
            p = PLX_PATH_PAPI;
#endif
        c->path[id][i] = p;
    }
    c->rdpmc[id] = (uint8_t)plx_rdpmc_decide(c->path[id], s->nevents);
    if (!c->rdpmc[id])
        for (uint32_t i = 0; i < s->nevents; i++)
            if (c->page[id][i]) {
                munmap(c->page[id][i], 4096);
                c->page[id][i] = NULL;
            }
}

/* Opens set `id`'s group on the calling thread (its owner). A failure after a good probe
 * (out of descriptors, say) is reported once per event like a refusal. */
static int open_set(struct plx_ctr_thread *c, uint32_t id)
{
    if (c->state[id])
        return c->state[id] > 0;
    const struct set *s = &sets[id];
    int leader = -1, n = 0, clocks = 0;
    /* Clock events (task-clock, cpu-clock) are never group members: in a group led by an
     * event of another software PMU the kernel's group read leaves a member of the other PMU
     * unread (0). A per-thread group's time enabled is the thread's time on a CPU, which is
     * what they count: they are read from it. A set of clock events only opens one to lead. */
    for (uint32_t i = 0; i < s->nevents; i++) {
        if (s->refused[i] || s->papi[i])
            continue;
        if (is_clock(&s->attr[i])) {
            c->pos[id][i] = POS_TIME;
            clocks++;
            continue;
        }
        struct perf_event_attr a = s->attr[i];
        int fd = open_event(&a, leader);
        if (fd < 0) {
            report_refusal(s->names[i], errno);
            continue;
        }
        if (leader < 0)
            leader = fd;
        c->fd[id][i] = fd;
        c->pos[id][i] = (int8_t)n++;
    }
    if (leader < 0 && clocks) {
        for (uint32_t i = 0; i < s->nevents && leader < 0; i++)
            if (c->pos[id][i] == POS_TIME) {
                struct perf_event_attr a = s->attr[i];
                leader = open_event(&a, -1);
                if (leader < 0)
                    report_refusal(s->names[i], errno);
                else
                    c->fd[id][i] = leader;
            }
        if (leader < 0)
            for (uint32_t i = 0; i < s->nevents; i++)
                if (c->pos[id][i] == POS_TIME)
                    c->pos[id][i] = -1;
    }
    if (leader >= 0)
        n += clocks;
    c->leader[id] = leader;
#ifdef PLX_HAVE_PAPI
    int es = PAPI_NULL, np = 0;
    for (uint32_t i = 0; i < s->nevents; i++) {
        if (s->refused[i] || !s->papi[i])
            continue;
        if (es == PAPI_NULL && (PAPI_register_thread() != PAPI_OK ||
                                PAPI_create_eventset(&es) != PAPI_OK)) {
            report_refusal(s->names[i], EINVAL);
            es = PAPI_NULL;
            break;
        }
        if (PAPI_add_named_event(es, s->names[i]) != PAPI_OK) {
            report_refusal(s->names[i], EINVAL);
            continue;
        }
        c->papi_pos[id][i] = (int8_t)np++;
    }
    if (es != PAPI_NULL && np > 0 && PAPI_start(es) == PAPI_OK)
        c->papi_set[id] = es;
    n += c->papi_set[id] >= 0 ? np : 0;
#endif
    c->state[id] = n > 0 ? 1 : -1;
    if (n > 0)
        choose_paths(c, id);
    return n > 0;
}

/* A reading of set `id` with rdpmc alone: 1, or 0 when an event is not on a counter now. */
static int read_rdpmc(struct plx_ctr_thread *c, uint32_t id, uint64_t *v)
{
    const struct set *s = &sets[id];
    for (uint32_t i = 0; i < s->nevents; i++) {
        if (c->path[id][i] == PLX_PATH_RDPMC) {
            if (plx_rdpmc_read_with(c->page[id][i], plx_rdpmc_insn, &v[i]) != 0)
                return 0;
        } else if (c->path[id][i] != PLX_PATH_PAPI) {
            v[i] = 0;
        }
    }
    return 1;
}

/* One reading of set `id` into v[0..nevents): rdpmc where the set takes it, else one read() of
 * the group; and one PAPI_read for its PAPI events. */
static void read_set(struct plx_ctr_thread *c, uint32_t id, uint64_t *v)
{
    const struct set *s = &sets[id];
    uint64_t buf[3 + PLX_CTR_MAX_EVENTS]; /* nr, time enabled, time running, values */
    int got = 0;
    if (c->rdpmc[id] && read_rdpmc(c, id, v)) {
        c->readings_rdpmc[id]++;
#ifdef PLX_HAVE_PAPI
        long long pv[PLX_CTR_MAX_EVENTS];
        int pgot = c->papi_set[id] >= 0 && PAPI_read(c->papi_set[id], pv) == PAPI_OK;
        for (uint32_t i = 0; i < s->nevents; i++)
            if (s->papi[i])
                v[i] = pgot ? (uint64_t)pv[(int)c->papi_pos[id][i]] : 0;
#endif
        return;
    }
    c->readings_syscall[id]++;
    if (c->leader[id] >= 0)
        got = plx_sys_read(c->leader[id], buf, sizeof buf) >= 32; /* the runtime's own I/O: raw */
#ifdef PLX_HAVE_PAPI
    long long pv[PLX_CTR_MAX_EVENTS];
    int pgot = c->papi_set[id] >= 0 && PAPI_read(c->papi_set[id], pv) == PAPI_OK;
#endif
    for (uint32_t i = 0; i < s->nevents; i++) {
        int p = c->pos[id][i];
        v[i] = !got ? 0 : p == POS_TIME ? buf[1] : p >= 0 && (uint64_t)p < buf[0] ? buf[3 + p] : 0;
#ifdef PLX_HAVE_PAPI
        if (s->papi[i])
            v[i] = pgot ? (uint64_t)pv[(int)c->papi_pos[id][i]] : 0;
#endif
    }
}

static void close_sets(struct plx_ctr_thread *c)
{
    for (int s = 0; s < PLX_CTR_MAX_SETS; s++) {
        for (int i = 0; i < PLX_CTR_MAX_EVENTS; i++) {
            if (c->page[s][i])
                munmap(c->page[s][i], 4096);
            if (c->fd[s][i] >= 0)
                plx_sys_close(c->fd[s][i]);
        }
#ifdef PLX_HAVE_PAPI
        if (c->papi_set[s] >= 0) {
            long long pv[PLX_CTR_MAX_EVENTS];
            PAPI_stop(c->papi_set[s], pv);
            PAPI_cleanup_eventset(c->papi_set[s]);
            PAPI_destroy_eventset(&c->papi_set[s]);
        }
#endif
    }
}

void plx_counters_thread_start(struct plx_thread *t)
{
    if (!have_thread_set)
        return;
    struct plx_ctr_thread *c = ctr_of(t);
    if (c && open_set(c, thread_set))
        read_set(c, thread_set, c->thread_start);
}

/* ---- counted calls -------------------------------------------------------------------------- */

static uint64_t *call_count(struct plx_ctr_thread *c, uint32_t context, uint32_t region)
{
    uint64_t key = ((uint64_t)context << 32 | region) + 1;
    uint32_t i = plx_hash_ptr((uintptr_t)key) & (CALL_SLOTS - 1);
    for (uint32_t n = 0; n < CALL_SLOTS; n++, i = (i + 1) & (CALL_SLOTS - 1)) {
        if (c->calls_key[i] == key)
            return &c->calls[i];
        if (c->calls_key[i] == 0) {
            c->calls_key[i] = key;
            return &c->calls[i];
        }
    }
    return &c->calls[0]; /* full: the rotation goes on by one shared count */
}

void plx_counters_enter(struct plx_thread *t, struct plx_frame *f)
{
    uint32_t ctx = region_context
                       ? __atomic_load_n(&region_context[f->region], __ATOMIC_ACQUIRE)
                       : 0;
    if (!ctx)
        return; /* no longer counted since a reload */
    struct plx_ctr_thread *c = ctr_of(t);
    if (!c)
        return;
    const struct context *cx = &contexts[ctx - 1];
    uint32_t e = atomic_load_explicit(&epoch_now, memory_order_relaxed);
    if (c->epoch_seen != e) {
        c->epoch_seen = e;
        uint64_t w[PLX_EXT_COUNTER_EPOCH_WORDS];
        plx_ext_pack_counter_epoch(w, e);
        plx_trace_ext(t, PLX_EXT_COUNTER_EPOCH, w, PLX_EXT_COUNTER_EPOCH_WORDS);
    }
    uint64_t n = (*call_count(c, ctx - 1, f->region))++;
    uint32_t set = cx->first_set + (cx->nsets > 1 ? (uint32_t)((n / cx->every) % cx->nsets) : 0);
    if (!open_set(c, set))
        return;
    uint32_t idx = (uint32_t)(f - t->stack);
    struct cframe *cf = &c->stack[idx];
    cf->set = set;
    cf->outer = c->top;
    memset(cf->child, 0, sizeof cf->child);
    c->top = idx;
    f->cpu |= PLX_FRAME_COUNTED;
    read_set(c, set, cf->start); /* last: the reading's own cost stays outside */
}

static struct accum *accum_of(struct plx_ctr_thread *c, uint32_t key, uint32_t set)
{
    uint64_t k = ((uint64_t)key << 8 | set) + 1;
    uint32_t i = plx_hash_ptr((uintptr_t)k) & (ACCUM_SLOTS - 1);
    for (uint32_t n = 0; n < ACCUM_SLOTS / 4 * 3; n++, i = (i + 1) & (ACCUM_SLOTS - 1)) {
        if (c->acc[i].key == k)
            return &c->acc[i];
        if (c->acc[i].key == 0) {
            c->acc[i].key = k;
            return &c->acc[i];
        }
    }
    return NULL;
}

/* The index in set `b` of set `a`'s event i, or -1. */
static int same_event(uint32_t a, uint32_t i, uint32_t b)
{
    if (a == b)
        return (int)i;
    for (uint32_t j = 0; j < sets[b].nevents; j++)
        if (strcmp(sets[a].names[i], sets[b].names[j]) == 0)
            return (int)j;
    return -1;
}

void plx_counters_exit(struct plx_thread *t, struct plx_frame *f)
{
    struct plx_ctr_thread *c = t->ctr;
    uint32_t idx = (uint32_t)(f - t->stack);
    f->cpu &= ~PLX_FRAME_COUNTED;
    if (!c || c->top != idx)
        return;
    struct cframe *cf = &c->stack[idx];
    uint64_t now[PLX_CTR_MAX_EVENTS], incl[PLX_CTR_MAX_EVENTS];
    read_set(c, cf->set, now); /* first: the rest of the exit stays outside */
    const struct set *s = &sets[cf->set];
    for (uint32_t i = 0; i < s->nevents; i++)
        incl[i] = now[i] >= cf->start[i] ? now[i] - cf->start[i] : 0;
    c->top = cf->outer;
    if (cf->outer != PLX_NO_INDEX) {
        struct cframe *o = &c->stack[cf->outer];
        for (uint32_t i = 0; i < s->nevents; i++) {
            int j = same_event(cf->set, i, o->set);
            if (j >= 0)
                o->child[j] += incl[i];
        }
    }
    uint32_t key = t->buf ? f->region : f->node;
    struct accum *a = key == PLX_NO_INDEX ? NULL : accum_of(c, key, cf->set);
    if (!a) {
        c->lost++;
    } else {
        a->region = f->region;
        a->calls++;
        for (uint32_t i = 0; i < s->nevents; i++) {
            a->incl[i] += incl[i];
            a->excl[i] += incl[i] > cf->child[i] ? incl[i] - cf->child[i] : 0;
        }
    }
    if (t->buf) { /* subtype 10: the first 4 inclusive values (0 for events the set lacks) */
        uint64_t v[4] = {0, 0, 0, 0}, w[PLX_EXT_COUNTED_CALL_WORDS];
        memcpy(v, incl, (s->nevents < 4 ? s->nevents : 4) * 8);
        plx_ext_pack_counted_call(w, cf->set, f->region, v[0], v[1], v[2], v[3]);
        plx_trace_ext(t, PLX_EXT_COUNTED_CALL, w, PLX_EXT_COUNTED_CALL_WORDS);
    }
}

/* ---- thread end ------------------------------------------------------------------------------ */

static void write_thread(struct plx_thread *t, struct plx_ctr_thread *c)
{
    struct plx_rec rec;
    plx_rec_init(&rec);
    uint32_t n = atomic_load_explicit(&nsets_used, memory_order_acquire);
    if (have_thread_set && c->state[thread_set] > 0) {
        uint64_t v[PLX_CTR_MAX_EVENTS];
        const struct set *ts = &sets[thread_set];
        read_set(c, thread_set, v);
        for (uint32_t i = 0; i < ts->nevents; i++)
            v[i] = v[i] >= c->thread_start[i] ? v[i] - c->thread_start[i] : 0;
        plx_enc_thread_counters(&rec, t->index, thread_set, ts->nevents, v);
        plx_rec_write(&rec, 0);
    }
    for (uint32_t s = 0; s < n; s++) { /* how each opened set was read */
        if (c->state[s] <= 0)
            continue;
        plx_enc_counter_read_paths(&rec, t->index, s, c->readings_rdpmc[s], c->readings_syscall[s],
                                   sets[s].nevents, c->path[s]);
        plx_rec_write(&rec, 0);
    }
    for (uint32_t s = 0; s < n; s++) {
        uint32_t ne = sets[s].nevents;
        for (uint32_t i = 0; i < ACCUM_SLOTS; i++) {
            const struct accum *a = &c->acc[i];
            if (!a->key || ((a->key - 1) & 0xFF) != s)
                continue;
            uint32_t key = (uint32_t)((a->key - 1) >> 8);
            uint64_t v[2 * PLX_CTR_MAX_EVENTS];
            memcpy(v, a->incl, ne * 8);
            memcpy(v + ne, a->excl, ne * 8);
            /* profile mode: the node as numbered in ThreadProfile (node 0 is the root) */
            plx_enc_node_counters(&rec, t->index, s, t->buf ? PLX_NO_INDEX : key - 1, a->region,
                                  a->calls, 2 * ne, v);
            plx_rec_write(&rec, 0);
        }
    }
    if (c->lost)
        plx_warn("thread %u: %llu counted calls not kept (more than %u counted callpaths)",
                 t->index, (unsigned long long)c->lost, ACCUM_SLOTS / 4 * 3);
}

void plx_counters_thread_end(struct plx_thread *t)
{
    struct plx_ctr_thread *c = t->ctr;
    if (!c)
        return;
    while (c->top != PLX_NO_INDEX) /* counted functions still open end here */
        plx_counters_exit(t, &t->stack[c->top]);
    write_thread(t, c);
    close_sets(c);
    t->ctr = NULL;
    munmap(c, c->bytes);
}

/* In a fork()ed child the groups count the parent's thread: the child opens its own. */
void plx_counters_after_fork(struct plx_thread *t)
{
    struct plx_ctr_thread *c = t->ctr;
    if (!c)
        return;
    close_sets(c);
    t->ctr = NULL;
    munmap(c, c->bytes);
    for (uint32_t i = 0; i < t->depth; i++)
        t->stack[i].cpu &= ~PLX_FRAME_COUNTED;
    plx_counters_thread_start(t);
}

/* The reload thread and its pipe; 0 when they run. */
static int start_reload_thread(void)
{
    pthread_t th;
    if (pipe2(reload_pipe, O_CLOEXEC) != 0)
        return -1;
    if (plx_create_internal_thread(&th, reload_main, NULL) != 0) {
        close(reload_pipe[0]);
        close(reload_pipe[1]);
        reload_pipe[0] = reload_pipe[1] = -1;
        return -1;
    }
    pthread_detach(th);
    return 0;
}

void plx_counters_rewrite(void)
{
    atomic_flag_clear(&cfg_lock); /* a thread of the parent may have held it */
    uint32_t n = atomic_load_explicit(&nsets_used, memory_order_acquire);
    for (uint32_t id = 0; id < n; id++)
        write_set(id);
    /* the parent's reload thread is not in the child: the child reloads on its own signals */
    if (reload_pipe[0] >= 0) {
        close(reload_pipe[0]);
        close(reload_pipe[1]);
        reload_pipe[0] = reload_pipe[1] = -1;
        if (start_reload_thread() != 0)
            plx_warn("counters: no reload thread in this child; its filter file is read once");
    }
}

/* ---- start -------------------------------------------------------------------------------- */

/* PLX_COUNTERS (whole-thread totals) and PLX_COUNTERS_SIGNAL, from the option table. */
void plx_counters_init(void)
{
    const char *list = plx_cfg.counters;
    if (list[0]) {
        char buf[sizeof plx_cfg.counters];
        const char *names[PLX_CTR_MAX_EVENTS];
        unsigned n = 0;
        snprintf(buf, sizeof buf, "%s", list);
        for (char *save = NULL, *w = strtok_r(buf, ", ", &save); w; w = strtok_r(NULL, ", ", &save)) {
            if (!plx_counter_event_valid(w)) {
                plx_warn("PLX_COUNTERS: unknown event '%s' (docs/formats/counters.md lists them)", w);
                continue;
            }
            if (n == PLX_CTR_MAX_EVENTS) {
                plx_warn("PLX_COUNTERS: more than %d events; '%s' and later are not counted",
                         PLX_CTR_MAX_EVENTS, w);
                break;
            }
            names[n++] = w;
        }
        if (n) {
            cfg_take();
            thread_set = define_set(names, n, PLX_NO_INDEX, 0);
            cfg_give();
            have_thread_set = thread_set != PLX_NO_INDEX;
            active = 1;
        }
    }
    if (!ncontexts)
        return;
    region_context = map(sizeof(uint16_t) * PLX_MAX_REGIONS);
    /* the choices of PLX_COUNTERS_SIGNAL, in options.def's order */
    reload_signal = plx_cfg.counters_signal == 1 ? SIGUSR2 : plx_cfg.counters_signal == 2 ? 0 : SIGUSR1;
    if (reload_signal == 0 || !plx_cfg.filter[0])
        return;
    if (start_reload_thread() != 0) {
        plx_warn("counters: no reload thread; the filter file is read once");
        return;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_reload_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(reload_signal, &sa, NULL);
}
