/* Region table: function addresses and region names mapped to dense ids shared by all threads.
 *
 * Readers (the hot path) never lock: a slot's value is stored before its key is published with
 * release order. Writers hold `lock`, a spin lock that is only taken on first sight of a new
 * function or name, with the thread's re-entry guard set.
 *
 * A function of an unloaded library (dlclose) leaves the address table: its slot's key becomes
 * the address with RETIRED set, which no lookup matches but which keeps the probe sequence
 * whole, so the next code at that address is resolved afresh, in the module loaded there. A
 * retired slot whose module is loaded again (the same file at the same place) is revived,
 * region and all; slots are never emptied. */
#include "counters.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define FN_SLOTS (1u << 21)
#define NAME_SLOTS (1u << 16)
#define RETIRED ((uintptr_t)1 << 63) /* above every user-space address */

struct plx_slot *plx_fn_slots;
uint32_t plx_fn_mask = 0;
_Atomic uint32_t plx_region_count;
uint64_t plx_throttle_calls;
uint64_t plx_throttle_ticks;

static struct plx_slot *ptr_slots;   /* user-region name pointer → id */
static struct plx_slot *text_slots;  /* hash of (kind, name text) → id */
static uint32_t fn_used;

struct region_info {
    const char *name;
    const char *file;
    unsigned line;
    struct plx_slot *slot;  /* where the id is published, for throttling */
    uint32_t module_id;
    uint64_t address;
    uint8_t kind, flags, throttled;
};
static struct region_info *info;
static atomic_flag lock = ATOMIC_FLAG_INIT;

static void lock_take(void)
{
    while (atomic_flag_test_and_set_explicit(&lock, memory_order_acquire))
        sched_yield();
}

static void lock_give(void)
{
    atomic_flag_clear_explicit(&lock, memory_order_release);
}

static void *reserve(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static void write_def(uint32_t id)
{
    struct region_info *r = &info[id];
    struct plx_rec rec;
    plx_rec_init(&rec);
    plx_enc_region_def(&rec, id, r->kind, r->flags, r->module_id, r->address, r->name, r->file,
                       r->line);
    plx_rec_write(&rec, 0);
}

/* Called with the lock held. */
static uint32_t new_region(const char *name, int kind, const struct plx_symbol *sym,
                           uint64_t address, int excluded, struct plx_slot *slot)
{
    uint32_t id = atomic_load_explicit(&plx_region_count, memory_order_relaxed);
    if (id >= PLX_MAX_REGIONS)
        return PLX_REGION_EXCLUDED;
    struct region_info *r = &info[id];
    r->name = name;
    r->kind = (uint8_t)kind;
    r->flags = excluded ? 1 : 0;
    r->module_id = sym ? sym->module_id : PLX_NO_INDEX;
    r->file = sym ? sym->file : NULL;
    r->line = sym ? sym->line : 0;
    r->address = address;
    r->slot = slot;
    atomic_store_explicit(&plx_region_count, id + 1, memory_order_release);
    write_def(id);
    return id | (excluded ? PLX_REGION_EXCLUDED : 0);
}

int plx_regions_init(void)
{
    plx_fn_slots = reserve(sizeof(struct plx_slot) * FN_SLOTS);
    ptr_slots = reserve(sizeof(struct plx_slot) * NAME_SLOTS);
    text_slots = reserve(sizeof(struct plx_slot) * NAME_SLOTS);
    info = reserve(sizeof(struct region_info) * PLX_MAX_REGIONS);
    if (!plx_fn_slots || !ptr_slots || !text_slots || !info)
        return -1;
    plx_fn_mask = FN_SLOTS - 1;
    lock_take();
    new_region("plx_flush", PLX_KIND_RUNTIME, NULL, 0, 0, NULL);
    new_region("plx_symbols", PLX_KIND_RUNTIME, NULL, 0, 0, NULL);
    lock_give();
    return 0;
}

/* LLVM's outlined OpenMP bodies (.omp_outlined., .omp_task_entry., ...) are never measured as
 * functions: the construct region that runs them (adapters/omp) stands for them. */
static int outlined_by_llvm(const char *name)
{
    return strncmp(name, ".omp_", 5) == 0;
}

/* Under the lock: the retired slot of `addr` in `module`, published again (its value in *out)
 * with the patching of its hooks to be tried again in the code loaded anew. */
static int revive(uintptr_t addr, uint32_t module, uint32_t *out)
{
    if (module == PLX_NO_INDEX)
        return 0;
    for (uint32_t i = plx_hash_ptr(addr) & plx_fn_mask;; i = (i + 1) & plx_fn_mask) {
        uintptr_t k = atomic_load_explicit(&plx_fn_slots[i].key, memory_order_relaxed);
        if (k == 0)
            return 0;
        uint32_t v = atomic_load_explicit(&plx_fn_slots[i].value, memory_order_relaxed);
        if (k != (addr | RETIRED) || info[v & PLX_REGION_ID_MASK].module_id != module)
            continue;
        v &= ~(PLX_REGION_ENTER_TRIED | PLX_REGION_EXIT_TRIED);
        atomic_store_explicit(&plx_fn_slots[i].value, v, memory_order_relaxed);
        atomic_store_explicit(&plx_fn_slots[i].key, addr, memory_order_release);
        *out = v;
        return 1;
    }
}

uint32_t plx_region_of_address_slow(uintptr_t addr)
{
    if (addr == 0)
        return PLX_REGION_EXCLUDED;
    lock_take();
    uint32_t i = plx_hash_ptr(addr) & plx_fn_mask;
    for (;;) {
        uintptr_t k = atomic_load_explicit(&plx_fn_slots[i].key, memory_order_relaxed);
        if (k == addr) {
            uint32_t v = atomic_load_explicit(&plx_fn_slots[i].value, memory_order_relaxed);
            lock_give();
            return v;
        }
        if (k == 0)
            break;
        i = (i + 1) & plx_fn_mask;
    }
    uint32_t value = PLX_REGION_EXCLUDED;
    if (fn_used < FN_SLOTS / 4 * 3) {
        struct plx_symbol sym = {NULL, PLX_NO_INDEX, 0, NULL, 0, 0};
        char buf[32];
        const char *name;
        int found = plx_symbol_lookup(addr, &sym);
        if (revive(addr, sym.module_id, &value)) {
            lock_give();
            return value;
        }
        if (found == 0) {
            name = sym.name;
        } else {
            snprintf(buf, sizeof buf, "0x%lx", (unsigned long)addr);
            name = plx_arena_strdup(buf);
        }
        const char *subject = plx_name_qualified(name);
        int excluded = plx_filter_excludes(subject, sym.file) || outlined_by_llvm(name) ||
                       sym.deleting_dtor;
        value = new_region(name, PLX_KIND_FUNCTION, &sym, addr, excluded, &plx_fn_slots[i]);
        if (!excluded && plx_filter_cputime(subject, sym.file))
            value |= PLX_REGION_CPU;
        uint32_t ctx = excluded ? 0 : plx_counters_context_of(subject);
        if (ctx && !(value & PLX_REGION_EXCLUDED)) {
            plx_counters_set_region(value & PLX_REGION_ID_MASK, ctx);
            value |= PLX_REGION_COUNTERS;
        }
        fn_used++;
    }
    atomic_store_explicit(&plx_fn_slots[i].value, value, memory_order_relaxed);
    atomic_store_explicit(&plx_fn_slots[i].key, addr, memory_order_release);
    lock_give();
    return value;
}

static uintptr_t text_hash(const char *s, int kind)
{
    uint64_t h = 1469598103934665603ull ^ (uint64_t)kind;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return (uintptr_t)(h | 1);
}

/* By the name's text alone (for names in buffers that do not outlive the call: JNI strings). */
uint32_t plx_region_of_text(const char *name, int kind)
{
    lock_take();
    uint32_t value = PLX_REGION_EXCLUDED;
    uintptr_t h = text_hash(name, kind);
    uint32_t j = plx_hash_ptr(h) & (NAME_SLOTS - 1);
    for (;;) {
        uintptr_t k = atomic_load_explicit(&text_slots[j].key, memory_order_relaxed);
        if (k == 0) {
            value = new_region(plx_arena_strdup(name), kind, NULL, 0, 0, NULL);
            atomic_store_explicit(&text_slots[j].value, value, memory_order_relaxed);
            atomic_store_explicit(&text_slots[j].key, h, memory_order_release);
            break;
        }
        uint32_t v = atomic_load_explicit(&text_slots[j].value, memory_order_relaxed);
        if (k == h && strcmp(info[v & PLX_REGION_ID_MASK].name, name) == 0) {
            value = v;
            break;
        }
        j = (j + 1) & (NAME_SLOTS - 1);
    }
    lock_give();
    return value;
}

uint32_t plx_region_of_name(const char *name, int kind)
{
    uintptr_t pkey = (uintptr_t)name ^ ((uintptr_t)kind << 60);
    if (pkey == 0)
        pkey = 1;
    uint32_t i = plx_hash_ptr(pkey) & (NAME_SLOTS - 1);
    for (;;) {
        uintptr_t k = atomic_load_explicit(&ptr_slots[i].key, memory_order_acquire);
        if (k == pkey)
            return atomic_load_explicit(&ptr_slots[i].value, memory_order_relaxed);
        if (k == 0)
            break;
        i = (i + 1) & (NAME_SLOTS - 1);
    }
    /* First sight of this pointer: find or define the name under the lock. */
    uint32_t value = plx_region_of_text(name, kind);
    /* Publish the pointer unless the table is crowded (then the text lookup serves). */
    lock_take();
    i = plx_hash_ptr(pkey) & (NAME_SLOTS - 1);
    for (uint32_t n = 0; n < 64; n++, i = (i + 1) & (NAME_SLOTS - 1)) {
        uintptr_t k = atomic_load_explicit(&ptr_slots[i].key, memory_order_relaxed);
        if (k == pkey)
            break;
        if (k == 0) {
            atomic_store_explicit(&ptr_slots[i].value, value, memory_order_relaxed);
            atomic_store_explicit(&ptr_slots[i].key, pkey, memory_order_release);
            break;
        }
    }
    lock_give();
    return value;
}

/* A region of code without a symbol of its own (kind 7, an OpenMP construct): `address` is a
 * code address on its source line, resolved by the reader. Defined anew on every call: the
 * caller keeps the id. */
uint32_t plx_region_define_code(const char *name, int kind, uintptr_t address)
{
    struct plx_symbol sym = {NULL, PLX_NO_INDEX, 0, NULL, 0, 0};
    plx_symbol_lookup(address, &sym); /* for its module only */
    sym.file = NULL;
    sym.line = 0;
    lock_take();
    uint32_t v = new_region(plx_arena_strdup(name), kind, &sym, address, 0, NULL);
    lock_give();
    return v & PLX_REGION_ID_MASK;
}

/* Binds function address `fn` to `region` unless the compiler hooks have seen it already: their
 * calls then enter `region`, or with `hide` are excluded (and patched out) because the caller
 * enters the region itself. */
void plx_region_bind(uintptr_t fn, uint32_t region, int hide)
{
    if (fn == 0)
        return;
    lock_take();
    uint32_t i = plx_hash_ptr(fn) & plx_fn_mask;
    for (;;) {
        uintptr_t k = atomic_load_explicit(&plx_fn_slots[i].key, memory_order_relaxed);
        if (k == fn)
            break;
        if (k == 0) {
            if (fn_used < FN_SLOTS / 4 * 3) {
                atomic_store_explicit(&plx_fn_slots[i].value,
                                      region | (hide ? PLX_REGION_EXCLUDED : 0),
                                      memory_order_relaxed);
                atomic_store_explicit(&plx_fn_slots[i].key, fn, memory_order_release);
                fn_used++;
            }
            break;
        }
        i = (i + 1) & plx_fn_mask;
    }
    lock_give();
}

/* Sets flag bits in the published value of a function's slot. */
void plx_region_mark(uintptr_t addr, uint32_t bits)
{
    uint32_t i = plx_hash_ptr(addr) & plx_fn_mask;
    for (;;) {
        uintptr_t k = atomic_load_explicit(&plx_fn_slots[i].key, memory_order_acquire);
        if (k == addr) {
            atomic_fetch_or_explicit(&plx_fn_slots[i].value, bits, memory_order_relaxed);
            return;
        }
        if (k == 0)
            return;
        i = (i + 1) & plx_fn_mask;
    }
}

void plx_regions_unloaded(void)
{
    uint32_t gone[64];
    uint32_t n;
    while ((n = plx_symbols_unloaded(gone, 64)) > 0) {
        lock_take();
        uint32_t count = atomic_load_explicit(&plx_region_count, memory_order_relaxed);
        for (uint32_t id = 0; id < count; id++) {
            struct region_info *r = &info[id];
            if (r->kind != PLX_KIND_FUNCTION || !r->slot ||
                atomic_load_explicit(&r->slot->key, memory_order_relaxed) != r->address)
                continue;
            for (uint32_t j = 0; j < n; j++)
                if (r->module_id == gone[j])
                    atomic_store_explicit(&r->slot->key, r->address | RETIRED,
                                          memory_order_release);
        }
        lock_give();
    }
}

int plx_region_is_excluded(uint32_t id)
{
    return id < PLX_MAX_REGIONS && (info[id].flags & 1);
}

/* A Throttled record the first time a callpath (or thread) of region `id` is throttled; the
 * region stays measured elsewhere. */
void plx_region_throttle(uint32_t id, uint64_t calls, uint64_t ticks)
{
    lock_take();
    struct region_info *r = &info[id];
    if (!r->throttled) {
        r->throttled = 1;
        struct plx_rec rec;
        plx_rec_init(&rec);
        plx_enc_throttled(&rec, id, calls, ticks);
        plx_rec_write(&rec, 0);
    }
    lock_give();
}

void plx_regions_rewrite(void)
{
    /* After fork the child may not inherit a held lock from a thread that no longer exists. */
    atomic_flag_clear(&lock);
    uint32_t n = atomic_load(&plx_region_count);
    for (uint32_t id = 0; id < n; id++)
        write_def(id);
}

/* After a reload: functions the new contexts name get PLX_REGION_COUNTERS (their next entry
 * counts), the others lose it. Excluded functions stay excluded (their hooks may be gone). */
void plx_regions_recount(void)
{
    lock_take();
    uint32_t n = atomic_load(&plx_region_count);
    for (uint32_t id = 0; id < n; id++) {
        struct region_info *r = &info[id];
        if (r->kind != PLX_KIND_FUNCTION || !r->slot || (r->flags & 1))
            continue;
        uint32_t ctx = plx_counters_context_of(r->name);
        plx_counters_set_region(id, ctx);
        if (ctx)
            atomic_fetch_or_explicit(&r->slot->value, PLX_REGION_COUNTERS, memory_order_release);
        else
            atomic_fetch_and_explicit(&r->slot->value, ~PLX_REGION_COUNTERS, memory_order_release);
    }
    lock_give();
}
