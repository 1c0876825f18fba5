/* Call-stack sampling (PLX_SAMPLE=HZ): each measured thread opens a perf_event software
 * cpu-clock counter on itself whose overflow, every 1/HZ s of the thread's CPU time, sends it
 * a real-time signal (SAMPLE_SIGNAL); the handler unwinds the interrupted stack with libunwind (from .eh_frame, no frame
 * pointers needed) down to the innermost instrumented call open and adds the frames to the
 * thread's sample tree under that call's profile node (t->cur). The tree is written as one
 * SampleTree record with the thread's profile. While the thread runs the tree's frames and totals
 * live in a `live.<slot>.samples` file of the process's pool (a thread's end gives it back to the
 * next thread), mapped shared, so that a SIGKILL leaves them for the reader (spec/format.md
 * "Live files").
 *
 * Why perf_event and not a POSIX CPU-clock timer: a timer_create(CLOCK_THREAD_CPUTIME_ID) timer
 * expires only at the kernel's tick here (66 signals per CPU second asked 1000, the rest as
 * overruns), a software perf_event is an hrtimer (975 per CPU second); docs/sampling.md.
 *
 * Invariants: a thread's struct plx_samples is written only by that thread — by its signal
 * handler, or by the thread itself when it writes its profile, after `on` is cleared and its
 * event closed. The process end (another thread) clears every `on` first (plx_stack_sampler_stop)
 * and waits while a handler is `busy`, so that no handler runs on a tree being written. Nothing
 * in the handler allocates, locks or calls into the runtime: libunwind's per-thread cache, the
 * preallocated tree; its only system calls are the live file's growth (plx_live_extend, a few
 * times per thread as the tree doubles). libunwind is loaded with dlopen(RTLD_LOCAL) so that its _Unwind_* and
 * backtrace() never replace the program's. The enter/exit hot path is untouched: the handler
 * only reads t->cur, t->depth and the frames' stack pointers. With a trace each sample is also
 * stamped (time, frame) in a buffer of the sampler's own, which the handler writes as a
 * SampleStamps record when full (a write(), async-signal-safe): the trace buffer is never
 * written from the handler, since the signal may interrupt plx_trace_put between its store and
 * its pointer's increment, and guarding that would cost the hot path. */
#include "plx_internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#ifdef PLX_HAVE_LIBUNWIND
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#endif

/* Not SIGPROF: launchers and profilers take it for themselves (Open MPI's mpirun installs a
 * handler that forwards it to the job). A real-time signal also queues, where a second SIGPROF
 * pending would merge with the first. glibc keeps SIGRTMIN-3..SIGRTMIN-1 for itself; programs
 * that use real-time signals usually take the first ones. */
#define SAMPLE_SIGNAL (SIGRTMIN + 6)
/* Or (PLX_SAMPLE_SIGNAL=trap, the default where the kernel has it) SIGTRAP raised by the event
 * itself (perf_event_attr.sigtrap): the kernel queues it as task work on the interrupted
 * thread's way back to user space, where the file's signal first takes an irq_work
 * self-interrupt (a VM exit here: 26 µs against 15 µs per sample at 10 kHz, bench/sampling.sh).
 * Its siginfo carries the event's sig_data (after si_addr, the kernel's
 * asm-generic/siginfo.h _sigfault._perf._data, which glibc's siginfo_t does not name); any
 * other SIGTRAP goes to the disposition the program had. */
#define TRAP_DATA 0x6c706d6173786c70ull /* "plxsampl" */
#define TRAP_PERF_CODE 6               /* si_code TRAP_PERF */
#define SI_PERF_DATA(si) (*(const uint64_t *)((const char *)&(si)->si_addr + sizeof(void *)))
#define MAX_FRAMES 128 /* deeper stacks keep their innermost frames */
/* the module of a frame that is an instrumented region open (trace mode), its id the address */
#define REGION_MODULE 0xFFFFFFFEu
#define LIVE_FIRST 1024u /* frames the live file backs at first; doubled as the tree grows */
/* Trace mode: the stamps (time, frame) a thread keeps before its handler writes them as one
 * SampleStamps record (8 KiB, about a second of CPU time at 1 kHz) */
#define STAMPS 1024u
#define STAMP_DELTA_MAX ((1ull << 40) - 1)
#define STAMP_FRAME_SHIFT 40
#define STR2(x) #x
#define STR(x) STR2(x)

/* a SampleTree frame, as a `samples` live item */
struct frame {
    uint32_t parent;  /* frame index, or PLX_NO_INDEX for the outermost frame kept */
    uint32_t node;    /* outermost frames: ThreadProfile node index (t->cur), else 0 */
    uint32_t module;  /* Module record known when first sampled, REGION_MODULE, PLX_NO_INDEX */
    uint32_t pad;
    uint64_t address; /* return address, interrupted pc + 1, or (REGION_MODULE) a region id */
    uint64_t samples; /* samples whose innermost frame this is */
};
_Static_assert(sizeof(struct frame) == PLX_LIVE_SAMPLES_ITEM_SIZE &&
               offsetof(struct frame, module) == PLX_LIVE_SAMPLES_OFF_MODULE &&
               offsetof(struct frame, address) == PLX_LIVE_SAMPLES_OFF_ADDRESS &&
               offsetof(struct frame, samples) == PLX_LIVE_SAMPLES_OFF_SAMPLES, "live samples item");

/* item 0 of the live file: the SampleTree's totals */
struct head {
    uint64_t period_ns, taken, lost_full, lost_loader;
};
_Static_assert(sizeof(struct head) == PLX_LIVE_SAMPLES_HEAD_ITEM_SIZE &&
               offsetof(struct head, taken) == PLX_LIVE_SAMPLES_HEAD_OFF_SAMPLES &&
               offsetof(struct head, lost_loader) == PLX_LIVE_SAMPLES_HEAD_OFF_LOST_LOADER,
               "live samples head");

struct cut {
    uintptr_t key, sp; /* a user region's key and its caller's stack pointer at begin */
};

struct plx_samples {
    _Atomic int on;   /* samples are taken */
    _Atomic int busy; /* a handler is running */
    int fd;           /* the perf event */
    uint32_t n, cap, mask;
    uint32_t kept;    /* frames the live file backs (all when the tree is memory only) */
    int live_fd;      /* the live file, kept open to grow it; -1: none */
    int no_room;      /* the disk had no room to grow it: no more tries */
    size_t live_bytes;
    struct plx_live_header *live; /* head and frames, in the live file where it could be made */
    struct head *head;
    struct frame *frames;
    uint32_t *slots; /* hash of (parent, node, address) → frame index + 1; 2 × cap */
    struct cut *cuts; /* per depth, for frames with no stack pointer */
    size_t bytes;     /* this struct, slots, cuts, stamps and their record's buffer */
    /* Trace mode only (stamps non-NULL): each sample's time and frame, in a buffer of this
     * struct's own — never the trace buffer, whose writer (plx_trace_put) the signal may have
     * interrupted between its store and its pointer's increment. */
    uint64_t *stamps;
    uint32_t nstamps;
    uint64_t stamp_base, stamp_last;
    unsigned char *stamp_rec; /* room for one SampleStamps record of STAMPS stamps */
};
#define STAMP_REC_BYTES (PLX_RECORD_HEADER_SIZE + 16 + STAMPS * 8)

static int enabled;         /* PLX_SAMPLE > 0 and the unwinder loaded */
/* ThreadSanitizer runs the handler of a synchronous signal (SIGTRAP) at once, even inside its
 * own runtime, and defers an asynchronous one to a safe point: its builds take rt */
#ifdef PLX_SANITIZE_THREAD
#define TRAP_ALLOWED 0
#else
#define TRAP_ALLOWED 1
#endif
static _Atomic int use_trap; /* samples come as SIGTRAP (sigtrap events), else SAMPLE_SIGNAL */
static struct sigaction prev_trap; /* the program's SIGTRAP disposition, for the other traps */
/* the program's own disposition of SAMPLE_SIGNAL, where it replaced ours by the raw system call
 * (the Go runtime takes every signal): the signals that are not samples go to it */
static struct sigaction prev_rt;
static _Atomic int switching;      /* the sampling signal is being checked or changed */
static _Atomic int trap_kept;      /* the handler is installed on SIGTRAP: adapters/sigtrap.c */
static _Atomic int stopped; /* the process end has begun: no sample any more */
static uint64_t period_ns;
/* The JVM's code cache as far as the JVM agent has seen it (the bounds of every piece of code
 * the JVM made: compiled methods, the interpreter, stubs), 0-0 when none: a sample there is
 * not unwound (libunwind has no unwind information for that code). */
static _Atomic uintptr_t jvm_lo, jvm_hi;
static uintptr_t loader_lo, loader_hi; /* the dynamic loader's code */

#ifdef PLX_HAVE_LIBUNWIND
static int (*u_init)(unw_cursor_t *, unw_context_t *, int);
static int (*u_step)(unw_cursor_t *);
static int (*u_reg)(unw_cursor_t *, unw_regnum_t, unw_word_t *);
static int (*u_backtrace)(void **, int);
#endif

int plx_stack_sampling(void)
{
    return enabled;
}

static int find_loader(struct dl_phdr_info *di, size_t size, void *data)
{
    (void)size;
    (void)data;
    if (!di->dlpi_name || !strstr(di->dlpi_name, "/ld-linux"))
        return 0;
    for (int i = 0; i < di->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &di->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
            loader_lo = di->dlpi_addr + ph->p_vaddr;
            loader_hi = loader_lo + ph->p_memsz;
        }
    }
    return 1;
}

static int load_unwinder(void)
{
#ifdef PLX_HAVE_LIBUNWIND
    void *h = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        plx_warn("call-stack sampling off: cannot load libunwind.so.8 (%s)", dlerror());
        return -1;
    }
    u_init = (int (*)(unw_cursor_t *, unw_context_t *, int))dlsym(h, STR(unw_init_local2));
    u_step = (int (*)(unw_cursor_t *))dlsym(h, STR(unw_step));
    u_reg = (int (*)(unw_cursor_t *, unw_regnum_t, unw_word_t *))dlsym(h, STR(unw_get_reg));
#ifndef PLX_SANITIZE_THREAD
    u_backtrace = (int (*)(void **, int))dlsym(h, "unw_backtrace"); /* may lack: the step path */
#else
    /* its per-thread cache's destructor locks a mutex at the thread's exit, after
     * ThreadSanitizer has finished the thread: its interceptor crashes. The step path only. */
    u_backtrace = NULL;
#endif
    int (*caching)(unw_addr_space_t, unw_caching_policy_t) =
        (int (*)(unw_addr_space_t, unw_caching_policy_t))dlsym(h, STR(unw_set_caching_policy));
    unw_addr_space_t *space = (unw_addr_space_t *)dlsym(h, STR(unw_local_addr_space));
    if (!u_init || !u_step || !u_reg || !caching || !space) {
        plx_warn("call-stack sampling off: libunwind.so.8 lacks unw_init_local2");
        return -1;
    }
    /* a per-thread cache takes no lock in the handler; a libunwind built without thread-local
     * storage (Debian's 1.6: no HAVE___THREAD) keeps its global cache instead, whose lock
     * blocks every signal while held (lock_acquire's sigprocmask), so a handler never
     * interrupts its own thread's holder: it waits only for another thread's unwind */
    caching(*space, UNW_CACHE_PER_THREAD);
    return 0;
#else
    plx_warn("call-stack sampling off: libplx was built without libunwind (libunwind-dev)");
    return -1;
#endif
}

static uint32_t hash(uint32_t parent, uint32_t node, uint64_t address, int region)
{
    uint64_t h = (address ^ ((uint64_t)region << 63) ^ ((uint64_t)parent << 32 | node)) *
                 0x9E3779B97F4A7C15ull;
    return (uint32_t)(h >> 32);
}

/* Frame n is new: the live file must back it before count covers it. The file doubles; where
 * the disk has no more room the frames past it stay in memory and count stops (the reader
 * finds fewer samples in the frames than the head's total). */
static void publish(struct plx_samples *s, uint32_t n)
{
    if (n >= s->kept && !s->no_room) {
        uint32_t want = s->kept * 2 > s->cap ? s->cap : s->kept * 2;
        if (plx_live_extend(s->live, s->live_fd, &s->live_bytes, want + 1) == 0)
            s->kept = plx_live_items_in(s->live, s->live_bytes) - 1;
        else
            s->no_room = 1;
    }
    if (n < s->kept)
        __atomic_store_n(&s->live->count, n + 2, __ATOMIC_RELEASE); /* the head and frames 0..n */
}

/* The frame (parent, node, address), added if new; PLX_NO_INDEX when the tree is full. `region`:
 * the frame is a region open (trace mode), `address` its id. */
static uint32_t frame_of(struct plx_samples *s, uint32_t parent, uint32_t node, uint64_t address,
                         int region)
{
    for (uint32_t i = hash(parent, node, address, region) & s->mask;; i = (i + 1) & s->mask) {
        uint32_t f = s->slots[i];
        if (f == 0) {
            if (s->n >= s->cap)
                return PLX_NO_INDEX;
            uint32_t module = region ? REGION_MODULE : address ? plx_module_known(address - 1) : PLX_NO_INDEX;
            s->frames[s->n] = (struct frame){parent, node, module, 0, address, 0};
            publish(s, s->n);
            uint32_t added = s->n + 1; /* the frame published whole (name_frames reads it) */
            __atomic_store_n(&s->n, added, __ATOMIC_RELEASE);
            s->slots[i] = added;
            return added - 1;
        }
        struct frame *fr = &s->frames[f - 1];
        /* a frame in an unloaded library stays its own: code loaded at its address later gets
         * frames of its own */
        uint32_t module = __atomic_load_n(&fr->module, __ATOMIC_RELAXED); /* name_frames sets it */
        if (fr->address == address && fr->parent == parent && fr->node == node &&
            (module == REGION_MODULE) == region &&
            (region || module == PLX_NO_INDEX || !plx_module_gone(module)))
            return f - 1;
    }
}

/* The stack pointer below which frames are the sample's own (called from the innermost
 * instrumented call): a compiler hook's frame holds its function's, a user region the one its
 * begin noted; 0 when no open call has one (every frame is kept). */
static uintptr_t cut_of(const struct plx_thread *t, const struct plx_samples *s)
{
    uint32_t d = t->depth < t->max_depth ? t->depth : t->max_depth;
    for (uint32_t i = d; i-- > 0;) {
        const struct plx_frame *f = &t->stack[i];
        if (f->sp != PLX_SP_NONE)
            return f->sp;
        if (s->cuts[i].key == f->key && s->cuts[i].sp)
            return s->cuts[i].sp;
    }
    return 0;
}

#ifdef PLX_HAVE_LIBUNWIND
/* The interrupted stack, innermost first, the frames whose CFA is at or below `cut`. */
static int unwind(ucontext_t *uc, uintptr_t cut, uint64_t *out)
{
    unw_cursor_t c;
    unw_word_t ip, sp;
    if (u_init(&c, (unw_context_t *)uc, UNW_INIT_SIGNAL_FRAME) < 0 || u_reg(&c, UNW_REG_IP, &ip) < 0)
        return 0;
    int n = 0;
    out[n++] = ip + 1;
    while (n < MAX_FRAMES && u_step(&c) > 0) {
        /* the caller's stack pointer is the CFA of the frame just left */
        if (u_reg(&c, UNW_REG_SP, &sp) < 0)
            break;
        if (cut && sp > cut) {
            n--; /* that frame is the instrumented call itself, or outside it */
            break;
        }
        if (u_reg(&c, UNW_REG_IP, &ip) < 0 || ip == 0)
            break;
        out[n++] = ip;
    }
    return n;
}

/* The whole interrupted stack from libunwind's fast trace (unw_backtrace: on x86_64 a per-thread
 * table of each code address's frame layout; once the addresses are in it, no lock and no
 * system call, where each unw_step takes the global cache's lock and masks signals twice). It
 * starts in this handler: the interrupted frames follow the one at the interrupted pc; callers
 * are their return addresses. -1 when that frame is not among the first HANDLER_FRAMES (the step
 * path then). */
#define HANDLER_FRAMES 8
static int unwind_fast(const ucontext_t *uc, uint64_t *out)
{
    void *b[MAX_FRAMES + HANDLER_FRAMES];
    int n = u_backtrace(b, MAX_FRAMES + HANDLER_FRAMES);
    uintptr_t pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
    for (int i = 0; i < n && i < HANDLER_FRAMES; i++) {
        if ((uintptr_t)b[i] != pc)
            continue;
        int k = 0;
        out[k++] = pc + 1;
        for (; i + k < n && k < MAX_FRAMES; k++)
            out[k] = (uint64_t)(uintptr_t)b[i + k];
        return k;
    }
    return -1;
}
#endif

/* The stamps kept so far as one SampleStamps record (process.plx), from the handler or from
 * the thread's end: a record built in its own buffer (no allocation) and one write; a write
 * that fails is counted as the writer's failures. */
static void write_stamps(const struct plx_thread *t, struct plx_samples *s)
{
    if (!s->nstamps)
        return;
    struct plx_rec rec;
    plx_rec_over(&rec, s->stamp_rec, 0, STAMP_REC_BYTES);
    plx_enc_sample_stamps(&rec, t->index, s->stamp_base, s->nstamps, s->stamps);
    plx_rec_end(&rec);
    plx_write_framed(s->stamp_rec, rec.len);
    s->nstamps = 0;
}

/* Sample `now` counted in frame f: its stamp, the buffer written first when full or when the
 * time since the last stamp does not fit. */
static void stamp(const struct plx_thread *t, struct plx_samples *s, uint32_t f, uint64_t now)
{
    if ((int64_t)(now - s->stamp_last) < 0 && s->nstamps)
        now = s->stamp_last; /* a core whose counter lags: the stamps stay in order */
    if (s->nstamps == STAMPS || (s->nstamps && now - s->stamp_last > STAMP_DELTA_MAX))
        write_stamps(t, s);
    if (!s->nstamps)
        s->stamp_base = s->stamp_last = now;
    s->stamps[s->nstamps++] = (uint64_t)f << STAMP_FRAME_SHIFT | (now - s->stamp_last);
    s->stamp_last = now;
}

void plx_stack_sampler_jvm_code(uintptr_t start, uintptr_t size)
{
    uintptr_t lo = atomic_load(&jvm_lo), hi = atomic_load(&jvm_hi);
    while ((lo == 0 || start < lo) && !atomic_compare_exchange_weak(&jvm_lo, &lo, start))
        ;
    while (start + size > hi && !atomic_compare_exchange_weak(&jvm_hi, &hi, start + size))
        ;
}

static void take(struct plx_thread *t, struct plx_samples *s, ucontext_t *uc)
{
    uint64_t now = s->stamps ? plx_ticks() : 0;
    uint64_t pc = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
    if ((pc >= loader_lo && pc < loader_hi) || plx_in_phdr) {
        s->head->lost_loader++; /* may hold the loader's lock, which the unwinder's lookups take */
        return;
    }
    uint64_t st[MAX_FRAMES];
    int n = 0;
    if (pc >= atomic_load_explicit(&jvm_lo, memory_order_relaxed) &&
        pc < atomic_load_explicit(&jvm_hi, memory_order_relaxed)) {
        /* in the JVM's code: its frames and the frames above them have no unwind information
         * (libunwind guesses them by the frame pointer, each new address costing it a search
         * of every module and system calls): the interrupted code's frame alone */
        st[n++] = pc + 1;
    } else {
#ifdef PLX_HAVE_LIBUNWIND
        uintptr_t cut = cut_of(t, s);
        /* with a cut the frames' stack pointers are needed: only the step path has them */
        n = !cut && u_backtrace ? unwind_fast(uc, st) : -1;
        if (n < 0)
            n = unwind(uc, cut, st);
#endif
    }
    uint32_t node = t->cur ? t->cur - 1 : PLX_NO_INDEX; /* as numbered in ThreadProfile */
    uint32_t f = PLX_NO_INDEX;
    int full = 0;
    if (t->buf) {
        /* trace mode keeps no tree (t->cur stays the root): the regions open are the sample's
         * outermost frames, marked, and the reader finds their node in the profile it rebuilds
         * from the trace; throttled frames (node PLX_NO_INDEX) are not in it */
        node = PLX_NO_INDEX;
        uint32_t d = t->depth < t->max_depth ? t->depth : t->max_depth;
        for (uint32_t i = 0; i < d && !full; i++) {
            if (t->stack[i].node == PLX_NO_INDEX)
                continue;
            f = frame_of(s, f, PLX_NO_INDEX, t->stack[i].region, 1);
            full = f == PLX_NO_INDEX;
        }
    }
    if (full) {
    } else if (n == 0 && f != PLX_NO_INDEX) { /* in the innermost region's own code */
    } else if (n == 0) { /* in the instrumented call's own code: the node's own sample */
        f = frame_of(s, PLX_NO_INDEX, node, 0, 0);
    } else {
        for (int k = n - 1; k >= 0; k--) {
            f = frame_of(s, f, f == PLX_NO_INDEX ? node : 0, st[k], 0);
            if (f == PLX_NO_INDEX)
                break;
        }
    }
    if (f == PLX_NO_INDEX) {
        s->head->lost_full++;
        return;
    }
    s->frames[f].samples++;
    s->head->taken++; /* after its frame: a kill between leaves the frames one ahead, never behind */
    if (s->stamps)
        stamp(t, s, f, now);
}

extern int __sigaction(int sig, const struct sigaction *act, struct sigaction *old);

/* A signal no event of ours raised (a breakpoint, the program's own): as without the sampler. */
static void pass_on(const struct sigaction *prev, int sig, siginfo_t *si, void *uc)
{
    if (prev->sa_flags & SA_SIGINFO) {
        prev->sa_sigaction(sig, si, uc);
    } else if (prev->sa_handler == SIG_DFL) {
        /* its default action once this handler returns (the signal is blocked until then) */
        __sigaction(sig, prev, NULL); /* the C library's: sigaction() keeps ours */
        raise(sig);
    } else if (prev->sa_handler != SIG_IGN) {
        prev->sa_handler(sig);
    }
}

static int is_sample(int sig, const siginfo_t *si, const struct plx_samples *s)
{
    if (sig == SIGTRAP)
        return si->si_code == TRAP_PERF_CODE && SI_PERF_DATA(si) == TRAP_DATA;
    return s && si->si_code == POLL_IN && si->si_fd == s->fd;
}

static void on_signal(int sig, siginfo_t *si, void *ucv)
{
    int saved = errno;
    struct plx_thread *t = plx_self;
    struct plx_samples *s = t ? t->samples : NULL;
    if (!is_sample(sig, si, s)) {
        if (sig == SIGTRAP)
            pass_on(&prev_trap, sig, si, ucv);
        else if (prev_rt.sa_handler != SIG_DFL) /* none: a stray sample of a closed event */
            pass_on(&prev_rt, sig, si, ucv);
        errno = saved;
        return;
    }
    if (s && atomic_load_explicit(&s->on, memory_order_acquire)) {
        atomic_store(&s->busy, 1); /* before `stopped` is read: plx_stack_sampler_stop waits */
        /* libunwind takes its own mutexes: the interposed pthread_mutex_lock must pass straight
         * through, never record into the thread's state the signal interrupted */
        t->guard++;
        if (!atomic_load(&stopped))
            take(t, s, ucv);
        t->guard--;
        atomic_store_explicit(&s->busy, 0, memory_order_release);
    }
    errno = saved;
}

static int trap_events_work(void);
static int traced(void);
static int go_program(void);
static int open_event(pid_t tid);

void plx_stack_sampler_init(void)
{
    enabled = 0;
    if (!plx_cfg.sample_hz || load_unwinder() != 0)
        return;
    period_ns = 1000000000ull / plx_cfg.sample_hz;
    dl_iterate_phdr(find_loader, NULL);
    use_trap = TRAP_ALLOWED && plx_cfg.sample_signal != 1 && !traced() && trap_events_work();
    if (use_trap && go_program()) {
        /* its runtime takes SIGTRAP by the raw system call, and a trap it did not expect kills
         * the program: the real-time signal, which the Go runtime drops until the first thread
         * check gives it back to the sampler (plx_stack_sampler_check) */
        use_trap = 0;
        struct plx_rec rec;
        plx_rec_init(&rec);
        plx_enc_sample_signal(&rec, 2, 0, (uint32_t)SAMPLE_SIGNAL, plx_ticks());
        plx_rec_write(&rec, 0);
    }
    int sig = use_trap ? SIGTRAP : SAMPLE_SIGNAL;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigfillset(&sa.sa_mask); /* nothing else interrupts a sample */
    if (sigaction(sig, &sa, use_trap ? &prev_trap : NULL) != 0) {
        plx_warn("call-stack sampling off: cannot handle signal %d: %s", sig, strerror(errno));
        return;
    }
    atomic_store(&stopped, 0);
    enabled = 1;
    atomic_store(&trap_kept, use_trap);
}

/* Whether the executable is a Go program: its `.go.buildinfo` section (every Go linker since
 * 1.13 writes it). */
static int go_program(void)
{
    int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ElfW(Ehdr) eh;
    int go = 0;
    if (pread(fd, &eh, sizeof eh, 0) == (ssize_t)sizeof eh && memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 &&
        eh.e_shentsize == sizeof(ElfW(Shdr)) && eh.e_shstrndx < eh.e_shnum && eh.e_shnum <= 256) {
        ElfW(Shdr) sh[256], *names = &sh[eh.e_shstrndx];
        size_t bytes = (size_t)eh.e_shnum * sizeof *sh;
        char str[4096];
        if (pread(fd, sh, bytes, (off_t)eh.e_shoff) == (ssize_t)bytes) {
            size_t n = names->sh_size < sizeof str - 1 ? names->sh_size : sizeof str - 1;
            ssize_t got = pread(fd, str, n, (off_t)names->sh_offset);
            str[got > 0 ? got : 0] = 0;
            for (unsigned i = 0; got > 0 && i < eh.e_shnum && !go; i++)
                go = sh[i].sh_name < (size_t)got && strcmp(str + sh[i].sh_name, ".go.buildinfo") == 0;
        }
    }
    plx_sys_close(fd);
    return go;
}

/* The kernel's struct sigaction, as the raw rt_sigaction system call reads and writes it. */
struct ksigaction {
    void *handler;
    unsigned long flags;
    void *restorer;
    uint64_t mask;
};

static void record_switch(uint32_t reason, int replaced, int sig)
{
    static _Atomic int written; /* a program replacing the handler again and again: the first few */
    if (atomic_fetch_add(&written, 1) >= 8)
        return;
    struct plx_rec rec;
    plx_rec_init(&rec);
    plx_enc_sample_signal(&rec, reason, (uint32_t)replaced, (uint32_t)sig, plx_ticks());
    plx_rec_write(&rec, 0);
}

/* Thread t's event reopened to signal SAMPLE_SIGNAL, from the thread that found SIGTRAP taken
 * (under the registry lock). The new descriptor replaces s->fd before its event is enabled (the
 * handler knows its samples by it); the thread's end takes s->fd by exchange too, so each
 * descriptor is closed once. */
static void to_rt(struct plx_thread *t)
{
    struct plx_samples *s = t->samples;
    if (!s || !atomic_load(&s->on))
        return;
    int fd = open_event((pid_t)t->tid);
    int old = __atomic_exchange_n(&s->fd, fd, __ATOMIC_ACQ_REL);
    if (old < 0) { /* the thread has written its tree */
        __atomic_exchange_n(&s->fd, old, __ATOMIC_ACQ_REL);
        if (fd >= 0)
            plx_sys_close(fd);
        return;
    }
    if (fd >= 0)
        ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
    plx_sys_close(old); /* a thread whose new event the kernel refused is no longer sampled */
}

static int install(int sig)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    /* SA_ONSTACK: a program's handler it passes signals on to may need its alternate stack (Go's) */
    sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
    sigfillset(&sa.sa_mask);
    return __sigaction(sig, &sa, NULL);
}

void plx_stack_sampler_check(void)
{
    if (!enabled || atomic_exchange(&switching, 1))
        return;
    int saved = errno;
    int trap = atomic_load(&use_trap);
    int sig = trap ? SIGTRAP : SAMPLE_SIGNAL;
    struct ksigaction k;
    memset(&k, 0, sizeof k);
    if (syscall(SYS_rt_sigaction, sig, NULL, &k, sizeof k.mask) == 0 && k.handler != (void *)on_signal) {
        if (trap) {
            /* SIGTRAP is the program's now: samples come by SAMPLE_SIGNAL on every thread */
            if (install(SAMPLE_SIGNAL) == 0) {
                atomic_store(&trap_kept, 0);
                atomic_store(&use_trap, 0);
                plx_threads_each(to_rt);
                record_switch(1, SIGTRAP, SAMPLE_SIGNAL);
            }
        } else {
            /* the program took SAMPLE_SIGNAL too: its handler gets the signals that are not
             * samples, the sampler's is put back */
            memset(&prev_rt, 0, sizeof prev_rt);
            prev_rt.sa_handler = (sighandler_t)k.handler;
            prev_rt.sa_flags = (int)k.flags;
            memcpy(&prev_rt.sa_mask, &k.mask, sizeof k.mask);
            if (install(SAMPLE_SIGNAL) == 0)
                record_switch(1, SAMPLE_SIGNAL, SAMPLE_SIGNAL);
        }
    }
    atomic_store(&switching, 0);
    errno = saved;
}

int plx_stack_sampler_keep_trap(const struct sigaction *act, struct sigaction *old)
{
    if (!atomic_load(&trap_kept))
        return 0;
    struct sigaction prev = prev_trap;
    if (act)
        prev_trap = *act;
    if (old)
        *old = prev;
    return 1;
}

/* The cpu-clock event of thread `tid` (0: the calling thread), disabled; -1 when the kernel
 * refuses it. */
static int event_open(int trap, pid_t tid)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_CPU_CLOCK;
    a.sample_period = period_ns;
    a.disabled = 1;
    a.exclude_hv = 1;
    if (trap) {
        a.sigtrap = 1;
        a.remove_on_exec = 1; /* the kernel's condition for sigtrap */
        a.sig_data = TRAP_DATA;
    }
    int fd = (int)syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0 && (errno == EACCES || errno == EPERM)) {
        a.exclude_kernel = 1; /* perf_event_paranoid 2: user time only */
        fd = (int)syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
    }
    return fd;
}

/* Whether this kernel has sigtrap events (Linux 5.13). */
static int trap_events_work(void)
{
    int fd = event_open(1, 0);
    if (fd >= 0)
        plx_sys_close(fd);
    return fd >= 0;
}

/* A debugger tracing the process would stop it at every SIGTRAP. */
static int traced(void)
{
    char buf[2048];
    int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? plx_sys_read(fd, buf, sizeof buf - 1) : -1;
    if (fd >= 0)
        plx_sys_close(fd);
    buf[n > 0 ? n : 0] = 0;
    const char *p = strstr(buf, "TracerPid:");
    return p && atoi(p + 10) != 0;
}

/* Thread `tid`'s sampling event (0: the calling thread's), high in the descriptor table,
 * signalling that thread; disabled when `tid` is another thread. */
static int open_event(pid_t tid)
{
    int trap = atomic_load(&use_trap);
    int fd = event_open(trap, tid);
    if (fd < 0)
        return -1;
    /* out of the way of a program that dup2()s onto low descriptors */
    int high = fcntl(fd, F_DUPFD_CLOEXEC, 512);
    if (high >= 0) {
        plx_sys_close(fd);
        fd = high;
    }
    if (trap)
        return fd; /* the event raises SIGTRAP on the thread it counts */
    struct f_owner_ex owner = {F_OWNER_TID, tid ? tid : (pid_t)syscall(SYS_gettid)};
    if (fcntl(fd, F_SETOWN_EX, &owner) != 0 || fcntl(fd, F_SETSIG, SAMPLE_SIGNAL) != 0 ||
        fcntl(fd, F_SETFL, O_ASYNC | O_NONBLOCK) != 0) {
        plx_sys_close(fd);
        return -1;
    }
    return fd;
}

/* One unwind outside any signal handler: libunwind's per-thread cache is thread-local storage of
 * a dlopen()ed library, which glibc allocates with malloc on a thread's first access; a first
 * access inside the handler could interrupt malloc itself (heap corruption, seen under Open
 * MPI's mpirun). */
static void warm_up(void)
{
#ifdef PLX_HAVE_LIBUNWIND
    ucontext_t uc;
    unw_cursor_t c;
    if (u_backtrace) { /* its per-thread frame cache: malloc, pthread_setspecific on first use */
        void *b[4];
        u_backtrace(b, 4);
    }
    if (getcontext(&uc) != 0 || u_init(&c, (unw_context_t *)&uc, 0) < 0)
        return;
    for (int i = 0; i < 4 && u_step(&c) > 0; i++)
        ;
#endif
}

/* The head and frames in a `samples` live file (spec/format.md "Live files"), a slot of the
 * process's pool: a short thread takes the file a thread before it gave back (no file made or
 * removed); its first frames backed by the disk, the rest grown into as the tree grows; memory
 * where no file can be made (said once). */
static int map_tree(struct plx_thread *t, struct plx_samples *s)
{
    struct head *items = plx_live_take_open("samples", t->index, sizeof(struct frame), s->cap + 1,
                                            LIVE_FIRST + 1, &s->live, &s->live_fd, &s->live_bytes);
    if (!items)
        return -1;
    s->head = items;
    s->frames = (struct frame *)items + 1;
    *s->head = (struct head){period_ns, 0, 0, 0}; /* a slot taken again: its last owner's totals */
    s->kept = s->live_bytes ? plx_live_items_in(s->live, s->live_bytes) - 1 : s->cap;
    s->no_room = s->live_fd < 0;
    __atomic_store_n(&s->live->count, 1, __ATOMIC_RELEASE);
    return 0;
}

/* The tree's live file given back to the pool (`give`: its content is in the records), or, in a
 * fork()ed child, unmapped (the file is its parent's). `unmap`: the struct too (no other
 * thread's handler can hold it). */
static void drop_tree(struct plx_samples *s, int give, int unmap)
{
    int fd = s->live_fd;
    s->live_fd = -1;
    if (give) {
        plx_live_give_open("samples", s->live, fd, s->live_bytes);
    } else {
        if (fd >= 0)
            plx_sys_close(fd);
        plx_live_unmap(s->live);
    }
    if (unmap)
        munmap(s, s->bytes);
}

static uint32_t pow2_at_least(uint32_t v)
{
    uint32_t p = 1;
    while (p < v)
        p <<= 1;
    return p;
}

/* On the thread itself, at its registration. */
void plx_stack_sampler_thread_start(struct plx_thread *t)
{
    if (!enabled || t->samples)
        return;
    uint32_t cap = (uint32_t)plx_cfg.sample_nodes;
    uint32_t slots = pow2_at_least(cap * 2);
    size_t head = (sizeof(struct plx_samples) + 63) & ~(size_t)63;
    size_t cuts = ((size_t)t->max_depth * sizeof(struct cut) + 7) & ~(size_t)7;
    size_t stamps = plx_cfg.trace ? STAMPS * 8 + STAMP_REC_BYTES : 0;
    size_t bytes = head + (size_t)slots * 4 + cuts + stamps;
    char *mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (mem == MAP_FAILED)
        return;
    struct plx_samples *s = (struct plx_samples *)mem;
    s->bytes = bytes;
    s->cap = cap;
    s->mask = slots - 1;
    s->slots = (uint32_t *)(mem + head);
    s->cuts = (struct cut *)(s->slots + slots);
    if (stamps) {
        s->stamps = (uint64_t *)((char *)s->cuts + cuts);
        s->stamp_rec = (unsigned char *)(s->stamps + STAMPS);
    }
    plx_stack_sampler_check();
    s->fd = open_event(0);
    if (s->fd < 0) {
        static _Atomic int warned;
        if (!atomic_exchange(&warned, 1))
            plx_warn("call-stack sampling: perf_event_open(cpu-clock) failed: %s; threads without "
                     "it are not sampled", strerror(errno));
        munmap(mem, bytes);
        return;
    }
    if (map_tree(t, s) != 0) {
        plx_sys_close(s->fd);
        munmap(mem, bytes);
        return;
    }
    warm_up();
    t->samples = s;
    atomic_store_explicit(&s->on, 1, memory_order_release);
    ioctl(s->fd, PERF_EVENT_IOC_ENABLE, 0);
}

/* A user region's begin (api.c): the stack pointer of the code that began it, so that its
 * samples keep only the frames that code called. */
void plx_stack_sampler_note_region(struct plx_thread *t, uintptr_t sp)
{
    struct plx_samples *s = t->samples;
    if (!s || !t->depth || t->depth > t->max_depth)
        return;
    s->cuts[t->depth - 1] = (struct cut){t->stack[t->depth - 1].key, sp};
}

static void quiesce(struct plx_samples *s)
{
    atomic_store_explicit(&s->on, 0, memory_order_release);
    for (int i = 0; i < 100000 && atomic_load_explicit(&s->busy, memory_order_acquire); i++)
        sched_yield();
}

/* The thread's SampleTree, written with its profile (by the thread at its end, or by the
 * process end once every handler has stopped); its event is closed first. */
void plx_stack_sampler_write(struct plx_thread *t)
{
    struct plx_samples *s = t->samples;
    if (!s)
        return;
    quiesce(s);
    int fd = __atomic_exchange_n(&s->fd, -1, __ATOMIC_ACQ_REL); /* to_rt may replace it */
    if (fd >= 0)
        plx_sys_close(fd);
    struct plx_rec rec;
    plx_rec_init(&rec);
    const struct head *h = s->head;
    plx_enc_sample_tree(&rec, t->index, period_ns, h->taken, h->lost_full, h->lost_loader, s->n);
    for (uint32_t i = 0; i < s->n; i++) {
        const struct frame *f = &s->frames[i];
        uint32_t module = f->module != PLX_NO_INDEX || !f->address ? f->module
                                                                   : plx_module_of(f->address - 1);
        plx_enc_sample_tree_frames(&rec, f->parent, f->parent == PLX_NO_INDEX ? f->node : PLX_NO_INDEX,
                                   module, f->address, f->samples);
    }
    plx_rec_write(&rec, 0);
    write_stamps(t, s); /* frames keep their index as the tree grows: any record names the last tree's */
    t->samples = NULL;
    /* another thread's handler may still hold the pointer: its struct stays (the process ends) */
    drop_tree(s, 1, t == plx_self);
}

static void quiesce_thread(struct plx_thread *t)
{
    if (t->samples)
        quiesce(t->samples);
}

/* Frames the handler found in no listed module take the module loaded at their address now. A
 * handler may add frames meanwhile (it never changes a frame's module): a frame is read up to
 * the count published before the loop, and its module is one aligned word. */
static void name_frames(struct plx_thread *t)
{
    struct plx_samples *s = t->samples;
    if (!s)
        return;
    uint32_t n = __atomic_load_n(&s->n, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < n; i++) {
        struct frame *f = &s->frames[i];
        if (__atomic_load_n(&f->module, __ATOMIC_RELAXED) != PLX_NO_INDEX || !f->address)
            continue;
        uint32_t m = plx_module_known(f->address - 1);
        if (m != PLX_NO_INDEX)
            __atomic_store_n(&f->module, m, __ATOMIC_RELAXED);
    }
}

void plx_stack_sampler_before_unload(void)
{
    if (!enabled)
        return;
    plx_modules_list();
    plx_threads_each(name_frames);
}

/* The process end: no handler runs any more once this returns (trees are written after). */
void plx_stack_sampler_stop(void)
{
    if (!enabled)
        return;
    atomic_store(&stopped, 1);
    plx_threads_each(quiesce_thread);
}

/* In a fork()ed child: the surviving thread's event counts the parent's thread; it gets its
 * own, and a tree emptied like its profile's counts. The other threads' events are the
 * parent's (close-on-exec, never signalled here). */
void plx_stack_sampler_after_fork(struct plx_thread *t)
{
    if (!enabled || !t || !t->samples)
        return;
    struct plx_samples *s = t->samples;
    atomic_store(&s->on, 0);
    if (s->fd >= 0)
        plx_sys_close(s->fd);
    t->samples = NULL;
    drop_tree(s, 0, 1); /* the file is the parent's */
    atomic_store(&stopped, 0);
    plx_stack_sampler_thread_start(t);
}
