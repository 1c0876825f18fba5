/* What the probe's files share: the probe, the per-thread shadow stack of return addresses, and
 * the halves probe_entry.S calls (probe_fast.c the fast path, probe.c everything else).
 *
 * Invariant: the shadow stack is per thread (only its thread touches it); a return address is
 * replaced only after the frame it belongs to is pushed, and the exit trampoline always pops one
 * entry, whatever it records. */
#ifndef PLX_PROBE_H
#define PLX_PROBE_H

#include "../../core/hotpath.h"

#define PLX_PROBE_JMP_LEN 5 /* e9 rel32 */

enum { PLX_REDIRECT_NONE, PLX_REDIRECT_RECORDED, PLX_REDIRECT_QUIET };

struct plx_probe {
    uintptr_t fn;       /* the function's entry */
    uintptr_t resume;   /* its relocated first instructions, then a jump to fn + len */
    uint32_t len;       /* bytes displaced from the entry */
    unsigned char saved[PLX_PROBE_JMP_LEN]; /* the entry's bytes before the jump replaced them */
    const char *name;             /* its symbol (owned by the symbol table) */
    uint32_t module_id;
    int redirect;                 /* an entry made a jump to another implementation (attach):
                                   * not a probe of the user's, no glob of plx ctl remove's;
                                   * PLX_REDIRECT_QUIET: no record says so (the unwinder's) */
    struct plx_probe *next;       /* inserted probes, newest first (start-up or attach only) */
};

struct plx_probe_shadow {
    uintptr_t ret, fn;
    uintptr_t *slot; /* where the return address is on the program's stack */
};

PLX_HIDDEN extern PLX_TLS struct plx_probe_shadow *plx_probe_shadow;
PLX_HIDDEN extern PLX_TLS uint32_t plx_probe_shadow_depth, plx_probe_shadow_cap;
/* Set while this thread runs a probe's slow half: probes it reaches pass unrecorded. */
PLX_HIDDEN extern PLX_TLS int plx_probe_busy;
PLX_HIDDEN extern PLX_TLS uint32_t plx_probe_generation; /* plx_attach_generation last seen */

PLX_HIDDEN void plx_probe_entry_common(void);
PLX_HIDDEN void plx_probe_exit_common(void);
/* From plx_probe_entry_common (probe_entry.S), general registers saved: the entry of p's
 * function, whose return address is at *ret_slot. */
PLX_HIDDEN void plx_probe_enter(const struct plx_probe *p, uintptr_t *ret_slot);
/* From plx_probe_exit_common: the exit of the innermost probed frame; its return address. */
PLX_HIDDEN uintptr_t plx_probe_exit(void);
/* Everything plx_probe_enter does not do itself: the thread's first probe, a new attach, a
 * function seen for the first time, a nested probe. Reached through the thunk only. */
PLX_HIDDEN void plx_probe_enter_slow(const struct plx_probe *p, uintptr_t *ret_slot);

/* Pushes the frame of p's function (region value v, neither missing nor excluded) on the
 * thread's stack and shadow stack and replaces its return address; under the thread's guard,
 * with room on the shadow stack. */
static inline void plx_probe_push(struct plx_thread *t, const struct plx_probe *p, uint32_t v,
                                  uintptr_t *ret_slot)
{
    uint32_t depth = t->depth;
    plx_enter(t, p->fn, v & PLX_REGION_ID_MASK);
    if (PLX_UNLIKELY(t->depth == depth)) {
        t->overflow--; /* counted as lost; no exit will come for it */
        return;
    }
    if (PLX_UNLIKELY(v & (PLX_REGION_CPU | PLX_REGION_COUNTERS)))
        plx_frame_enter_slow(t, v); /* `cputime` or `counters` functions only */
    struct plx_probe_shadow *s = &plx_probe_shadow[plx_probe_shadow_depth++];
    s->ret = *ret_slot;
    s->fn = p->fn;
    s->slot = ret_slot;
    *ret_slot = (uintptr_t)plx_probe_exit_common;
}

#endif /* PLX_PROBE_H */
