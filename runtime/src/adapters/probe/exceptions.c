/* C++ exceptions through probed frames.
 *
 * A probed call's return address is the exit trampoline (probe.h), where the unwinder finds no
 * frame description: a throw through it would end in std::terminate. So before the unwinder
 * walks the stack (_Unwind_RaiseException, which every throw and std::rethrow_exception call,
 * and _Unwind_Resume_or_Rethrow, which a rethrow calls; both interposed), every return address
 * the thread's probes replaced gets its original back. When a handler catches
 * (__cxa_begin_catch, cxx_catch.c), the probed frames below the catching function are gone:
 * their shadow entries are dropped and their regions closed; the frames still running get the
 * trampoline again, so their exits are recorded as before the throw.
 *
 * Interposed when libplx comes before the unwinder (plx run's LD_PRELOAD); a program that
 * links its unwinder statically, or one libplx was loaded into by plx attach, binds its own:
 * a throw through a probed frame then still ends the program (docs/dynamic.md). */
#include "probe.h"
#include "probe_api.h"

#include <dlfcn.h>
#include <stdlib.h>

#define PLX_EXPORT __attribute__((visibility("default")))

struct _Unwind_Exception;
typedef int (*unwind_fn)(struct _Unwind_Exception *);

/* Every replaced return address of this thread back to its original. */
static void restore_returns(void)
{
    for (uint32_t i = 0; i < plx_probe_shadow_depth; i++) {
        struct plx_probe_shadow *s = &plx_probe_shadow[i];
        if (s->slot && *s->slot == (uintptr_t)plx_probe_exit_common)
            *s->slot = s->ret;
    }
}

static unwind_fn next_of(_Atomic(unwind_fn) *cache, const char *name)
{
    unwind_fn f = atomic_load_explicit(cache, memory_order_acquire);
    if (!f) {
        f = (unwind_fn)dlsym(RTLD_NEXT, name);
        if (!f)
            abort(); /* an exception raised with no unwinder loaded: cannot happen */
        atomic_store_explicit(cache, f, memory_order_release);
    }
    return f;
}

PLX_EXPORT int _Unwind_RaiseException(struct _Unwind_Exception *e);
PLX_EXPORT int _Unwind_Resume_or_Rethrow(struct _Unwind_Exception *e);

int _Unwind_RaiseException(struct _Unwind_Exception *e)
{
    static _Atomic(unwind_fn) next;
    restore_returns();
    return next_of(&next, "_Unwind_RaiseException")(e);
}

int _Unwind_Resume_or_Rethrow(struct _Unwind_Exception *e)
{
    static _Atomic(unwind_fn) next;
    restore_returns();
    return next_of(&next, "_Unwind_Resume_or_Rethrow")(e);
}

void plx_probe_caught(struct plx_thread *t, uintptr_t sp)
{
    uint32_t d = plx_probe_shadow_depth;
    if (d == 0)
        return;
    /* a gone frame's return address was below the catching function's stack pointer */
    uint32_t keep = d;
    while (keep > 0 && (uintptr_t)plx_probe_shadow[keep - 1].slot < sp)
        keep--;
    if (keep < d && t && !t->dead && !t->guard) {
        /* their frames, innermost first, among the thread's: the outermost one's and every
         * frame above it are gone */
        uint32_t j = t->depth;
        int found = 1;
        for (uint32_t i = d; i-- > keep && found;) {
            while (j > 0 && t->stack[j - 1].key != plx_probe_shadow[i].fn)
                j--;
            found = j > 0;
            j -= found;
        }
        if (found) {
            t->guard++;
            uint64_t now = plx_ticks();
            while (t->depth > j) {
                struct plx_frame *f = &t->stack[t->depth - 1];
                t->overflow = 0;
                if (f->cpu)
                    plx_frame_exit_slow(t, f);
                plx_leave(t, f, now > f->start ? now : f->start);
            }
            t->guard--;
        }
    }
    plx_probe_shadow_depth = keep;
    for (uint32_t i = 0; i < keep; i++) {
        struct plx_probe_shadow *s = &plx_probe_shadow[i];
        if (s->slot && *s->slot == s->ret)
            *s->slot = (uintptr_t)plx_probe_exit_common;
    }
}
