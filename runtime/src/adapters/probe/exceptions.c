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
 * Interposed when libplx comes before the unwinder (plx run's LD_PRELOAD). Under plx attach
 * the program bound its own long before: the entries of the unwinder and the C++ runtime it
 * bound are made jumps to libplx's (the probe engine's redirection), which go on in their
 * relocated originals; they stay after a detach (probed frames may still be open). A program
 * that links its unwinder statically keeps its own: a throw through a probed frame then still
 * ends the program (docs/dynamic.md). */
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

static _Atomic(unwind_fn) next_raise, next_rethrow;

int _Unwind_RaiseException(struct _Unwind_Exception *e)
{
    restore_returns();
    return next_of(&next_raise, "_Unwind_RaiseException")(e);
}

int _Unwind_Resume_or_Rethrow(struct _Unwind_Exception *e)
{
    restore_returns();
    return next_of(&next_rethrow, "_Unwind_Resume_or_Rethrow")(e);
}

/* ---- plx attach -------------------------------------------------------------------------- */

/* libplx's own definitions: a reference to an exported name from inside libplx binds to the
 * process's first definition (the unwinder's), a hidden alias to this one */
PLX_HIDDEN int plx_unwind_raise(struct _Unwind_Exception *e)
    __attribute__((alias("_Unwind_RaiseException")));
PLX_HIDDEN int plx_unwind_rethrow(struct _Unwind_Exception *e)
    __attribute__((alias("_Unwind_Resume_or_Rethrow")));

enum { RAISE, RETHROW, BEGIN_CATCH, ENTRIES };

struct bound_entry {
    const char *name;
    uintptr_t at; /* the program's definition (0: none, or libplx's own) */
    uintptr_t to; /* libplx's */
    struct plx_function_symbol sym;
    int found;
};

static void find_entries(const struct plx_function_symbol *s, void *arg)
{
    struct bound_entry *e = arg;
    for (int i = 0; i < ENTRIES; i++)
        if (!e[i].found && e[i].at && s->address == e[i].at && s->size > 0) {
            e[i].sym = *s;
            e[i].found = 1;
        }
}

void plx_attach_exceptions_start(void)
{
    static int done; /* libplx stays loaded after a detach, and the redirections with it */
    if (done)
        return;
    struct bound_entry e[ENTRIES] = {
        [RAISE] = {"_Unwind_RaiseException", 0, (uintptr_t)plx_unwind_raise},
        [RETHROW] = {"_Unwind_Resume_or_Rethrow", 0, (uintptr_t)plx_unwind_rethrow},
        [BEGIN_CATCH] = {"__cxa_begin_catch", 0, (uintptr_t)plx_cxx_begin_catch},
    };
    int any = 0;
    for (int i = 0; i < ENTRIES; i++) {
        uintptr_t f = (uintptr_t)dlsym(RTLD_DEFAULT, e[i].name);
        if (f && f != e[i].to) {
            e[i].at = f;
            any = 1;
        }
    }
    if (!any)
        return; /* no C++ runtime loaded (it would come later by dlopen, bound to libplx) */
    plx_symbols_each_function(find_entries, e);
    struct plx_function_symbol syms[ENTRIES];
    uintptr_t to[ENTRIES], resume[ENTRIES];
    int which[ENTRIES];
    size_t n = 0;
    for (int i = 0; i < ENTRIES; i++)
        if (e[i].found) {
            syms[n] = e[i].sym;
            to[n] = e[i].to;
            which[n++] = i;
        }
    /* no other thread runs (plx attach stopped them): the originals are known before any
     * throw reaches libplx's functions, which would otherwise look up the redirected ones */
    size_t redirected = plx_probes_redirect(syms, to, resume, n, 0);
    if (redirected < n)
        plx_warn("C++ exceptions: %zu of %zu entries of the unwinder redirected; a throw "
                 "through a probed function may end the program",
                 redirected, n);
    for (size_t k = 0; k < n; k++) {
        if (!resume[k])
            continue;
        if (which[k] == RAISE)
            atomic_store(&next_raise, (unwind_fn)resume[k]);
        else if (which[k] == RETHROW)
            atomic_store(&next_rethrow, (unwind_fn)resume[k]);
        else
            plx_cxx_catch_next((void *(*)(void *))resume[k]);
    }
    done = 1;
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
