/* The probes' fast path: what the trampolines of probe_entry.S call on every probed call.
 *
 * Invariant: this file is compiled general-register-only (-mgeneral-regs-only, and without
 * sanitizer instrumentation: runtime/CMakeLists.txt) and calls nothing outside itself but the
 * thunks plx_probe_v_* of probe_entry.S, which save the vector, x87 and MXCSR state and errno
 * around the function they stand for. So a probed call that takes no slow path changes no
 * vector register and the trampolines save only the general ones. Every slow path (the
 * thread's first probe, first sight of a function, a full trace buffer, a new callpath node,
 * throttling, CPU time and counters, the clock's fallback) is one of those thunks: the names
 * below are defined before the runtime's headers so that their declarations and every call in
 * the inlined hot path (hotpath.h) name the thunk instead. ctest probe_fast_path_gpr_only
 * checks the disassembly of everything reachable from the trampolines. */
#define plx_clock_slow plx_probe_v_clock_slow
#define plx_trace_slow plx_probe_v_trace_slow
#define plx_node_new plx_probe_v_node_new
#define plx_node_unless_throttled plx_probe_v_node_unless_throttled
#define plx_throttle_check plx_probe_v_throttle_check
#define plx_trace_throttle_leave plx_probe_v_trace_throttle_leave
#define plx_frame_enter_slow plx_probe_v_frame_enter_slow
#define plx_frame_exit_slow plx_probe_v_frame_exit_slow
#define plx_probe_enter_slow plx_probe_v_probe_enter_slow
#include "probe.h"

PLX_TLS struct plx_probe_shadow *plx_probe_shadow;
PLX_TLS uint32_t plx_probe_shadow_depth, plx_probe_shadow_cap;
PLX_TLS int plx_probe_busy;
PLX_TLS uint32_t plx_probe_generation;

void plx_probe_enter(const struct plx_probe *p, uintptr_t *ret_slot)
{
    struct plx_thread *t = plx_self;
    if (PLX_UNLIKELY(plx_probe_busy || t == NULL || t->guard ||
                     plx_probe_generation != plx_attach_generation ||
                     plx_probe_shadow_depth >= plx_probe_shadow_cap)) {
        plx_probe_enter_slow(p, ret_slot);
        return;
    }
    uint32_t v = plx_region_of_address(p->fn);
    if (PLX_UNLIKELY(v & (PLX_REGION_MISSING | PLX_REGION_EXCLUDED))) {
        if (v & PLX_REGION_MISSING)
            plx_probe_enter_slow(p, ret_slot);
        return;
    }
    t->guard = 1;
    atomic_signal_fence(memory_order_seq_cst);
    plx_probe_push(t, p, v, ret_slot);
    atomic_signal_fence(memory_order_seq_cst);
    t->guard = 0;
}

uintptr_t plx_probe_exit(void)
{
    struct plx_probe_shadow e = plx_probe_shadow[--plx_probe_shadow_depth];
    struct plx_thread *t = plx_self;
    if (t != NULL && !t->guard && !t->dead && t->depth && t->stack[t->depth - 1].key == e.fn) {
        struct plx_frame *f = &t->stack[t->depth - 1];
        t->guard = 1;
        atomic_signal_fence(memory_order_seq_cst);
        if (PLX_UNLIKELY(f->cpu))
            plx_frame_exit_slow(t, f);
        plx_leave(t, f, plx_ticks());
        atomic_signal_fence(memory_order_seq_cst);
        t->guard = 0;
    }
    return e.ret;
}
