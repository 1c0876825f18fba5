/* Compiler instrumentation: GCC and Clang -finstrument-functions call these two hooks.
 *
 * The hooks only decide whether the function is measured; the work is in separate functions
 * reached by a tail call, so an excluded function costs a table lookup and no register saves.
 *
 * Frames left without their exit hook (a C++ exception under Clang, whose cleanup paths call no
 * hook; longjmp; pthread_exit and cancellation, closed at the thread's end) are closed at the
 * thread's next hook, at that time. Each frame keeps its function's stack pointer at entry `sp`
 * (the hook's CFA: the same at the function's entry and exit hooks) and return address `site`.
 * A live caller's `sp` is above its callees' (equal for a function inlined into it, whose
 * `site` is its own); and a caller calls with its stack pointer at its entry's, so the word
 * just below the innermost frame's `sp` is the entering function's return address when that
 * frame is its caller. Anything else takes the out-of-line check (unwound_before_entry). */
#include "../core/hotpath.h"
#include "cyg_profile.h"

#define PLX_EXPORT __attribute__((visibility("default"), no_instrument_function))

PLX_EXPORT void __cyg_profile_func_enter(void *fn, void *site);
PLX_EXPORT void __cyg_profile_func_exit(void *fn, void *site);

/* The guard is held while the thread's stack and tree change: a signal handler that runs
 * measured code meanwhile is not recorded (and counted as lost) instead of corrupting them. */
static inline void guard_on(struct plx_thread *t)
{
    t->guard = 1;
    atomic_signal_fence(memory_order_seq_cst);
}

static inline void guard_off(struct plx_thread *t)
{
    atomic_signal_fence(memory_order_seq_cst);
    t->guard = 0;
}


/* Closes the innermost frame at `now`: its function left without its exit hook, and so did
 * the calls deeper than the stack (counted in `overflow`), which were above it. */
static void close_gone(struct plx_thread *t, uint64_t now)
{
    struct plx_frame *f = &t->stack[t->depth - 1];
    t->overflow = 0;
    if (f->cpu)
        plx_frame_exit_slow(t, f);
    plx_leave(t, f, now > f->start ? now : f->start);
}

/* A word of the program's stack, which AddressSanitizer may have poisoned (a redzone). */
__attribute__((no_sanitize("address"))) static inline uintptr_t stack_word(uintptr_t a)
{
    return *(const uintptr_t *)a;
}

/* Whether `site` is one of the words [lo, hi] (inclusive), all of them in the caller's frame. */
static int stack_holds(uintptr_t lo, uintptr_t hi, uintptr_t site)
{
    for (uintptr_t a = lo; a <= hi; a += sizeof(uintptr_t))
        if (stack_word(a) == site)
            return 1;
    return 0;
}

/* The entry of `fn` at `sp` over frames inlined at `sp` that a caught exception passed: the
 * one of `fn` among them, if any, and those above it are gone (the function entered again);
 * the others are left open (the catching function may be one of them). */
static void close_reentered(struct plx_thread *t, uintptr_t fn, uintptr_t sp)
{
    uint32_t d = t->depth;
    while (d > 0 && t->stack[d - 1].sp == sp && t->stack[d - 1].site == 0 &&
           t->stack[d - 1].key != fn)
        d--;
    if (d == 0 || t->stack[d - 1].sp != sp || t->stack[d - 1].site != 0)
        return;
    uint64_t now = plx_ticks();
    while (t->depth >= d)
        close_gone(t, now);
}

/* The entry of function `fn` (stack pointer `sp`, return address `site`) where the innermost
 * frame may be gone: closes every frame that is. A frame below `sp` is gone; one at `sp` is
 * gone unless `fn` is inlined into it (same return address; the same function too: GCC inlines
 * a recursive call, so a frame re-entered from the same call site after a throw is closed by
 * __cxa_begin_catch, cxx_catch.c, or else by the caller's next exit); one above is
 * a live ancestor when `site` lies between `sp` and its stack pointer (the return address is
 * found before any word above the entering function's own frame is read), else gone. Words
 * already searched are not searched again. Under the thread's guard. */
__attribute__((noinline, cold)) static void unwound_before_entry(struct plx_thread *t, uintptr_t fn,
                                                                 uintptr_t sp, uintptr_t site)
{
    uint64_t now = 0;
    uintptr_t lo = sp;
    while (t->depth) {
        struct plx_frame *f = &t->stack[t->depth - 1];
        if (f->sp == PLX_SP_NONE)
            return;
        if (f->sp == sp && f->site == site)
            return;
        if (f->sp == sp && f->site == 0) { /* passed by a caught exception (plx_cyg_caught) */
            close_reentered(t, fn, sp);
            return;
        }
        if (f->sp > sp) {
            if (stack_holds(lo, f->sp - sizeof(uintptr_t), site))
                return;
            lo = f->sp;
        }
        if (!now)
            now = plx_ticks();
        close_gone(t, now);
    }
}

/* The exit of a function at stack pointer `sp` above the innermost frame: the frames below it
 * are gone. Under the thread's guard. */
static void unwound_before_exit(struct plx_thread *t, uintptr_t sp)
{
    uint64_t now = plx_ticks();
    while (t->depth && t->stack[t->depth - 1].sp != PLX_SP_NONE && t->stack[t->depth - 1].sp < sp)
        close_gone(t, now);
}

/* The frames from `d` up at one stack pointer, where a handler at `pc` caught: those the debug
 * information shows inlined around `pc` (in order, each by its function's name, as the debug
 * information at the function's own address has it) stay; the first that is not, and every
 * frame above it, are gone. Returns the depth kept, or `depth` when unknown (no debug
 * information). */
static uint32_t inlined_kept(struct plx_thread *t, uint32_t d, uintptr_t pc)
{
    const char *const *scopes;
    int n = plx_inline_scopes(pc - 1, &scopes); /* pc - 1: the call's own instruction */
    if (n < 0) {
        static _Atomic int warned;
        if (!atomic_exchange(&warned, 1)) {
            struct plx_symbol sym = {0};
            plx_warn("a C++ exception was caught in %s over functions inlined into it, without "
                     "debug information (-g) or libdw (libdw1) to tell which of them the exception "
                     "left: any it left stay open until entered again or the catching function "
                     "returns, and the calls made meanwhile are counted under them",
                     plx_symbol_lookup(t->stack[d].key, &sym) == 0 ? sym.name : "a function");
        }
        return t->depth;
    }
    int j = 0;
    for (uint32_t i = d; i < t->depth; i++) {
        const char *const *own;
        if (plx_inline_scopes(t->stack[i].key, &own) <= 0)
            return t->depth;
        const char *name = own[0];
        while (j < n && strcmp(scopes[j], name) != 0)
            j++;
        if (j == n)
            return i;
        j++;
    }
    return t->depth;
}

void plx_cyg_caught(struct plx_thread *t, uintptr_t sp, uintptr_t pc)
{
    guard_on(t);
    unwound_before_exit(t, sp);
    uint32_t d = t->depth;
    while (d > 0 && t->stack[d - 1].sp == sp)
        d--;
    if (t->depth - d > 1) { /* functions inlined into the catching one, or frames it left */
        uint32_t kept = inlined_kept(t, d, pc);
        if (kept < t->depth) {
            uint64_t now = plx_ticks();
            while (t->depth > kept)
                close_gone(t, now);
            guard_off(t);
            return;
        }
    }
    for (uint32_t i = d + 1; i < t->depth; i++)
        t->stack[i].site = 0; /* gone if its function is entered again at `sp` */
    guard_off(t);
}

/* Whether the innermost frame is not plainly the caller of the function entering at `sp`. */
static inline int maybe_unwound(struct plx_thread *t, uintptr_t sp, uintptr_t site)
{
    if (PLX_UNLIKELY(t->depth == 0))
        return 0;
    uintptr_t top = t->stack[t->depth - 1].sp;
    return top <= sp || stack_word(top - sizeof(uintptr_t)) != site;
}

__attribute__((noinline)) static void enter_measured(struct plx_thread *t, uintptr_t fn, uint32_t v,
                                                     uintptr_t sp, uintptr_t site)
{
    guard_on(t);
    if (PLX_UNLIKELY(maybe_unwound(t, sp, site)))
        unwound_before_entry(t, fn, sp, site);
    plx_enter_sp(t, fn, v & PLX_REGION_ID_MASK, sp, site);
    if (PLX_UNLIKELY(v & (PLX_REGION_CPU | PLX_REGION_COUNTERS)))
        plx_frame_enter_slow(t, v); /* `cputime` or `counters` functions only */
    guard_off(t);
}

__attribute__((noinline, cold)) static void count_lost(struct plx_thread *t)
{
    if (t != NULL && !t->dead)
        t->lost_events++;
}

/* An excluded function: its hook calls are patched out where that can be done safely. */
__attribute__((noinline, cold)) static void unhook(uintptr_t fn, uint32_t v, uintptr_t ret,
                                                   int is_exit)
{
    uint32_t bit = is_exit ? PLX_REGION_EXIT_TRIED : PLX_REGION_ENTER_TRIED;
    if (v & bit)
        return;
    struct plx_thread *t = plx_self;
    if (t)
        t->guard++;
    plx_region_mark(fn, bit);
    plx_patch_hook_call(ret, is_exit ? (uintptr_t)__cyg_profile_func_exit
                                     : (uintptr_t)__cyg_profile_func_enter);
    if (t)
        t->guard--;
}

__attribute__((noinline, cold)) static void enter_slow(uintptr_t fn, uintptr_t sp, uintptr_t site)
{
    struct plx_thread *t = plx_thread();
    if (t == NULL)
        return;
    uint32_t v = plx_region_of_address(fn);
    guard_on(t);
    if (v & PLX_REGION_MISSING) { /* first sight: the lookup's cost is the runtime's own */
        uint64_t t0 = plx_ticks();
        v = plx_region_resolve(t, fn);
        plx_runtime_interval(t, PLX_REGION_SYMBOLS, t0, plx_ticks());
    }
    if (!(v & PLX_REGION_EXCLUDED)) {
        if (maybe_unwound(t, sp, site))
            unwound_before_entry(t, fn, sp, site);
        plx_enter_sp(t, fn, v & PLX_REGION_ID_MASK, sp, site);
        if (v & (PLX_REGION_CPU | PLX_REGION_COUNTERS))
            plx_frame_enter_slow(t, v);
    }
    guard_off(t);
}

PLX_EXPORT void __cyg_profile_func_enter(void *fn, void *site)
{
    struct plx_thread *t = plx_self;
    if (PLX_UNLIKELY(t == NULL || t->guard))
        goto slow;
    uint32_t v = plx_region_of_address((uintptr_t)fn);
    if (PLX_LIKELY(!(v & (PLX_REGION_EXCLUDED | PLX_REGION_MISSING)))) {
        enter_measured(t, (uintptr_t)fn, v, PLX_CALLER_SP(), (uintptr_t)site); /* masks the id itself */
        return;
    }
    if (v & PLX_REGION_EXCLUDED) {
        if (!(v & PLX_REGION_ENTER_TRIED))
            unhook((uintptr_t)fn, v, (uintptr_t)__builtin_return_address(0), 0);
        return;
    }
slow: /* first sight of the function or of the thread, or re-entry */
    if (t == NULL || !t->guard)
        enter_slow((uintptr_t)fn, PLX_CALLER_SP(), (uintptr_t)site);
    else
        count_lost(t); /* measured code run while the thread is inside the runtime */
}

__attribute__((noinline)) static void exit_measured(struct plx_thread *t, struct plx_frame *f)
{
    guard_on(t);
    if (PLX_UNLIKELY(f->cpu))
        plx_frame_exit_slow(t, f);
    plx_leave(t, f, plx_ticks());
    guard_off(t);
}

/* An exit while calls deeper than the stack are counted: one of them (only measured functions
 * were counted), or, at or above the innermost frame's stack pointer, an exit after they all
 * left without their exit hooks: then 0, the count reset, and the exit goes on. */
__attribute__((noinline, cold)) static int exit_overflow(struct plx_thread *t, uintptr_t fn,
                                                         uintptr_t sp)
{
    if (t->depth && t->stack[t->depth - 1].sp != PLX_SP_NONE && t->stack[t->depth - 1].sp <= sp) {
        t->overflow = 0;
        return 0;
    }
    uint32_t v = plx_region_of_address(fn);
    if (!(v & (PLX_REGION_EXCLUDED | PLX_REGION_MISSING)))
        t->overflow--;
    return 1;
}

/* The exit of a function whose frame is not the innermost: excluded or throttled at its entry
 * (no clock read; its exit call is patched out where it can be), or measured with functions
 * inlined into it (frames at its own stack pointer) that left without their exit hooks (a
 * throw under Clang): they are closed, then it. */
__attribute__((noinline)) static void exit_other(struct plx_thread *t, uintptr_t fn, uintptr_t sp,
                                                 uintptr_t ret)
{
    uint32_t v = plx_region_of_address(fn);
    if (v & PLX_REGION_EXCLUDED) {
        if (!(v & PLX_REGION_EXIT_TRIED))
            unhook(fn, v, ret, 1);
        return;
    }
    uint32_t d = t->depth;
    while (d > 0 && t->stack[d - 1].sp == sp && t->stack[d - 1].key != fn)
        d--;
    if (d == 0 || d == t->depth || t->stack[d - 1].sp != sp)
        return;
    guard_on(t);
    uint64_t now = plx_ticks();
    while (t->depth > d)
        close_gone(t, now);
    guard_off(t);
    exit_measured(t, &t->stack[d - 1]);
}

/* The exit of a function below which frames are gone (`sp` above the innermost frame's): they
 * are closed first. */
__attribute__((noinline, cold)) static void exit_after_unwind(struct plx_thread *t, uintptr_t fn,
                                                              uintptr_t sp, uintptr_t ret)
{
    guard_on(t);
    unwound_before_exit(t, sp);
    guard_off(t);
    if (t->depth && t->stack[t->depth - 1].key == fn)
        exit_measured(t, &t->stack[t->depth - 1]);
    else
        exit_other(t, fn, sp, ret);
}

PLX_EXPORT void __cyg_profile_func_exit(void *fn, void *site)
{
    (void)site;
    struct plx_thread *t = plx_self;
    if (PLX_UNLIKELY(t == NULL || t->guard))
        return;
    if (PLX_UNLIKELY(t->overflow) && exit_overflow(t, (uintptr_t)fn, PLX_CALLER_SP()))
        return;
    if (PLX_UNLIKELY(t->depth == 0))
        return;
    struct plx_frame *f = &t->stack[t->depth - 1];
    if (PLX_UNLIKELY(f->sp < PLX_CALLER_SP())) {
        exit_after_unwind(t, (uintptr_t)fn, PLX_CALLER_SP(), (uintptr_t)__builtin_return_address(0));
        return;
    }
    if (f->key != (uintptr_t)fn) {
        exit_other(t, (uintptr_t)fn, PLX_CALLER_SP(), (uintptr_t)__builtin_return_address(0));
        return;
    }
    exit_measured(t, f);
}
