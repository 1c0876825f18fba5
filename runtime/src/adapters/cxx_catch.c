/* C++ exceptions: the frames a throw unwound are closed when a handler catches it.
 *
 * Clang's -finstrument-functions calls no exit hook in the frames an exception unwinds (GCC's
 * cleanup paths do). The hooks close such frames at the thread's next hook (cyg_profile.c),
 * except one they cannot tell from a function inlined into itself: the same function entered
 * again from the same call site. __cxa_begin_catch, called by every catch handler from the
 * catching function's frame, closes them at once: every compiler-hook frame below the catching
 * function's stack pointer is gone; functions inlined into the catching one and still open (at
 * its stack pointer) are closed when entered again there or when it exits (plx_cyg_caught).
 * Interposed when libplx comes before the C++ runtime
 * (LD_PRELOAD, or linked first), or its entry redirected to this one under plx attach
 * (probe/exceptions.c); a program with the C++ runtime linked statically binds its own. */
#include "../core/hotpath.h"
#include "cyg_profile.h"
#include "probe/probe_api.h"

#include <dlfcn.h>
#include <stdlib.h>

__attribute__((visibility("default"), no_instrument_function)) void *__cxa_begin_catch(void *e);

typedef void *(*begin_catch_fn)(void *);
static _Atomic(begin_catch_fn) next_begin_catch;

/* The C++ runtime's own function: the next definition after libplx, or, for a C++ runtime
 * loaded into a local scope (a plugin dlopen()ed without RTLD_GLOBAL, whose calls still reach
 * libplx first), the one of an already loaded C++ runtime or of the caller's own object. */
static begin_catch_fn find_next(uintptr_t ret)
{
    static const char *const runtimes[] = {"libstdc++.so.6", "libc++abi.so.1", "libc++.so.1"};
    begin_catch_fn f = (begin_catch_fn)dlsym(RTLD_NEXT, "__cxa_begin_catch");
    for (size_t i = 0; !f && i < sizeof runtimes / sizeof runtimes[0]; i++) {
        void *h = dlopen(runtimes[i], RTLD_NOW | RTLD_NOLOAD);
        if (h)
            f = (begin_catch_fn)dlsym(h, "__cxa_begin_catch");
    }
    Dl_info caller;
    if (!f && dladdr((void *)ret, &caller) && caller.dli_fname) {
        void *h = dlopen(caller.dli_fname, RTLD_NOW | RTLD_NOLOAD);
        if (h)
            f = (begin_catch_fn)dlsym(h, "__cxa_begin_catch");
    }
    return f == __cxa_begin_catch ? NULL : f;
}

void plx_cxx_catch_next(void *(*next)(void *))
{
    atomic_store_explicit(&next_begin_catch, next, memory_order_release);
}

void *__cxa_begin_catch(void *exception)
{
    uintptr_t sp = PLX_CALLER_SP();
    struct plx_thread *t = plx_self;
    plx_probe_caught(t, sp); /* always: the probed frames still running need their exits back */
    if (t && !t->guard && !t->dead && t->depth) {
        uintptr_t top = t->stack[t->depth - 1].sp;
        if (top != PLX_SP_NONE && top <= sp)
            plx_cyg_caught(t, sp, (uintptr_t)__builtin_return_address(0));
    }
    begin_catch_fn next = atomic_load_explicit(&next_begin_catch, memory_order_acquire);
    if (!next) {
        next = find_next((uintptr_t)__builtin_return_address(0));
        if (!next)
            abort(); /* a catch handler with no C++ runtime loaded: cannot happen */
        atomic_store_explicit(&next_begin_catch, next, memory_order_release);
    }
    return next(exception);
}

void *plx_cxx_begin_catch(void *exception) __attribute__((alias("__cxa_begin_catch")));
