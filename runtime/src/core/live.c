/* Live files: a thread's profile tree or trace buffer (and an extension's per-thread tables)
 * kept in a file-backed shared mapping in the process directory, so what it has measured
 * survives a SIGKILL — the kernel keeps the pages of a killed process's shared file mappings.
 * Removed once the same data has been written as records (thread or process end). spec/format.md
 * defines the layout; an item is published by writing it before the header's count.
 *
 * Pooled kinds (nodes, trace): a file is a slot, `live.<slot>.<kind>`, owned by the thread its
 * header names; a thread's end gives it back (owner PLX_NO_INDEX) for the next thread to take,
 * so a short-lived thread costs no system call once the pool has a free slot. */
#include "plx_internal.h"

#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static void live_path(char *out, size_t cap, const char *kind, uint32_t name)
{
    snprintf(out, cap, "%s/live.%u.%s", plx_process_dir, name, kind);
}

/* Maps `live.<name>.<kind>` fresh (zeroed), owned by `thread`. */
static void *live_map_at(const char *kind, uint32_t name, uint32_t thread, uint16_t item_size,
                         uint32_t capacity, struct plx_live_header **header)
{
    char path[4700];
    live_path(path, sizeof path, kind, name);
    size_t bytes = sizeof(struct plx_live_header) + (size_t)item_size * capacity;
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return NULL;
    void *p = MAP_FAILED;
    if (ftruncate(fd, (off_t)bytes) == 0)
        p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
    plx_sys_close(fd);
    if (p == MAP_FAILED) {
        unlink(path);
        return NULL;
    }
    struct plx_live_header *h = p;
    memcpy(h->magic, "PLXL", 4);
    h->version = 1;
    h->item_size = item_size;
    h->thread = thread;
    h->capacity = capacity;
    memcpy(h->kind, kind, strnlen(kind, sizeof h->kind - 1));
    *header = h;
    return (char *)p + sizeof *h;
}

void *plx_live_map(const char *kind, uint32_t thread, uint16_t item_size, uint32_t capacity,
                   struct plx_live_header **header)
{
    return live_map_at(kind, thread, thread, item_size, capacity, header);
}

void plx_live_unmap(struct plx_live_header *header)
{
    if (header)
        munmap(header, sizeof *header + (size_t)header->item_size * header->capacity);
}

void plx_live_remove(const char *kind, uint32_t thread)
{
    char path[4700];
    int saved = errno;
    live_path(path, sizeof path, kind, thread);
    unlink(path);
    errno = saved;
}

/* ---- pooled slots -------------------------------------------------------------------------- */

#define POOL_SLOTS 4096u

struct pool {
    const char *kind;
    struct plx_live_header *slot[POOL_SLOTS]; /* every file made, by its name's number */
    uint32_t nslots;
    uint32_t free[POOL_SLOTS]; /* numbers of the slots given back */
    uint32_t nfree;
};
static struct pool pools[2] = {{.kind = "nodes"}, {.kind = "trace"}};
static atomic_flag pool_lock = ATOMIC_FLAG_INIT;

static struct pool *pool_of(const char *kind)
{
    return kind[0] == 'n' ? &pools[0] : &pools[1];
}

static void pool_take_lock(void)
{
    while (atomic_flag_test_and_set_explicit(&pool_lock, memory_order_acquire))
        sched_yield();
}

static void pool_give_lock(void)
{
    atomic_flag_clear_explicit(&pool_lock, memory_order_release);
}

void *plx_live_take(const char *kind, uint32_t thread, uint16_t item_size, uint32_t capacity,
                    struct plx_live_header **header)
{
    struct pool *p = pool_of(kind);
    pool_take_lock();
    if (p->nfree) {
        /* every slot of a kind has the same item size and capacity (fixed at start) */
        struct plx_live_header *h = p->slot[p->free[--p->nfree]];
        h->count = 0;
        h->thread = thread;
        pool_give_lock();
        *header = h;
        return h + 1;
    }
    uint32_t n = p->nslots < POOL_SLOTS ? p->nslots++ : POOL_SLOTS;
    pool_give_lock();
    if (n == POOL_SLOTS)
        return plx_live_map(kind, thread, item_size, capacity, header); /* unpooled */
    void *items = live_map_at(kind, n, thread, item_size, capacity, header);
    pool_take_lock();
    p->slot[n] = items ? *header : NULL;
    pool_give_lock();
    return items;
}

/* The slot's content is in the records: it belongs to nobody; the mapping stays for reuse. */
void plx_live_give(const char *kind, struct plx_live_header *h)
{
    if (!h)
        return;
    struct pool *p = pool_of(kind);
    pool_take_lock();
    uint32_t owner = h->thread;
    h->thread = PLX_NO_INDEX;
    for (uint32_t n = 0; n < p->nslots; n++)
        if (p->slot[n] == h) {
            p->free[p->nfree++] = n;
            pool_give_lock();
            return;
        }
    pool_give_lock();
    /* not pooled (the pool was full): a file of its own, named by its thread, removed */
    char path[4700];
    int saved = errno;
    live_path(path, sizeof path, kind, owner);
    unlink(path);
    errno = saved;
    plx_live_unmap(h);
}

/* Process end: every slot given back is removed (the others' threads were killed mid-write). */
void plx_live_pool_remove(void)
{
    int saved = errno;
    for (int k = 0; k < 2; k++) {
        struct pool *p = &pools[k];
        pool_take_lock();
        for (uint32_t n = 0; n < p->nslots; n++)
            if (p->slot[n] && p->slot[n]->thread == PLX_NO_INDEX) {
                char path[4700];
                live_path(path, sizeof path, p->kind, n);
                unlink(path);
            }
        pool_give_lock();
    }
    errno = saved;
}

/* A fork()ed child: the slots are the parent's files; the child makes its own (the calling
 * thread's own mappings are replaced by thread_fork.c). */
void plx_live_pool_after_fork(void)
{
    atomic_flag_clear(&pool_lock);
    for (int k = 0; k < 2; k++) {
        struct pool *p = &pools[k];
        for (uint32_t i = 0; i < p->nfree; i++)
            plx_live_unmap(p->slot[p->free[i]]);
        p->nslots = p->nfree = 0;
    }
}
