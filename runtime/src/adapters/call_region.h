/* A C library call measured as a region of kind 5 (socket.c, wait.c): the region defined on
 * first use and cached, entered before the real call (clock read last) and left after it
 * (clock read first), keyed by its id with the top bit set, never a function address. */
#ifndef PLX_CALL_REGION_H
#define PLX_CALL_REGION_H

#include "../core/plx_internal.h"

#define PLX_CALL_NOT_MEASURED 0xFFFFFFFFu

struct plx_call_region {
    _Atomic uint32_t id1; /* 1 + region id; PLX_CALL_NOT_MEASURED if excluded or no room; 0 unknown */
    const char *name;
};
/* `static struct plx_call_region r_<call>`, named after the call. */
#define PLX_CALL_REGION(call) static struct plx_call_region r_##call = {0, #call}

/* An entered call: the measured thread whose region is open (NULL: none), and the region. */
struct plx_call {
    struct plx_thread *t;
    uint32_t region;
};

/* The region's 1 + id, defined on first sight. Called with the guard held, or before the
 * program's threads run. */
PLX_HIDDEN uint32_t plx_call_region_id1(struct plx_call_region *r);
/* The measured thread `t`, its guard free: the region entered under the guard (`t` NULL in the
 * result when the region is not measured). errno is the caller's to keep. */
PLX_HIDDEN struct plx_call plx_call_enter(struct plx_thread *t, struct plx_call_region *r);
/* With the call's thread's guard held: its region left at `now` when it is the innermost
 * frame; otherwise (stack full at entry, or not ours) an event counted lost. */
PLX_HIDDEN void plx_call_leave(struct plx_call k, uint64_t now);

#endif
