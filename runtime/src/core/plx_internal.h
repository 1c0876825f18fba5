/* Runtime-internal declarations shared by core and adapters: thread state, regions, clock. */
#ifndef PLX_INTERNAL_H
#define PLX_INTERNAL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "records.h"

#define PLX_HIDDEN __attribute__((visibility("hidden")))
#define PLX_LIKELY(x) __builtin_expect(!!(x), 1)
#define PLX_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define PLX_TLS __attribute__((tls_model("initial-exec"))) __thread

#define PLX_VERSION "0.1.0"
#define PLX_NO_INDEX 0xFFFFFFFFu

/* ---- clock (clock.c) ---------------------------------------------------------------------- */
/* As ProcessInfo.clock: TSC ticks, CLOCK_MONOTONIC ns, CLOCK_MONOTONIC_COARSE ns. */
enum plx_clock_kind { PLX_CLOCK_TSC = 0, PLX_CLOCK_MONOTONIC = 1, PLX_CLOCK_COARSE = 2 };
PLX_HIDDEN extern int plx_clock_kind;
PLX_HIDDEN void plx_clock_init(void);
PLX_HIDDEN double plx_clock_rate(void); /* ticks per second measured at start */
PLX_HIDDEN uint64_t plx_monotonic_ns(void);
PLX_HIDDEN uint64_t plx_clock_slow(void);

static inline uint64_t plx_ticks(void)
{
    if (PLX_LIKELY(plx_clock_kind == PLX_CLOCK_TSC)) {
        uint32_t lo, hi;
        __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
        return ((uint64_t)hi << 32) | lo;
    }
    return plx_clock_slow();
}

/* ---- configuration (config.c): every PLX_* setting, from the table in options.def ----------- */
#include "options.h"
/* A member per option, of its type's C type: PATH and TEXT chars, BOOL int, UINT and SIZE uint64_t,
 * CHOICE int (the word's index, -1 when unset without a default). */
#define PLX_FIELD_PATH(f) char f[PLX_PATH_CAP];
#define PLX_FIELD_BOOL(f) int f;
#define PLX_FIELD_UINT(f) uint64_t f;
#define PLX_FIELD_SIZE(f) uint64_t f;
#define PLX_FIELD_CHOICE(f) int f;
#define PLX_FIELD_TEXT(f) char f[PLX_PATH_CAP];
struct plx_config {
#define PLX_OPTION(NAME, FIELD, TYPE, ...) PLX_FIELD_##TYPE(FIELD)
#include "options.def"
#undef PLX_OPTION
};
PLX_HIDDEN extern struct plx_config plx_cfg;
/* Reads every option from the environment (the only reader of PLX_* variables); a value outside
 * its grammar is reported by name and its default used. Returns 0 when an experiment is to be
 * written (PLX_OUTPUT set). */
PLX_HIDDEN int plx_config_load(void);
/* The same from `block` (NAME=VALUE lines, as plx attach passes them) instead of the
 * environment. */
PLX_HIDDEN int plx_config_load_from(const char *block);
/* Whether the environment gave option `id` (enum plx_option_id) a valid value. */
PLX_HIDDEN int plx_config_given(int id);
/* The configuration, for extensions (libplx-mpi). */
__attribute__((visibility("default"))) const struct plx_config *plx_ext_config(void);

/* ---- regions (regions.c): address or name → dense id, shared by all threads ---------------- */
/* 4 is an MPI routine (libplx-mpi); 5 a measured C library call (socket.c, wait.c); 6 a Java
 * method (adapters/jvm); 7 an OpenMP construct (adapters/omp). */
enum plx_region_kind { PLX_KIND_FUNCTION = 0, PLX_KIND_USER = 1, PLX_KIND_PHASE = 2, PLX_KIND_RUNTIME = 3,
                       PLX_KIND_MPI = 4, PLX_KIND_SOCKET = 5, PLX_KIND_JAVA = 6, PLX_KIND_OMP = 7 };
#define PLX_REGION_EXCLUDED 0x80000000u /* in a slot's value: never measure */
#define PLX_REGION_MISSING 0x40000000u /* lookup result: not in the table yet */
#define PLX_REGION_ENTER_TRIED 0x20000000u /* excluded: its entry call was patched out (or tried) */
#define PLX_REGION_EXIT_TRIED 0x10000000u  /* excluded: its exit call was patched out (or tried) */
#define PLX_REGION_CPU 0x04000000u         /* selected for per-call CPU time (filter: cputime) */
#define PLX_REGION_COUNTERS 0x02000000u    /* has a counter context (filter: counters) */
#define PLX_REGION_ID_MASK 0x003FFFFFu  /* 22 bits, as in the trace event */
#define PLX_REGION_FLUSH 0u             /* id of the runtime's own buffer flush */
#define PLX_REGION_SYMBOLS 1u           /* id of the runtime's first-sight symbol lookups */
#define PLX_MAX_REGIONS (PLX_REGION_ID_MASK + 1)

struct plx_slot {
    _Atomic uintptr_t key;   /* 0 = empty; published last (release) */
    _Atomic uint32_t value;  /* region id | PLX_REGION_EXCLUDED */
};
PLX_HIDDEN extern struct plx_slot *plx_fn_slots;
PLX_HIDDEN extern uint32_t plx_fn_mask;

PLX_HIDDEN int plx_regions_init(void);
PLX_HIDDEN uint32_t plx_region_of_address_slow(uintptr_t addr);
PLX_HIDDEN uint32_t plx_region_of_name(const char *name, int kind);
PLX_HIDDEN uint32_t plx_region_define_code(const char *name, int kind, uintptr_t address);
PLX_HIDDEN void plx_region_bind(uintptr_t fn, uint32_t region, int hide);
PLX_HIDDEN uint32_t plx_region_of_text(const char *name, int kind);
PLX_HIDDEN void plx_region_throttle(uint32_t id, uint64_t calls, uint64_t ticks);
PLX_HIDDEN int plx_region_is_excluded(uint32_t id);
/* After a dlclose: the functions of every library unloaded leave the address table, so that
 * code loaded later at their addresses gets regions of its own (slow path only). */
PLX_HIDDEN void plx_regions_unloaded(void);
PLX_HIDDEN void plx_regions_rewrite(void); /* after fork: definitions into the new file */
/* After a reload of the counter contexts: every function's PLX_REGION_COUNTERS bit again. */
PLX_HIDDEN void plx_regions_recount(void);
PLX_HIDDEN extern _Atomic uint32_t plx_region_count;
PLX_HIDDEN extern uint64_t plx_throttle_calls;
PLX_HIDDEN extern uint64_t plx_throttle_ticks;

static inline uint32_t plx_hash_ptr(uintptr_t a)
{
    return (uint32_t)(((uint64_t)a * 0x9E3779B97F4A7C15ull) >> 40);
}

/* The hot-path lookup: lock-free read of the address table. */
static inline uint32_t plx_region_of_address(uintptr_t addr)
{
    uint32_t i = plx_hash_ptr(addr) & plx_fn_mask;
    for (;;) {
        uintptr_t k = atomic_load_explicit(&plx_fn_slots[i].key, memory_order_acquire);
        if (PLX_LIKELY(k == addr))
            return atomic_load_explicit(&plx_fn_slots[i].value, memory_order_relaxed);
        if (k == 0)
            return PLX_REGION_MISSING;
        i = (i + 1) & plx_fn_mask;
    }
}

/* ---- per-thread state (thread.c) -------------------------------------------------------- */
struct plx_node { /* one callpath; children form a list, most recently used first */
    uint32_t parent, region, first_child, next_sibling;
    uint64_t calls, child_calls, incl, excl;
};
/* The item of the "nodes" live file (records.h, from spec/records.toml). */
_Static_assert(sizeof(struct plx_node) == PLX_LIVE_NODES_ITEM_SIZE, "live nodes item");
_Static_assert(offsetof(struct plx_node, region) == PLX_LIVE_NODES_OFF_REGION &&
               offsetof(struct plx_node, next_sibling) == PLX_LIVE_NODES_OFF_NEXT_SIBLING &&
               offsetof(struct plx_node, calls) == PLX_LIVE_NODES_OFF_CALLS &&
               offsetof(struct plx_node, incl) == PLX_LIVE_NODES_OFF_INCLUSIVE_TICKS &&
               offsetof(struct plx_node, excl) == PLX_LIVE_NODES_OFF_EXCLUSIVE_TICKS, "live nodes item");

struct plx_frame {
    uintptr_t key;      /* function address, or region id for user regions */
    uint32_t node;      /* profile mode: callpath node; trace mode: region id */
    uint32_t region;
    uint64_t start;
    uint64_t child;     /* inclusive ticks of measured children */
    uint64_t cpu;       /* 0, or the slow exit's work: thread CPU ns at entry (a multiple of 4)
                           | 1 for `cputime` functions, | 2 for counted functions (counters.h) */
    uintptr_t sp;       /* compiler hooks: the function's stack pointer at entry (its hook's CFA,
                           the same at its exit hook); PLX_SP_NONE for every other source */
    uintptr_t site;     /* compiler hooks: the function's return address (the hook's `site`) */
};

/* A frame with no stack pointer (user regions, wrappers, Java): never found gone. */
#define PLX_SP_NONE 0

struct plx_uevent {
    uint64_t count;
    double min, max, sum, sumsq;
};

#define PLX_MAX_UEVENTS 256

struct plx_samples; /* stack_sampler.c */

struct plx_thread {
    /* Owned by the thread itself; other threads read it only at process end. */
    int guard;                 /* re-entry guard: nonzero while inside the runtime */
    int dead;                  /* finalised: record nothing more */
    uint32_t index, tid, parent;
    uint32_t depth, max_depth, overflow;
    struct plx_frame *stack;
    struct plx_node *nodes;    /* in a live file when it could be made (live_nodes) */
    struct plx_live_header *live_nodes;
    uint32_t nnodes, max_nodes, cur;
    uint32_t node_room; /* nodes usable before plx_node_new must grow the live file */
    uint64_t lost_nodes;
    uint64_t *rstats;          /* trace mode with a throttle: per region calls (top bit:
                                  throttled on this thread) and inclusive ticks (2 words) */
    uint64_t *throttled;       /* profile mode: a bit per throttled node, made on first need */
    uint64_t *node_cpu;        /* profile mode: inclusive CPU ns per node of `cputime` functions */
    uint64_t *buf, *pos, *end; /* trace buffer, in a live file when it could be made */
    struct plx_live_header *live_trace; /* its "trace" live file: word 0 the chunk's base */
    uint64_t base, last;       /* ticks of the chunk start and of the previous event */
    uint64_t trace_events, lost_events;
    uint64_t sends;            /* send events traced (messages.c): the next one's number */
    uint64_t collectives;      /* collective events traced (messages.c): likewise */
    int java_blocked;          /* in a Java monitor's contended entry or Object.wait
                                  (adapters/jvm/monitors.c): the JVM's own pthread calls
                                  inside (locks, waits) are that wait, not recorded apart */
    uint64_t start_ticks, start_cpu_ns;
    struct plx_uevent uevents[PLX_MAX_UEVENTS];
    uint32_t nuevents;
    struct plx_thread *next;   /* registry list, guarded by the registry lock */
    struct plx_thread **pprev; /* the link pointing at it in that list; NULL once unlinked */
    unsigned long pthread;     /* pthread_t, for reading its CPU clock from another thread */
    uintptr_t create_site;     /* return address of the pthread_create that started it, or 0 */
    void *mem;                 /* the mapping holding this struct, stack and nodes */
    void *ext[2];              /* per-thread data of extension libraries (libplx-mpi) */
    void *messages;            /* message statistics (messages.c), or NULL */
    struct plx_sync_entry *sync; /* per-object statistics (sync.c), in a live file */
    struct plx_live_header *live_sync;
    struct plx_ctr_thread *ctr; /* counter groups and counted frames (counters.c), or NULL */
    size_t mem_bytes;
    int java_name;             /* named by its java.lang.Thread (adapters/jvm): kept over the
                                  JVM's 15-character native names (pthread_setname_np) */
    char name[64];
    char comm[16];             /* its kernel name when it registered (thread_name.c) */
    struct plx_samples *samples; /* call-stack samples (stack_sampler.c), or NULL */
};

PLX_HIDDEN extern PLX_TLS struct plx_thread *plx_self;
/* The thread is in the runtime's own dl_iterate_phdr (symbols.c), holding the loader's lock
 * that libunwind's lookups take: a sample then is dropped (counted as in the loader), since
 * its unwinding could wait for that lock behind a thread waiting for libunwind's. */
PLX_HIDDEN extern PLX_TLS volatile int plx_in_phdr;
PLX_HIDDEN extern volatile int plx_active; /* an experiment is being written */
/* This process runs a launcher or helper (launchers.c), decided once at its start (an exec
 * decides again, a fork inherits it): it is written as a process, but none of its threads is
 * attached, so no adapter records an event in it. */
PLX_HIDDEN extern int plx_launcher;
/* Set by the pthread_create trampoline, read when the thread attaches. */
PLX_HIDDEN extern PLX_TLS uintptr_t plx_pending_start;
PLX_HIDDEN extern PLX_TLS uint32_t plx_pending_parent;
PLX_HIDDEN extern PLX_TLS void *plx_pending_block;
PLX_HIDDEN extern PLX_TLS uint64_t plx_pending_created; /* ticks at its pthread_create */
PLX_HIDDEN extern PLX_TLS const char *plx_pending_comm;  /* its creator's comm then (in the
                                                             pending block: NULL once freed) */
PLX_HIDDEN extern PLX_TLS uintptr_t plx_pending_site;
PLX_HIDDEN struct plx_thread *plx_thread_attach(void);
PLX_HIDDEN int plx_program_thread(void);
PLX_HIDDEN struct plx_thread *plx_thread_attach_as(uint32_t parent, uintptr_t start_routine);
PLX_HIDDEN void plx_thread_finish(struct plx_thread *t, uint64_t now);
/* A location that is no thread of the process (a JVM virtual thread), named `name`: a thread's
 * state, registered, that the thread running it makes its plx_self while it runs it and gives
 * back after. plx_location_end writes and frees it (never while it is the caller's plx_self);
 * the process end writes it when still registered. NULL when nothing is recorded. */
PLX_HIDDEN struct plx_thread *plx_location_new(const char *name);
PLX_HIDDEN void plx_location_end(struct plx_thread *t, uint64_t now);
PLX_HIDDEN void plx_threads_finish_all(void);
/* plx detach, every other thread stopped: 1 when one of them is inside the runtime (its guard
 * set, or the registry taken), so that its state cannot be finished from here now. */
PLX_HIDDEN int plx_threads_busy(void);
/* The calling thread records nothing, ever (the runtime's own threads: the CPU sampler). */
PLX_HIDDEN void plx_thread_mark_internal(void);
/* Number of measured threads alive now (an estimate for sizing a sample). */
PLX_HIDDEN uint32_t plx_threads_live_count(void);
/* Under the registry lock: for every measured thread alive, its index and the CPU time of its
 * clock (pthread_getcpuclockid) into out[0..max), in pairs; returns how many, and the time the
 * reading began in *ticks. A thread that has unlinked itself (ended) is never read. */
PLX_HIDDEN uint32_t plx_threads_sample_cpu(uint32_t *index, uint64_t *cpu_ns, uint32_t max,
                                           uint64_t *ticks);
PLX_HIDDEN void plx_threads_after_fork(void);
PLX_HIDDEN void plx_thread_set_name(struct plx_thread *t, const char *name);
PLX_HIDDEN void plx_trace_flush(struct plx_thread *t);
PLX_HIDDEN void plx_trace_write_chunk(struct plx_thread *t); /* the buffer as one chunk, emptied */
/* The trace buffer of `words` event words (and the room past `end`) in a live file, so its
 * events survive SIGKILL; in memory `mem` when the file cannot be made or `in_file` is 0 (a
 * location of no thread: plx_location_new). */
PLX_HIDDEN void plx_trace_buffer_map(struct plx_thread *t, uint64_t *mem, size_t words,
                                     int in_file);
PLX_HIDDEN void plx_trace_buffer_unmap(struct plx_thread *t);
PLX_HIDDEN void plx_profile_write(struct plx_thread *t, uint64_t now, uint64_t cpu);
PLX_HIDDEN void plx_thread_reset_after_fork(struct plx_thread *t);
#define PLX_RSTAT_REGIONS (1u << 16) /* trace mode throttling covers the first 64 Ki regions */
PLX_HIDDEN void plx_trace_time_reset(struct plx_thread *t, uint64_t now);
PLX_HIDDEN uint32_t plx_region_resolve(struct plx_thread *t, uintptr_t addr);
PLX_HIDDEN void plx_trace_slow(struct plx_thread *t, uint64_t word, uint64_t now);
PLX_HIDDEN uint32_t plx_node_new(struct plx_thread *t, uint32_t parent, uint32_t region);
/* Throttling (filter: throttle CALLS USEC) per thread and callpath. Profile mode: node n has
 * made CALLS calls; throttled when they were fast (a bit in t->throttled). */
PLX_HIDDEN void plx_throttle_check(struct plx_thread *t, uint32_t n);
/* n, or PLX_NO_INDEX when node n is throttled. */
PLX_HIDDEN uint32_t plx_node_unless_throttled(struct plx_thread *t, uint32_t n);
/* Trace mode: the exit of frame f (its region's exit event and per-thread totals), or nothing
 * for a frame of a throttled region. */
PLX_HIDDEN void plx_trace_throttle_leave(struct plx_thread *t, struct plx_frame *f, uint64_t incl,
                                         uint64_t now);
PLX_HIDDEN void plx_uevent_record(struct plx_thread *t, uint32_t id, double value);
PLX_HIDDEN uint32_t plx_uevent_id(const char *name);

/* ---- extensions (ext.c) ------------------------------------------------------------------ */
/* messages.c: the thread's message statistics as MessageStats records, its live file removed */
PLX_HIDDEN void plx_messages_write(struct plx_thread *t);
/* In a fork()ed child: the parent's statistics left to the parent, the child's counted afresh. */
PLX_HIDDEN void plx_messages_after_fork(struct plx_thread *t);
PLX_HIDDEN void plx_ext_thread_ended(struct plx_thread *t);
PLX_HIDDEN void plx_ext_process_ending(void);

/* ---- synchronization objects (sync_objects.c) ------------------------------------------ */
enum plx_sync_kind { PLX_SYNC_MUTEX, PLX_SYNC_RWLOCK, PLX_SYNC_COND, PLX_SYNC_BARRIER,
                     PLX_SYNC_SEM, PLX_SYNC_SPIN, PLX_SYNC_THREAD,
                     /* OpenMP (adapters/omp) */
                     PLX_SYNC_OMP_BARRIER, PLX_SYNC_OMP_CRITICAL, PLX_SYNC_OMP_LOCK,
                     PLX_SYNC_OMP_TASKWAIT, PLX_SYNC_OMP_ATOMIC, PLX_SYNC_OMP_ORDERED,
                     /* Java (adapters/jvm/monitors.c) */
                     PLX_SYNC_JAVA_MONITOR, PLX_SYNC_JAVA_WAIT };
struct plx_sync_entry { /* 64 bytes: the item of the "sync" live file (spec/format.md) */
    uint64_t address;
    uint32_t object;
    uint16_t used, depth;  /* depth: holds of a recursive lock (or readers) by this thread */
    uint64_t acquisitions, contended, wait, hold, releases;
    uint64_t hold_start;
};
_Static_assert(sizeof(struct plx_sync_entry) == PLX_LIVE_SYNC_ITEM_SIZE &&
               offsetof(struct plx_sync_entry, object) == PLX_LIVE_SYNC_OFF_OBJECT &&
               offsetof(struct plx_sync_entry, used) == PLX_LIVE_SYNC_OFF_USED &&
               offsetof(struct plx_sync_entry, acquisitions) == PLX_LIVE_SYNC_OFF_ACQUISITIONS &&
               offsetof(struct plx_sync_entry, releases) == PLX_LIVE_SYNC_OFF_RELEASES &&
               offsetof(struct plx_sync_entry, hold_start) == PLX_LIVE_SYNC_OFF_HOLD_START, "live sync item");
PLX_HIDDEN struct plx_sync_entry *plx_sync_entry(struct plx_thread *t, const void *object, int kind,
                                                 uintptr_t site);
PLX_HIDDEN void plx_sync_define(const void *object, int kind, uintptr_t site, int by_init);
/* An object that has a name of its own (a Java monitor: its object's class; a Java thread
 * object: its Thread name) instead of a site, defined unless known; plx_sync_known: whether
 * it is defined already (so the caller computes the name once). */
PLX_HIDDEN void plx_sync_define_named(const void *object, int kind, const char *name);
PLX_HIDDEN int plx_sync_known(const void *object);
/* In a fork()ed child: objects are defined again, in the child's own file, on first use. */
PLX_HIDDEN void plx_sync_objects_after_fork(void);
/* `holds`: 0 a wait (nothing held after), PLX_SYNC_HOLDS a lock held until its release,
 * PLX_SYNC_HOLDS_SHARED a read-write lock held for reading (its acquire event says so). */
enum { PLX_SYNC_HOLDS = 1, PLX_SYNC_HOLDS_SHARED = 2 };
PLX_HIDDEN void plx_sync_acquired(struct plx_thread *t, struct plx_sync_entry *e, int kind,
                                  uint64_t now, uint64_t waited, int contended, int holds);
/* A wait whose holder the caller knows (1 + its Thread index; 0 unknown), held by nobody after. */
PLX_HIDDEN void plx_sync_waited_for(struct plx_thread *t, struct plx_sync_entry *e, int kind,
                                    uint64_t waited, uint32_t holder);
PLX_HIDDEN void plx_sync_released(struct plx_thread *t, struct plx_sync_entry *e, int kind,
                                  uint64_t now, int holds);
PLX_HIDDEN void plx_sync_write(struct plx_thread *t);
PLX_HIDDEN void plx_sync_thread_end(struct plx_thread *t);
/* A runtime library that implements what the runtime measures by its own events (the OpenMP
 * runtime: barriers, critical sections, locks and its workers' joins, built on pthread calls)
 * named by an address in its code: pthread calls made from its code (plx_sync_internal_site)
 * are that library's implementation, not the program's synchronisation, and are not measured. */
PLX_HIDDEN void plx_sync_internal_library(const void *addr);
PLX_HIDDEN int plx_sync_internal_site(uintptr_t site);
/* ---- thread names from the kernel's (thread_name.c) ---- */
PLX_HIDDEN void plx_thread_comm_self(char out[16]);
PLX_HIDDEN void plx_thread_name_start(struct plx_thread *t, const char *inherited);
PLX_HIDDEN void plx_thread_name_end(struct plx_thread *t, int self);
PLX_HIDDEN void plx_sync_thread_joined(struct plx_thread *t, struct plx_sync_entry *e);
/* The object at `object` ended (a thread handle detached or joined): the next use of the
 * address defines a new object. */
PLX_HIDDEN void plx_sync_retire(const void *object);
PLX_HIDDEN void plx_trace_ext(struct plx_thread *t, unsigned subtype, const uint64_t *payload,
                              unsigned words);
PLX_HIDDEN void plx_trace_ext_at(struct plx_thread *t, uint64_t now, unsigned subtype,
                                 const uint64_t *payload, unsigned words);

/* ---- process lifetime (process.c) ------------------------------------------------------- */
PLX_HIDDEN void plx_process_start(void);
PLX_HIDDEN void plx_process_end(int reason, int status);
/* 0 in a vfork()ed child: it shares the parent's memory, whose state it must leave alone. */
PLX_HIDDEN int plx_process_is_ours(void);
/* What an adapter does when measuring starts (the constructor, or plx attach: `attached`), once
 * the experiment is written, and in a fork()ed child that measures. Adapters register before
 * the runtime starts (a constructor of priority 101; the runtime starts at 102): core calls no
 * adapter by name. */
struct plx_process_hooks {
    void (*started)(int attached);
    void (*finished)(void);
    void (*after_fork)(void);
};
PLX_HIDDEN void plx_process_hooks_add(const struct plx_process_hooks *h);
/* plx attach (adapters/probe/attach.c): measuring started in the running process from the
 * option table's NAME=VALUE `settings`. 0, -1 when already measuring, -2 on bad settings, -3
 * when nothing could start. */
PLX_HIDDEN int plx_process_attach(const char *settings);
PLX_HIDDEN extern uint64_t plx_cpu_ns(void);

/* ---- call-stack sampler (stack_sampler.c) ------------------------------------------------- */
/* Whether threads are sampled (PLX_SAMPLE and the unwinder loaded). */
PLX_HIDDEN int plx_stack_sampling(void);
PLX_HIDDEN void plx_stack_sampler_init(void);
PLX_HIDDEN void plx_stack_sampler_thread_start(struct plx_thread *t);
PLX_HIDDEN void plx_stack_sampler_note_region(struct plx_thread *t, uintptr_t sp);
PLX_HIDDEN void plx_stack_sampler_write(struct plx_thread *t);
PLX_HIDDEN void plx_stack_sampler_stop(void);
PLX_HIDDEN void plx_stack_sampler_after_fork(struct plx_thread *t);
/* Before a dlclose: every thread's frames sampled in a module not yet listed when they were
 * taken (a library's code run before its first instrumented call got through the hook) take
 * the module loaded there now, before it goes. */
PLX_HIDDEN void plx_stack_sampler_before_unload(void);
/* The JVM agent: the JVM made code at [start, start + size) (its code cache). */
PLX_HIDDEN void plx_stack_sampler_jvm_code(uintptr_t start, uintptr_t size);
/* SIGTRAP is the sampler's (PLX_SAMPLE_SIGNAL=trap): `act` (if any) becomes the program's
 * disposition, `old` (if any) gets the one it replaces; 0 when the sampler does not take SIGTRAP
 * (the caller sets the signal itself). */
PLX_HIDDEN int plx_stack_sampler_keep_trap(const struct sigaction *act, struct sigaction *old);
/* Whether the program replaced the sampling signal's handler by the raw rt_sigaction system
 * call (the C library's sigaction() is interposed): SIGTRAP taken moves every thread's samples
 * to the real-time signal, the real-time signal taken puts the sampler's handler back in front
 * of the program's. Called as each thread's sampler starts and as a thread flushes its trace;
 * a system call, never on the enter/exit path. */
PLX_HIDDEN void plx_stack_sampler_check(void);
/* Under the registry lock: fn on every measured thread alive. */
PLX_HIDDEN void plx_threads_each(void (*fn)(struct plx_thread *));
/* The Module record id of the module holding `addr` (recording modules loaded since), or
 * PLX_NO_INDEX. Not from a signal handler. */
PLX_HIDDEN uint32_t plx_module_of(uintptr_t addr);
PLX_HIDDEN uint32_t plx_module_known(uintptr_t addr);
/* Records the modules loaded since the last look; nothing when the calling thread is inside the
 * symbol table (the runtime's own dlclose). Not from a signal handler. */
PLX_HIDDEN void plx_modules_list(void);
/* The modules unloaded since the last call (dl_iterate_phdr's count of unloads changed), at most
 * `cap` of them into `ids`, marked gone: no address is theirs any more. 0 when none, or when the
 * calling thread is inside the symbol table (the runtime's own dlclose). */
PLX_HIDDEN uint32_t plx_symbols_unloaded(uint32_t *ids, uint32_t cap);
/* Async-signal-safe: whether module `id` is unloaded (and not loaded again where it was). */
PLX_HIDDEN int plx_module_gone(uint32_t id);

/* ---- CPU sampler (sampler.c) ------------------------------------------------------------ */
PLX_HIDDEN void plx_sampler_start(void);
/* At the process end (exit, exec, fatal signal): the final sample, the last batch written, no
 * sample after. Waits at most ~100 ms for a sample in progress, else drops the batch. */
PLX_HIDDEN void plx_sampler_stop(void);
PLX_HIDDEN void plx_sampler_after_fork(void);
/* pthread_create for the runtime's own threads (internal_thread.c): pthread.c's wrapper passes
 * them on without its measuring trampoline. */
PLX_HIDDEN int plx_create_internal_thread(pthread_t *th, void *(*fn)(void *), void *arg);
PLX_HIDDEN extern PLX_TLS int plx_creating_internal; /* set while it creates one */

/* ---- the runtime's own I/O ---------------------------------------------------------------- */
/* Raw system calls: the runtime's own reads, writes and closes never pass through the
 * write/read/close it interposes (adapters/socket.c), so they are never taken for the program's
 * I/O, whatever the descriptor. */
static inline ssize_t plx_sys_write(int fd, const void *p, size_t n)
{
    return (ssize_t)syscall(SYS_write, fd, p, n);
}
static inline ssize_t plx_sys_writev(int fd, const struct iovec *iov, int n)
{
    return (ssize_t)syscall(SYS_writev, fd, iov, n);
}
static inline ssize_t plx_sys_read(int fd, void *p, size_t n)
{
    return (ssize_t)syscall(SYS_read, fd, p, n);
}
static inline int plx_sys_close(int fd)
{
    return (int)syscall(SYS_close, fd);
}

/* ---- the runtime's own files (files.c) ---------------------------------------------------- */
/* A new file under `path` (open flags | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode 0644):
 * fails (EEXIST, ELOOP) when the name exists, a symlink included. */
PLX_HIDDEN int plx_file_create(const char *path, int flags);
/* `path` opened again (O_NOFOLLOW) only if it is still the file (dev, ino); else -1, ESTALE. */
PLX_HIDDEN int plx_file_reopen(const char *path, int flags, dev_t dev, ino_t ino);
/* Room for the first `bytes` of the file taken on the disk (the file grows to them): 0, or the
 * error (ENOSPC, EFBIG...). */
PLX_HIDDEN int plx_file_reserve(int fd, off_t bytes);
/* Around a write of the runtime's own: SIGXFSZ held, and the one the write raised taken away. */
PLX_HIDDEN void plx_fsize_hold(sigset_t *saved, int *was_pending);
PLX_HIDDEN void plx_fsize_release(const sigset_t *saved, int was_pending);
/* mkdir(path, 0755), or the directory already there if it is one of this user's that nobody
 * else can write (not a symlink); -1 with errno (ELOOP, ENOTDIR, EPERM...) otherwise. */
PLX_HIDDEN int plx_dir_make_own(const char *path);
/* The whole of the regular file `path` (at most `cap` bytes), NUL-terminated, malloc'ed, in
 * *out; -1 with errno (EINVAL: not a regular file; EFBIG: larger than cap) otherwise. Opened
 * O_NONBLOCK: a FIFO never blocks. plx_read_error names the error for a warning. */
PLX_HIDDEN int plx_read_regular(const char *path, size_t cap, char **out, size_t *len);
#define PLX_FILTER_MAX_BYTES (16u << 20)        /* a filter file (PLX_FILTER) */
#define PLX_SOURCE_FILES_MAX_BYTES (1u << 30)  /* the source-file list (PLX_SOURCE_FILES) */
PLX_HIDDEN const char *plx_read_error(int err);

/* ---- writer (writer.c) ------------------------------------------------------------------ */
PLX_HIDDEN int plx_writer_open(void);
/* The process's end: the room reserved beyond process.plx's end and not written freed. */
PLX_HIDDEN void plx_writer_trim(void);
PLX_HIDDEN void plx_writer_close(void);
/* The process end: from now on a record process.plx has no room for goes into the room kept
 * on the disk for the last records (`.plx-reserve`). */
PLX_HIDDEN void plx_writer_open_end_room(void);
/* That room cut to what it took and named end.plx (end.N.plx), or removed if it took nothing. */
PLX_HIDDEN void plx_writer_close_end_room(void);
/* Records already framed (headers included), appended to process.plx with one writev. */
PLX_HIDDEN void plx_write_framed(const void *bytes, size_t len);
PLX_HIDDEN extern char plx_process_dir[4600];

/* Records are built with the encoders of records.h (generated from spec/records.toml) into a
 * struct plx_rec: plx_rec_init gives it a buffer that grows with mmap (usable from signal
 * handlers); plx_rec_write appends every record it holds with one write and resets it. */
PLX_HIDDEN void plx_rec_init(struct plx_rec *r);
PLX_HIDDEN int plx_rec_write(struct plx_rec *r, int trace_file);
/* The same, the last record's repeated part (`bulk` bytes, e.g. trace events) from `bulk`. */
PLX_HIDDEN int plx_rec_write_bulk(struct plx_rec *r, int trace_file, const void *bulk);
/* plx_rec_write and _bulk return 0, or -1 when the write failed: counted per file (0
 * process.plx, 1 trace.plx) as writes, their bytes and the first errno. */
PLX_HIDDEN uint64_t plx_writer_failures(int trace_file, uint64_t *bytes, int *err);

/* ---- symbols (symbols.c) ---------------------------------------------------------------- */
struct plx_symbol {
    const char *name;   /* demangled where possible; owned by the symbol table */
    uint32_t module_id;
    uint64_t offset;    /* address − module base */
    const char *file;   /* source file, when wanted (plx_symbols_want_files) and known */
    unsigned line;
    int deleting_dtor;  /* an Itanium D0 destructor (names.c) */
};
PLX_HIDDEN extern int plx_symbols_want_files; /* set when the filter has file rules */
PLX_HIDDEN int plx_symbol_lookup(uintptr_t addr, struct plx_symbol *out);
/* The functions whose code holds `pc` by the debug information, outermost first: the function
 * and the functions inlined into it there, each by its DWARF name (the linkage name, else the
 * name; the same for a function's inlined and out-of-line instances). Returns their number, or
 * -1 when unknown (no libdw, no debug information). The names are kept for the process's life.
 * inline_scopes.c. */
PLX_HIDDEN int plx_inline_scopes(uintptr_t pc, const char *const **names);
PLX_HIDDEN void plx_symbols_init(void);
/* A function of a module's symbol table (probe selection). `name` as in the table (mangled). */
struct plx_function_symbol {
    const char *module; /* file of the executable or library */
    uint32_t module_id; /* 0 = the executable */
    uintptr_t address;  /* runtime address */
    uint64_t size;
    const char *name;
    int unsized; /* an IFUNC's implementation with no symbol of its own: size unknown */
};
/* Calls `fn` for every function symbol of every loaded module, under the symbol lock: `fn`
 * must not look symbols up. */
PLX_HIDDEN void plx_symbols_each_function(void (*fn)(const struct plx_function_symbol *, void *),
                                          void *arg);
PLX_HIDDEN void plx_modules_rewrite(void);

/* ---- filter (filter.c) ------------------------------------------------------------------ */
PLX_HIDDEN int plx_filter_load(const char *path);
PLX_HIDDEN const char *plx_env_preload(void); /* LD_PRELOAD, NULL: unset (config.c) */
PLX_HIDDEN const char *plx_filter_text(void); /* the file as loaded, whole; NULL: none */
PLX_HIDDEN int plx_filter_excludes(const char *name, const char *file);
PLX_HIDDEN int plx_filter_cputime(const char *name, const char *file);
PLX_HIDDEN int plx_filter_class(const char *internal_name);
PLX_HIDDEN void plx_cpu_exit(struct plx_thread *t, struct plx_frame *f);
/* Re-reads only the `counters` rules of the filter file (a reload; counters.c). */
PLX_HIDDEN int plx_filter_reload_counters(const char *path);
/* The exit of a frame whose `cpu` is nonzero: counters first, then CPU time. */
PLX_HIDDEN void plx_frame_exit_slow(struct plx_thread *t, struct plx_frame *f);
/* The entry of a function whose slot has PLX_REGION_CPU or PLX_REGION_COUNTERS. */
PLX_HIDDEN void plx_frame_enter_slow(struct plx_thread *t, uint32_t value);
PLX_HIDDEN int plx_glob_match(const char *pat, const char *s);
/* real_sleep.c: the real nanosleep and clock_nanosleep, for the runtime's own waits (the
 * exported ones are the wait regions of adapters/wait.c) */
PLX_HIDDEN int plx_real_nanosleep(const struct timespec *req, struct timespec *rem);
PLX_HIDDEN int plx_real_clock_nanosleep(clockid_t c, int flags, const struct timespec *req,
                                        struct timespec *rem);
/* names.c: a demangled name without the return type of a function template (what globs match) */
#include "names.h"

/* ---- patch.c: removing the hook calls of excluded functions ----------------------------- */
PLX_HIDDEN void plx_patch_hook_call(uintptr_t ret, uintptr_t hook);
PLX_HIDDEN uint64_t plx_patched_sites(void);
/* Does the code at `target` (a PLT entry) jump through a GOT slot holding `hook`? */
PLX_HIDDEN int plx_patch_plt_reaches(uintptr_t target, uintptr_t hook);

/* Re-reads the filter file's counters rules (the reload signal, or plx ctl reload). */
PLX_HIDDEN void plx_counters_reload(void);
/* Incremented by each plx attach: a thread whose state belongs to an earlier one starts anew. */
PLX_HIDDEN extern uint32_t plx_attach_generation;
/* ProcessEnd.reason of an experiment ended by plx detach, the process still running. */
#define PLX_END_DETACHED 4
PLX_HIDDEN void plx_region_mark(uintptr_t addr, uint32_t bits);

/* ---- live files (live.c) ---------------------------------------------------------------- */
struct plx_live_header { /* 64 bytes, as in spec/format.md "Live files" */
    char magic[4];       /* "PLXL" */
    uint16_t version, item_size;
    uint32_t thread;
    uint32_t count;      /* items in use; an item is written before count covers it */
    uint32_t capacity;
    char kind[16];       /* "nodes", "mpi", ... */
    uint8_t reserved[28];
};
_Static_assert(sizeof(struct plx_live_header) == PLX_LIVE_HEADER_SIZE &&
               offsetof(struct plx_live_header, count) == PLX_LIVE_HEADER_OFF_COUNT &&
               offsetof(struct plx_live_header, kind) == PLX_LIVE_HEADER_OFF_KIND, "live header");
/* `live.<thread>.<kind>` mapped, zeroed: the file backs all of it where the disk has room, else
 * it is memory only (said once on stderr); NULL only when memory fails. */
PLX_HIDDEN void *plx_live_map(const char *kind, uint32_t thread, uint16_t item_size,
                              uint32_t capacity, struct plx_live_header **header);
PLX_HIDDEN void plx_live_unmap(struct plx_live_header *header);
PLX_HIDDEN void plx_live_remove(const char *kind, uint32_t thread);
/* A pooled live file for `thread` (kinds "nodes", "trace", "samples"), its file backing at least the first
 * `reserve` items where the disk has room; *room is how many items the file backs (capacity
 * when it is memory only). Items past *room are memory: grow before using them. */
PLX_HIDDEN void *plx_live_take(const char *kind, uint32_t thread, uint16_t item_size,
                               uint32_t capacity, uint32_t reserve,
                               struct plx_live_header **header, uint32_t *room);
#define PLX_LIVE_NODES_FIRST 1024u /* nodes a thread's live file backs at first; doubled as used */
/* The file backs `items` items now (*room updated); -1 when the disk or limit has no room. */
PLX_HIDDEN int plx_live_grow(const char *kind, struct plx_live_header *header, uint32_t items,
                             uint32_t *room);
PLX_HIDDEN int plx_live_extend(struct plx_live_header *header, int fd, size_t *bytes, uint32_t items);
PLX_HIDDEN uint32_t plx_live_items_in(const struct plx_live_header *header, size_t bytes);
PLX_HIDDEN void plx_live_disown(const char *kind, struct plx_live_header *header);
PLX_HIDDEN void plx_live_give(const char *kind, struct plx_live_header *header);
/* A pooled slot whose file stays open, grown from a signal handler (the call-stack samples) */
PLX_HIDDEN void *plx_live_take_open(const char *kind, uint32_t thread, uint16_t item_size,
                                    uint32_t capacity, uint32_t reserve,
                                    struct plx_live_header **header, int *fd, size_t *bytes);
PLX_HIDDEN void plx_live_give_open(const char *kind, struct plx_live_header *header, int fd,
                                   size_t bytes);
PLX_HIDDEN void plx_live_pool_remove(void);
PLX_HIDDEN void plx_live_pool_after_fork(void);

/* ---- arena (arena.c): memory kept for the whole run ------------------------------------ */
PLX_HIDDEN void *plx_arena_alloc(size_t n);
PLX_HIDDEN char *plx_arena_strdup(const char *s);

/* ---- diagnostics ------------------------------------------------------------------------ */
PLX_HIDDEN void plx_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* PLX_INTERNAL_H */
