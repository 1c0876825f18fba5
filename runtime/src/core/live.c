/* Live files: a thread's profile tree or trace buffer (and an extension's per-thread tables)
 * kept in a file-backed shared mapping in the process directory, so what it has measured
 * survives a SIGKILL — the kernel keeps the pages of a killed process's shared file mappings.
 * Removed once the same data has been written as records (thread or process end). spec/format.md
 * defines the layout; an item is published by writing it before the header's count.
 *
 * Pooled kinds (nodes, trace, samples): a file is a slot, `live.<slot>.<kind>`, owned by the
 * thread its header names; a thread's end gives it back (owner PLX_NO_INDEX) for the next thread
 * to take, so a short-lived thread costs no file made or removed once the pool has a free slot. */
#include "plx_internal.h"

#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct live_file {
    dev_t dev;
    ino_t ino;
    size_t bytes; /* the mapping's first bytes that the file backs; 0: no file */
};

static void live_path(char *out, size_t cap, const char *kind, uint32_t name)
{
    snprintf(out, cap, "%s/live.%u.%s", plx_process_dir, name, kind);
}

static size_t page_round(size_t n)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    return (n + page - 1) / page * page;
}

/* What a live file cannot be made or grown for is said once a process for each kind of cause:
 * the data stays in memory (measured as ever, written as records at the thread's end), only a
 * SIGKILL loses it. A full disk or a size limit is "no room"; any other error (the directory
 * removed, a permission) is named by its own errno, never called a lack of room. */
static void live_not_kept(const char *path, int err)
{
    static atomic_int said[3];
    int planted = err == EEXIST || err == ELOOP || err == ESTALE;
    int full = err == ENOSPC || err == EDQUOT || err == EFBIG;
    int kind = planted ? 1 : full ? 0 : 2;
    if (atomic_exchange(&said[kind], 1))
        return;
    if (planted)
        plx_warn("%s: exists and is not this process's file (a symlink or a file someone else "
                 "made): left untouched; the data it would hold stays in memory and is lost if "
                 "the process is killed", path);
    else if (full)
        plx_warn("%s: no room for the live file (%s): the data it would hold stays in memory "
                 "and is lost if the process is killed", path, strerror(err));
    else
        plx_warn("%s: the live file cannot be made or grown (%s): the data it would hold stays in memory "
                 "and is lost if the process is killed", path, strerror(err));
}

/* Maps `live.<name>.<kind>`, `capacity` items, zeroed, owned by `thread`: the file backs its
 * first `reserve` items, page-rounded (room taken on the disk first, so no write to the mapping
 * can meet a full disk: a SIGBUS), anonymous memory the rest. *file is the file's identity and
 * the bytes it backs (0: none, the whole in memory: no name was free or no room). */
static void *live_map_at(const char *kind, uint32_t name, uint32_t thread, uint16_t item_size,
                         uint32_t capacity, uint32_t reserve, struct plx_live_header **header,
                         struct live_file *file)
{
    char path[4700];
    live_path(path, sizeof path, kind, name);
    size_t bytes = sizeof(struct plx_live_header) + (size_t)item_size * capacity;
    size_t backed = page_round(sizeof(struct plx_live_header) + (size_t)item_size * reserve);
    if (backed > page_round(bytes))
        backed = page_round(bytes);
    char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    *file = (struct live_file){0, 0, 0};
    int fd = plx_file_create(path, O_RDWR);
    int err = fd < 0 ? errno : plx_file_reserve(fd, (off_t)backed);
    struct stat st;
    if (!err && (fstat(fd, &st) != 0 ||
                 mmap(p, backed, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED))
        err = errno;
    if (fd >= 0)
        plx_sys_close(fd);
    if (err) {
        if (fd >= 0)
            unlink(path);
        live_not_kept(path, err);
    } else {
        *file = (struct live_file){st.st_dev, st.st_ino, backed};
    }
    struct plx_live_header *h = (struct plx_live_header *)p;
    memcpy(h->magic, "PLXL", 4);
    h->version = 1;
    h->item_size = item_size;
    h->thread = thread;
    h->capacity = capacity;
    memcpy(h->kind, kind, strnlen(kind, sizeof h->kind - 1));
    *header = h;
    return h + 1;
}

/* The items of a mapping its file backs (all of them when it has none: memory never fails). */
static uint32_t room_of(const struct plx_live_header *h, const struct live_file *file)
{
    if (!file->bytes)
        return h->capacity;
    size_t items = (file->bytes - sizeof *h) / h->item_size;
    return items < h->capacity ? (uint32_t)items : h->capacity;
}

/* The file under `name` backs `items` of h's items (more room taken on the disk, the mapping's
 * next pages replaced by the file's); -1 when it cannot. */
static int live_grow_at(const char *kind, uint32_t name, struct plx_live_header *h,
                        struct live_file *file, uint32_t items)
{
    if (!file->bytes)
        return 0;
    size_t bytes = sizeof *h + (size_t)h->item_size * h->capacity;
    size_t backed = page_round(sizeof *h + (size_t)h->item_size * items);
    if (backed > page_round(bytes))
        backed = page_round(bytes);
    if (backed <= file->bytes)
        return 0;
    char path[4700];
    live_path(path, sizeof path, kind, name);
    int fd = plx_file_reopen(path, O_RDWR, file->dev, file->ino);
    int err = fd < 0 ? errno : plx_file_reserve(fd, (off_t)backed);
    if (!err && mmap((char *)h + file->bytes, backed - file->bytes, PROT_READ | PROT_WRITE,
                     MAP_SHARED | MAP_FIXED, fd, (off_t)file->bytes) == MAP_FAILED)
        err = errno;
    if (fd >= 0)
        plx_sys_close(fd);
    if (err) {
        live_not_kept(path, err);
        return -1;
    }
    file->bytes = backed;
    return 0;
}

void *plx_live_map(const char *kind, uint32_t thread, uint16_t item_size, uint32_t capacity,
                   struct plx_live_header **header)
{
    struct live_file file;
    return live_map_at(kind, thread, thread, item_size, capacity, capacity, header, &file);
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

/* ---- a file grown from a signal handler -------------------------------------------------- */

/* Async-signal-safe (no lock, no allocation, no message): the file `fd` of `h`'s mapping backs
 * `items` items, its room on the disk taken first, then the mapping's next pages replaced by the
 * file's. *bytes is what it backs; -1 when the disk or the size limit has no room. */
int plx_live_extend(struct plx_live_header *h, int fd, size_t *bytes, uint32_t items)
{
    size_t whole = page_round(sizeof *h + (size_t)h->item_size * h->capacity);
    size_t want = page_round(sizeof *h + (size_t)h->item_size * items);
    if (want > whole)
        want = whole;
    if (fd < 0 || !*bytes)
        return -1;
    if (want <= *bytes)
        return 0;
    if (plx_file_reserve(fd, (off_t)want) != 0 ||
        mmap((char *)h + *bytes, want - *bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd,
             (off_t)*bytes) == MAP_FAILED)
        return -1;
    *bytes = want;
    return 0;
}

/* How many items of h the file's first `bytes` hold. */
uint32_t plx_live_items_in(const struct plx_live_header *h, size_t bytes)
{
    struct live_file file = {0, 0, bytes};
    return bytes ? room_of(h, &file) : 0;
}

/* ---- pooled slots -------------------------------------------------------------------------- */

#define POOL_SLOTS 4096u

struct pool {
    const char *kind;
    struct plx_live_header *slot[POOL_SLOTS]; /* every file made, by its name's number */
    struct live_file file[POOL_SLOTS];
    uint32_t nslots;
    uint32_t free[POOL_SLOTS]; /* numbers of the slots given back */
    uint32_t nfree;
};
#define POOLS 3
static struct pool pools[POOLS] = {{.kind = "nodes"}, {.kind = "trace"}, {.kind = "samples"}};
static atomic_flag pool_lock = ATOMIC_FLAG_INIT;

static struct pool *pool_of(const char *kind)
{
    return kind[0] == 'n' ? &pools[0] : kind[0] == 't' ? &pools[1] : &pools[2];
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

/* The slot's number of h, POOL_SLOTS if h is not pooled; under the lock. */
static uint32_t slot_of(const struct pool *p, const struct plx_live_header *h)
{
    for (uint32_t n = 0; n < p->nslots; n++)
        if (p->slot[n] == h)
            return n;
    return POOL_SLOTS;
}

void *plx_live_take(const char *kind, uint32_t thread, uint16_t item_size, uint32_t capacity,
                    uint32_t reserve, struct plx_live_header **header, uint32_t *room)
{
    struct pool *p = pool_of(kind);
    struct live_file file;
    pool_take_lock();
    if (p->nfree) {
        /* every slot of a kind has the same item size and capacity (fixed at start) */
        uint32_t n = p->free[--p->nfree];
        struct plx_live_header *h = p->slot[n];
        h->count = 0;
        h->thread = thread;
        file = p->file[n];
        pool_give_lock();
        /* only the taker grows a slot: its file record is the taker's until it is given back */
        if (room_of(h, &file) < reserve && live_grow_at(kind, n, h, &file, reserve) == 0) {
            pool_take_lock();
            p->file[n] = file;
            pool_give_lock();
        }
        *header = h;
        *room = room_of(h, &file);
        return h + 1;
    }
    uint32_t n = p->nslots < POOL_SLOTS ? p->nslots++ : POOL_SLOTS;
    pool_give_lock();
    if (n == POOL_SLOTS) { /* unpooled, named by its thread; it never grows */
        void *items = live_map_at(kind, thread, thread, item_size, capacity, reserve, header, &file);
        *room = items ? room_of(*header, &file) : 0;
        return items;
    }
    void *items = live_map_at(kind, n, thread, item_size, capacity, reserve, header, &file);
    pool_take_lock();
    p->slot[n] = items ? *header : NULL;
    p->file[n] = file;
    pool_give_lock();
    *room = items ? room_of(*header, &file) : 0;
    return items;
}

int plx_live_grow(const char *kind, struct plx_live_header *h, uint32_t items, uint32_t *room)
{
    struct pool *p = pool_of(kind);
    pool_take_lock();
    uint32_t n = slot_of(p, h);
    struct live_file file = n < POOL_SLOTS ? p->file[n] : (struct live_file){0, 0, 0};
    pool_give_lock();
    if (n == POOL_SLOTS || live_grow_at(kind, n, h, &file, items) != 0)
        return -1;
    pool_take_lock();
    p->file[n] = file;
    pool_give_lock();
    *room = room_of(h, &file);
    return 0;
}

/* The file stops standing for its thread (readers skip a slot nobody owns; an unpooled file,
 * named by its thread, is removed); the thread goes on using the mapping as memory. */
void plx_live_disown(const char *kind, struct plx_live_header *h)
{
    if (!h || h->thread == PLX_NO_INDEX)
        return;
    struct pool *p = pool_of(kind);
    pool_take_lock();
    uint32_t n = slot_of(p, h);
    pool_give_lock();
    if (n == POOL_SLOTS)
        plx_live_remove(kind, h->thread);
    __atomic_store_n(&h->thread, PLX_NO_INDEX, __ATOMIC_RELEASE);
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
    uint32_t n = slot_of(p, h);
    if (n < POOL_SLOTS) {
        p->free[p->nfree++] = n;
        pool_give_lock();
        return;
    }
    pool_give_lock();
    /* not pooled (the pool was full): a file of its own, named by its thread, removed */
    if (owner != PLX_NO_INDEX)
        plx_live_remove(kind, owner);
    plx_live_unmap(h);
}

/* A pooled slot (plx_live_take) whose file stays open, so that a signal handler can grow it
 * (plx_live_extend): *fd close-on-exec, above the program's low descriptors; *bytes what the
 * file backs. *fd is -1 where it cannot grow: memory only, or an unpooled file (the pool full),
 * whose first *bytes the file backs all the same. */
void *plx_live_take_open(const char *kind, uint32_t thread, uint16_t item_size, uint32_t capacity,
                         uint32_t reserve, struct plx_live_header **header, int *fd, size_t *bytes)
{
    uint32_t room;
    void *items = plx_live_take(kind, thread, item_size, capacity, reserve, header, &room);
    *fd = -1;
    *bytes = 0;
    if (!items)
        return NULL;
    struct pool *p = pool_of(kind);
    pool_take_lock();
    uint32_t n = slot_of(p, *header);
    struct live_file file = n < POOL_SLOTS ? p->file[n] : (struct live_file){0, 0, 0};
    pool_give_lock();
    if (n == POOL_SLOTS) {
        if (room < capacity) /* the file backs its first items only, and never grows */
            *bytes = page_round(sizeof **header + (size_t)item_size * room);
        return items;
    }
    if (!file.bytes)
        return items;
    char path[4700];
    live_path(path, sizeof path, kind, n);
    int f = plx_file_reopen(path, O_RDWR, file.dev, file.ino);
    int high = f >= 0 ? fcntl(f, F_DUPFD_CLOEXEC, 512) : -1;
    if (high >= 0) {
        plx_sys_close(f);
        f = high;
    }
    *fd = f;
    *bytes = file.bytes;
    return items;
}

/* The slot of plx_live_take_open given back, its file closed: `bytes` is what the file backs
 * now (grown by plx_live_extend), kept for the slot's next taker. */
void plx_live_give_open(const char *kind, struct plx_live_header *h, int fd, size_t bytes)
{
    if (fd >= 0)
        plx_sys_close(fd);
    if (!h)
        return;
    struct pool *p = pool_of(kind);
    pool_take_lock();
    uint32_t n = slot_of(p, h);
    if (n < POOL_SLOTS && bytes > p->file[n].bytes)
        p->file[n].bytes = bytes;
    pool_give_lock();
    plx_live_give(kind, h);
}

/* Process end: every slot given back is removed (the others' threads were killed mid-write). */
void plx_live_pool_remove(void)
{
    int saved = errno;
    for (int k = 0; k < POOLS; k++) {
        struct pool *p = &pools[k];
        pool_take_lock();
        for (uint32_t n = 0; n < p->nslots; n++)
            if (p->slot[n] && p->file[n].bytes && p->slot[n]->thread == PLX_NO_INDEX) {
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
    for (int k = 0; k < POOLS; k++) {
        struct pool *p = &pools[k];
        for (uint32_t i = 0; i < p->nfree; i++)
            plx_live_unmap(p->slot[p->free[i]]);
        p->nslots = p->nfree = 0;
    }
}
