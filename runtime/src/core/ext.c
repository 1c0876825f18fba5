/* The interface for extension libraries (ext.h), on top of the hot path's own functions. */
#include "ext.h"
#include "hotpath.h"

#define MAX_HOOKS 4

static void (*thread_end_hooks[MAX_HOOKS])(struct plx_thread *);
static void (*process_end_hooks[MAX_HOOKS])(void);

struct plx_thread *plx_ext_acquire(void)
{
    struct plx_thread *t = plx_thread();
    if (t == NULL)
        return NULL;
    t->guard++;
    return t;
}

void plx_ext_release(struct plx_thread *t)
{
    t->guard--;
}

uint32_t plx_ext_region(const char *name, int kind)
{
    return plx_region_of_name(name, kind) & PLX_REGION_ID_MASK;
}

/* Extension regions are keyed like user regions: by id with the top bit set. */
#define EXT_KEY(id) ((uintptr_t)(id) | ((uintptr_t)1 << 63))

void plx_ext_enter(struct plx_thread *t, uint32_t region)
{
    plx_enter(t, EXT_KEY(region), region);
}

void plx_ext_leave(struct plx_thread *t, uint32_t region)
{
    uint64_t now = plx_ticks();
    if (t->depth == 0)
        return;
    struct plx_frame *f = &t->stack[t->depth - 1];
    if (f->key == EXT_KEY(region))
        plx_leave(t, f, now);
    else
        t->lost_events++;
}

void plx_ext_event(struct plx_thread *t, unsigned subtype, const uint64_t *payload, unsigned words)
{
    plx_trace_ext(t, subtype, payload, words);
}

void plx_ext_rec_init(struct plx_rec *r)
{
    plx_rec_init(r);
}

void plx_ext_rec_write(struct plx_rec *r)
{
    plx_rec_write(r, 0);
}

static void add_hook(void **hooks, void *fn)
{
    for (int i = 0; i < MAX_HOOKS; i++)
        if (!hooks[i]) {
            hooks[i] = fn;
            return;
        }
}

void plx_ext_on_thread_end(void (*fn)(struct plx_thread *t))
{
    add_hook((void **)thread_end_hooks, (void *)fn);
}

void plx_ext_on_process_end(void (*fn)(void))
{
    add_hook((void **)process_end_hooks, (void *)fn);
}

void plx_ext_thread_ended(struct plx_thread *t)
{
    for (int i = 0; i < MAX_HOOKS && thread_end_hooks[i]; i++)
        thread_end_hooks[i](t);
}

void plx_ext_process_ending(void)
{
    for (int i = 0; i < MAX_HOOKS && process_end_hooks[i]; i++)
        process_end_hooks[i]();
}

void plx_ext_end_process(int reason, int status)
{
    plx_process_end(reason, status);
}

void *plx_ext_live_map(const char *kind, struct plx_thread *t, uint16_t item_size,
                       uint32_t capacity, struct plx_live_header **header)
{
    return plx_live_map(kind, t->index, item_size, capacity, header);
}

void plx_ext_live_remove(const char *kind, struct plx_thread *t, struct plx_live_header *header)
{
    plx_live_remove(kind, t->index);
    plx_live_unmap(header);
}

int plx_ext_tracing(void)
{
    return plx_cfg.trace;
}

uint64_t plx_ext_ticks(void)
{
    return plx_ticks();
}
