/* The user API of plx.h: regions, phases, user events, thread names. */
#include "../core/hotpath.h"
#include "plx.h"

#include <sched.h>
#include <string.h>

#define PLX_API __attribute__((visibility("default")))

/* User regions are keyed by their id with the top bit set, so they never equal a function address. */
#define USER_KEY(id) ((uintptr_t)(id) | ((uintptr_t)1 << 63))

/* `sp`: the caller's stack pointer, where the call-stack sampler cuts the region's samples. */
static void begin(const char *name, int kind, uintptr_t sp)
{
    struct plx_thread *t = plx_thread();
    if (!t || !name)
        return;
    t->guard++; /* held while the stack changes: see cyg_profile.c */
    uint32_t v = plx_region_of_name(name, kind);
    if (!(v & PLX_REGION_EXCLUDED)) {
        plx_enter(t, USER_KEY(v), v & PLX_REGION_ID_MASK);
        if (PLX_UNLIKELY(t->samples != NULL))
            plx_stack_sampler_note_region(t, sp);
    }
    t->guard--;
}

static void end(const char *name, int kind)
{
    uint64_t now = plx_ticks();
    struct plx_thread *t = plx_thread();
    if (!t || !name || t->depth == 0)
        return;
    t->guard++;
    uint32_t v = plx_region_of_name(name, kind);
    struct plx_frame *f = &t->stack[t->depth - 1];
    if (f->key == USER_KEY(v))
        plx_leave(t, f, now);
    else
        t->lost_events++; /* an end that does not match the innermost begin */
    t->guard--;
}

PLX_API void plx_region_begin(const char *name) { begin(name, PLX_KIND_USER, PLX_CALLER_SP()); }
PLX_API void plx_region_end(const char *name) { end(name, PLX_KIND_USER); }
PLX_API void plx_phase_begin(const char *name) { begin(name, PLX_KIND_PHASE, PLX_CALLER_SP()); }
PLX_API void plx_phase_end(const char *name) { end(name, PLX_KIND_PHASE); }

static const char *uevent_names[PLX_MAX_UEVENTS];
static _Atomic uint32_t nuevent_names;
static atomic_flag uevent_lock = ATOMIC_FLAG_INIT;

uint32_t plx_uevent_id(const char *name)
{
    uint32_t n = atomic_load_explicit(&nuevent_names, memory_order_acquire);
    for (uint32_t i = 0; i < n; i++)
        if (uevent_names[i] == name || strcmp(uevent_names[i], name) == 0)
            return i;
    while (atomic_flag_test_and_set_explicit(&uevent_lock, memory_order_acquire))
        sched_yield();
    n = atomic_load_explicit(&nuevent_names, memory_order_relaxed);
    uint32_t id = n;
    for (uint32_t i = 0; i < n; i++)
        if (strcmp(uevent_names[i], name) == 0)
            id = i;
    if (id == n && n < PLX_MAX_UEVENTS) {
        uevent_names[n] = plx_arena_strdup(name);
        struct plx_rec rec;
        plx_rec_init(&rec);
        plx_enc_user_event_def(&rec, n, name);
        plx_rec_write(&rec, 0);
        atomic_store_explicit(&nuevent_names, n + 1, memory_order_release);
    }
    atomic_flag_clear_explicit(&uevent_lock, memory_order_release);
    return id;
}

PLX_API void plx_event(const char *name, double value)
{
    struct plx_thread *t = plx_thread();
    if (!t || !name)
        return;
    t->guard++;
    plx_uevent_record(t, plx_uevent_id(name), value);
    t->guard--;
}

PLX_API void plx_thread_name(const char *name)
{
    struct plx_thread *t = plx_thread();
    if (!t || !name)
        return;
    t->guard++;
    plx_thread_set_name(t, name);
    t->guard--;
}

PLX_API void plx_flush(void)
{
    struct plx_thread *t = plx_thread();
    if (t && t->buf)
        plx_trace_flush(t);
}
