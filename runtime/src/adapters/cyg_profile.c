/* Compiler instrumentation: GCC and Clang -finstrument-functions call these two hooks.
 *
 * The hooks only decide whether the function is measured; the work is in separate functions
 * reached by a tail call, so an excluded function costs a table lookup and no register saves. */
#include "../core/hotpath.h"

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

__attribute__((noinline)) static void enter_measured(struct plx_thread *t, uintptr_t fn, uint32_t v)
{
    guard_on(t);
    plx_enter(t, fn, v & PLX_REGION_ID_MASK);
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

__attribute__((noinline, cold)) static void enter_slow(uintptr_t fn)
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
        plx_enter(t, fn, v & PLX_REGION_ID_MASK);
        if (v & (PLX_REGION_CPU | PLX_REGION_COUNTERS))
            plx_frame_enter_slow(t, v);
    }
    guard_off(t);
}

PLX_EXPORT void __cyg_profile_func_enter(void *fn, void *site)
{
    (void)site;
    struct plx_thread *t = plx_self;
    if (PLX_UNLIKELY(t == NULL || t->guard))
        goto slow;
    uint32_t v = plx_region_of_address((uintptr_t)fn);
    if (PLX_LIKELY(!(v & (PLX_REGION_EXCLUDED | PLX_REGION_MISSING)))) {
        enter_measured(t, (uintptr_t)fn, v); /* masks the id itself */
        return;
    }
    if (v & PLX_REGION_EXCLUDED) {
        if (!(v & PLX_REGION_ENTER_TRIED))
            unhook((uintptr_t)fn, v, (uintptr_t)__builtin_return_address(0), 0);
        return;
    }
slow: /* first sight of the function or of the thread, or re-entry */
    if (t == NULL || !t->guard)
        enter_slow((uintptr_t)fn);
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

__attribute__((noinline, cold)) static void exit_overflow(struct plx_thread *t, uintptr_t fn)
{
    /* deeper than the stack: only measured functions were counted */
    uint32_t v = plx_region_of_address(fn);
    if (!(v & (PLX_REGION_EXCLUDED | PLX_REGION_MISSING)))
        t->overflow--;
}

PLX_EXPORT void __cyg_profile_func_exit(void *fn, void *site)
{
    (void)site;
    struct plx_thread *t = plx_self;
    if (PLX_UNLIKELY(t == NULL || t->guard))
        return;
    if (PLX_UNLIKELY(t->overflow)) {
        exit_overflow(t, (uintptr_t)fn);
        return;
    }
    if (PLX_UNLIKELY(t->depth == 0))
        return;
    struct plx_frame *f = &t->stack[t->depth - 1];
    if (f->key != (uintptr_t)fn) { /* excluded or throttled at its entry: no clock read */
        uint32_t v = plx_region_of_address((uintptr_t)fn);
        if ((v & (PLX_REGION_EXCLUDED | PLX_REGION_EXIT_TRIED)) == PLX_REGION_EXCLUDED)
            unhook((uintptr_t)fn, v, (uintptr_t)__builtin_return_address(0), 1);
        return;
    }
    exit_measured(t, f);
}
