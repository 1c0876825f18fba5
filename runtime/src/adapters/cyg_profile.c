/* Compiler instrumentation: GCC and Clang -finstrument-functions call these two hooks. */
#include "../core/hotpath.h"

#define PLX_EXPORT __attribute__((visibility("default"), no_instrument_function))

PLX_EXPORT void __cyg_profile_func_enter(void *fn, void *site)
{
    (void)site;
    struct plx_thread *t = plx_thread();
    if (PLX_UNLIKELY(t == NULL))
        return;
    uint32_t v = plx_region_of_address((uintptr_t)fn);
    if (PLX_UNLIKELY(v & PLX_REGION_MISSING))
        v = plx_region_resolve(t, (uintptr_t)fn);
    if (v & PLX_REGION_EXCLUDED)
        return;
    plx_enter(t, (uintptr_t)fn, v & PLX_REGION_ID_MASK);
}

PLX_EXPORT void __cyg_profile_func_exit(void *fn, void *site)
{
    (void)site;
    uint64_t now = plx_ticks();
    struct plx_thread *t = plx_self;
    if (PLX_UNLIKELY(t == NULL || t->guard))
        return;
    if (PLX_UNLIKELY(t->overflow)) { /* deeper than the stack: only measured functions count */
        uint32_t v = plx_region_of_address((uintptr_t)fn);
        if (!(v & (PLX_REGION_EXCLUDED | PLX_REGION_MISSING)))
            t->overflow--;
        return;
    }
    if (PLX_UNLIKELY(t->depth == 0))
        return;
    struct plx_frame *f = &t->stack[t->depth - 1];
    if (f->key != (uintptr_t)fn)
        return; /* excluded or throttled at its entry */
    plx_leave(t, f, now);
}
