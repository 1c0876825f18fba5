/* The region of a measured C library call (call_region.h): shared by socket.c and wait.c. */
#include "call_region.h"

#include "../core/hotpath.h"

#define CALL_KEY(id) ((uintptr_t)(id) | ((uintptr_t)1 << 63))

uint32_t plx_call_region_id1(struct plx_call_region *r)
{
    uint32_t v = atomic_load_explicit(&r->id1, memory_order_relaxed);
    if (PLX_UNLIKELY(v == 0)) {
        uint32_t id = plx_region_of_name(r->name, PLX_KIND_SOCKET);
        v = id & PLX_REGION_EXCLUDED ? PLX_CALL_NOT_MEASURED : (id & PLX_REGION_ID_MASK) + 1;
        atomic_store_explicit(&r->id1, v, memory_order_relaxed);
    }
    return v;
}

struct plx_call plx_call_enter(struct plx_thread *t, struct plx_call_region *r)
{
    struct plx_call k = {NULL, 0};
    t->guard++;
    uint32_t v = plx_call_region_id1(r);
    if (v != PLX_CALL_NOT_MEASURED) {
        k.t = t;
        k.region = v - 1;
        plx_enter(t, CALL_KEY(k.region), k.region);
    }
    t->guard--;
    return k;
}

void plx_call_leave(struct plx_call k, uint64_t now)
{
    struct plx_thread *t = k.t;
    struct plx_frame *f = t->depth ? &t->stack[t->depth - 1] : NULL;
    if (f && f->key == CALL_KEY(k.region))
        plx_leave(t, f, now);
    else
        t->lost_events++;
}
