/* Synchronization objects: a process-wide table naming each object (by its init call site, or
 * by its first use), and per-thread statistics per object kept in the thread's "sync" live
 * file. The wrappers (adapters/sync.c) call these with the thread's guard held. */
#include "hotpath.h"

#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>

#define OBJECT_SLOTS (1u << 16)
#define THREAD_SLOTS 1024u

struct object_slot {
    _Atomic uintptr_t key; /* object address; 0 empty */
    _Atomic uint32_t id1;  /* id + 1 once defined; 0 while the claiming thread writes it;
                            * RETIRED once its object ended (a joined thread): the next user
                            * of the address defines a new object in the same slot */
};

#define RETIRED UINT32_MAX

static struct object_slot objects[OBJECT_SLOTS];
static _Atomic uint32_t nobjects;

static uint32_t hash(uintptr_t a)
{
    return plx_hash_ptr(a) & (OBJECT_SLOTS - 1);
}

/* `name`: the object's own name (a Java monitor's class), or NULL: named by its site. */
static void write_object(uint32_t id, const void *object, int kind, uintptr_t site, int by_init,
                         const char *name)
{
    /* only the module: names are resolved by the reader. Never the symbol table here (its
     * first load sorts with qsort, which mallocs; __cxa_demangle too): a lock can be taken
     * inside malloc, as UCX's sbrk hook takes a rwlock with malloc's arena locked */
    uint32_t module = site ? plx_module_of(site) : PLX_NO_INDEX;
    struct plx_rec rec;
    plx_rec_init(&rec);
    plx_enc_sync_object(&rec, id, (uint8_t)kind, by_init ? 0 : 1, (uint64_t)(uintptr_t)object,
                        module, site, name);
    plx_rec_write(&rec, 0);
}

/* Defines a new object in slot i, which the caller has claimed (its id1 is 0). */
static uint32_t define(uint32_t i, const void *object, int kind, uintptr_t site, int by_init,
                       const char *name)
{
    uint32_t id = atomic_fetch_add(&nobjects, 1);
    write_object(id, object, kind, site, by_init, name);
    atomic_store_explicit(&objects[i].id1, id + 1, memory_order_release);
    return id;
}

/* The id of the object in slot i (key already matched): waits while another thread defines
 * it, and defines the next one when it was retired. */
static uint32_t slot_id(uint32_t i, const void *object, int kind, uintptr_t site, int by_init,
                        const char *name)
{
    for (;;) {
        uint32_t id1 = atomic_load_explicit(&objects[i].id1, memory_order_acquire);
        if (id1 == RETIRED) {
            if (atomic_compare_exchange_strong(&objects[i].id1, &id1, 0))
                return define(i, object, kind, site, by_init, name);
            continue;
        }
        if (id1)
            return id1 - 1;
        sched_yield(); /* another thread is defining it */
    }
}

/* The object's id, defining it on first sight. Lock-free: a slot is claimed by CAS on its key;
 * its id is published after the definition record is written. */
static uint32_t object_id(const void *object, int kind, uintptr_t site, int by_init,
                          const char *name)
{
    uintptr_t key = (uintptr_t)object;
    if (key == 0)
        return PLX_NO_INDEX;
    for (uint32_t i = hash(key), n = 0; n < OBJECT_SLOTS;) {
        uintptr_t k = atomic_load_explicit(&objects[i].key, memory_order_acquire);
        if (k == 0) {
            if (!atomic_compare_exchange_strong(&objects[i].key, &k, key))
                continue; /* someone claimed it: look again at what they put there */
            return define(i, object, kind, site, by_init, name);
        }
        if (k == key)
            return slot_id(i, object, kind, site, by_init, name);
        i = (i + 1) & (OBJECT_SLOTS - 1);
        n++;
    }
    return PLX_NO_INDEX;
}

void plx_sync_objects_after_fork(void)
{
    /* only slots in use are written: untouched pages of the table stay unallocated */
    for (uint32_t i = 0; i < OBJECT_SLOTS; i++)
        if (atomic_load_explicit(&objects[i].key, memory_order_relaxed)) {
            atomic_store_explicit(&objects[i].key, 0, memory_order_relaxed);
            atomic_store_explicit(&objects[i].id1, 0, memory_order_relaxed);
        }
    atomic_store(&nobjects, 0);
}

void plx_sync_define(const void *object, int kind, uintptr_t site, int by_init)
{
    object_id(object, kind, site, by_init, NULL);
}

void plx_sync_define_named(const void *object, int kind, const char *name)
{
    object_id(object, kind, 0, 0, name);
}

int plx_sync_known(const void *object)
{
    uintptr_t key = (uintptr_t)object;
    for (uint32_t i = hash(key), n = 0; n < OBJECT_SLOTS; i = (i + 1) & (OBJECT_SLOTS - 1), n++) {
        uintptr_t k = atomic_load_explicit(&objects[i].key, memory_order_acquire);
        if (k == 0)
            return 0;
        if (k == key) {
            uint32_t id1 = atomic_load_explicit(&objects[i].id1, memory_order_acquire);
            return id1 != 0 && id1 != RETIRED;
        }
    }
    return 0;
}

/* An entry whose object ended (plx_sync_thread_joined) takes the address's current object. */
static struct plx_sync_entry *renew(struct plx_sync_entry *e, const void *object, int kind,
                                    uintptr_t site)
{
    uint32_t id = object_id(object, kind, site, 0, NULL);
    if (id == PLX_NO_INDEX)
        return NULL;
    e->object = id;
    return e;
}

struct plx_sync_entry *plx_sync_entry(struct plx_thread *t, const void *object, int kind,
                                      uintptr_t site)
{
    if (!t->sync) {
        if (t->dead)
            return NULL;
        t->sync = plx_live_map("sync", t->index, sizeof(struct plx_sync_entry), THREAD_SLOTS,
                               &t->live_sync);
        if (!t->sync)
            return NULL;
        t->live_sync->count = THREAD_SLOTS; /* a hash table: readers take the used entries */
    }
    uintptr_t key = (uintptr_t)object;
    for (uint32_t i = plx_hash_ptr(key) & (THREAD_SLOTS - 1), n = 0; n < THREAD_SLOTS;
         i = (i + 1) & (THREAD_SLOTS - 1), n++) {
        struct plx_sync_entry *e = &t->sync[i];
        if (e->used && e->address == key)
            return e->object != PLX_NO_INDEX ? e : renew(e, object, kind, site);
        if (!e->used) {
            uint32_t id = object_id(object, kind, site, 0, NULL);
            if (id == PLX_NO_INDEX)
                return NULL;
            e->address = key;
            e->object = id;
            __atomic_store_n(&e->used, 1, __ATOMIC_RELEASE);
            return e;
        }
    }
    t->lost_events++;
    return NULL;
}

static void trace(struct plx_thread *t, unsigned subtype, uint32_t object, int kind, uint64_t waited,
                  uint32_t holder, int shared)
{
    uint64_t w[PLX_EXT_ACQUIRE_WORDS];
    if (subtype == PLX_EXT_ACQUIRE) {
        plx_ext_pack_acquire(w, object, (uint8_t)kind, holder, waited, (uint8_t)shared);
        plx_trace_ext(t, subtype, w, PLX_EXT_ACQUIRE_WORDS);
    } else {
        plx_ext_pack_release(w, object, (uint8_t)kind);
        plx_trace_ext(t, subtype, w, PLX_EXT_RELEASE_WORDS);
    }
}

/* `holds` (plx_internal.h): the object is held until its release (locks), as opposed to a
 * wait; shared or not. */
void plx_sync_acquired(struct plx_thread *t, struct plx_sync_entry *e, int kind, uint64_t now,
                       uint64_t waited, int contended, int holds)
{
    e->acquisitions++;
    e->contended += contended != 0;
    e->wait += waited;
    if (holds && e->depth++ == 0)
        e->hold_start = now;
    if (!t->java_blocked)
        trace(t, PLX_EXT_ACQUIRE, e->object, kind, waited, 0, holds == PLX_SYNC_HOLDS_SHARED);
}

void plx_sync_waited_for(struct plx_thread *t, struct plx_sync_entry *e, int kind, uint64_t waited,
                         uint32_t holder)
{
    e->acquisitions++;
    e->contended++;
    e->wait += waited;
    trace(t, PLX_EXT_ACQUIRE, e->object, kind, waited, holder, 0);
}

void plx_sync_released(struct plx_thread *t, struct plx_sync_entry *e, int kind, uint64_t now,
                       int holds)
{
    e->releases++;
    if (holds && e->depth > 0 && --e->depth == 0)
        e->hold += now - e->hold_start;
    /* the JVM's own releases inside a Java monitor wait are that wait, as its acquires are:
     * a release traced there would be a communication point of the thread inside the wait */
    if (!t->java_blocked)
        trace(t, PLX_EXT_RELEASE, e->object, kind, 0, 0, 0);
}

/* A measured thread that ends releases its own thread object (address: its pthread_t, as
 * pthread_join names it), so the join's acquire pairs with the end. A trace event only, written
 * at thread end: SyncStats do not count it. Named, when this is its first sight (the thread
 * ended before its pthread_create returned), after that pthread_create call. */
void plx_sync_thread_end(struct plx_thread *t)
{
    if (!t->buf)
        return;
    /* named after its pthread_create call, as that call names it (it may come first) */
    uint32_t id = object_id((const void *)pthread_self(), PLX_SYNC_THREAD, t->create_site,
                            t->create_site != 0, NULL);
    if (id != PLX_NO_INDEX)
        trace(t, PLX_EXT_RELEASE, id, PLX_SYNC_THREAD, 0, 0, 0);
}

static void write_stats(struct plx_thread *t, const struct plx_sync_entry *e, uint64_t now)
{
    uint64_t hold = e->hold + (e->depth ? now - e->hold_start : 0); /* still held at the end */
    struct plx_rec rec;
    plx_rec_init(&rec);
    plx_enc_sync_stats(&rec, t->index, e->object, e->acquisitions, e->contended, e->wait, hold,
                       e->releases);
    plx_rec_write(&rec, 0);
}

void plx_sync_retire(const void *object)
{
    uintptr_t key = (uintptr_t)object;
    for (uint32_t i = hash(key), n = 0; n < OBJECT_SLOTS; i = (i + 1) & (OBJECT_SLOTS - 1), n++) {
        uintptr_t k = atomic_load_explicit(&objects[i].key, memory_order_acquire);
        if (k == 0)
            break;
        if (k == key) {
            atomic_store_explicit(&objects[i].id1, RETIRED, memory_order_release);
            break;
        }
    }
}

/* A thread object is one thread's lifetime, and a join ends it: the thread's handle may name
 * the next thread (glibc reuses pthread_t), which is another object. The process table's slot
 * is retired (the next use of the handle defines a new object in it), and the joiner's entry
 * writes its statistics now and takes that next object on its next use: its slot is reused,
 * so a thread that joins thousands of threads through a few hundred handles keeps a few
 * hundred entries. Called with the joiner's guard held, after a successful join. */
void plx_sync_thread_joined(struct plx_thread *t, struct plx_sync_entry *e)
{
    plx_sync_retire((const void *)(uintptr_t)e->address);
    write_stats(t, e, plx_ticks());
    e->acquisitions = e->contended = e->wait = e->hold = e->releases = e->hold_start = 0;
    e->depth = 0;
    __atomic_store_n(&e->object, PLX_NO_INDEX, __ATOMIC_RELEASE);
}

void plx_sync_write(struct plx_thread *t)
{
    if (!t->sync)
        return;
    uint64_t now = plx_ticks();
    for (uint32_t i = 0; i < THREAD_SLOTS; i++) {
        struct plx_sync_entry *e = &t->sync[i];
        if (e->used && e->object != PLX_NO_INDEX) /* a joined thread's: written at the join */
            write_stats(t, e, now);
    }
    plx_live_remove("sync", t->index);
}

/* ---- runtime libraries whose pthread calls are their own (plx_sync_internal_library) ---- */

#define MAX_INTERNAL 4

static struct {
    uintptr_t lo, hi; /* its executable segments' span */
} internal[MAX_INTERNAL];
static _Atomic int ninternal; /* ranges published (written before) */
static atomic_flag internal_lock = ATOMIC_FLAG_INIT;

struct code_span {
    uintptr_t addr, lo, hi;
};

/* The executable span of the object whose segments hold `addr`. */
static int find_code(struct dl_phdr_info *info, size_t size, void *data)
{
    struct code_span *c = data;
    int holds = 0;
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uintptr_t a = info->dlpi_addr + ph->p_vaddr, b = a + ph->p_memsz;
        holds |= c->addr >= a && c->addr < b;
        if (ph->p_flags & PF_X) {
            lo = a < lo ? a : lo;
            hi = b > hi ? b : hi;
        }
    }
    if (!holds || hi == 0)
        return 0;
    c->lo = lo;
    c->hi = hi;
    return 1;
}

void plx_sync_internal_library(const void *addr)
{
    struct code_span c = {(uintptr_t)addr, 0, 0};
    if (!addr || plx_sync_internal_site(c.addr) || !dl_iterate_phdr(find_code, &c))
        return;
    while (atomic_flag_test_and_set_explicit(&internal_lock, memory_order_acquire))
        sched_yield();
    int n = atomic_load_explicit(&ninternal, memory_order_relaxed);
    if (n < MAX_INTERNAL) {
        internal[n].lo = c.lo;
        internal[n].hi = c.hi;
        atomic_store_explicit(&ninternal, n + 1, memory_order_release);
    }
    atomic_flag_clear_explicit(&internal_lock, memory_order_release);
}

int plx_sync_internal_site(uintptr_t site)
{
    int n = atomic_load_explicit(&ninternal, memory_order_acquire);
    for (int i = 0; i < n; i++)
        if (site >= internal[i].lo && site < internal[i].hi)
            return 1;
    return 0;
}
