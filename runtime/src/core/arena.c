/* Memory the runtime keeps for the whole run (names, symbol tables): bump-allocated from
 * anonymous mappings, never freed, safe to use from any thread. */
#include "plx_internal.h"

#include <sched.h>
#include <string.h>
#include <sys/mman.h>

#define BLOCK (1u << 20)

static char *cur, *lim;
static atomic_flag lock = ATOMIC_FLAG_INIT;

void *plx_arena_alloc(size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (n >= BLOCK / 4) { /* large: its own mapping */
        void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        return p == MAP_FAILED ? NULL : p;
    }
    while (atomic_flag_test_and_set_explicit(&lock, memory_order_acquire))
        sched_yield();
    if (!cur || (size_t)(lim - cur) < n) {
        void *p = mmap(NULL, BLOCK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) {
            atomic_flag_clear_explicit(&lock, memory_order_release);
            return NULL;
        }
        cur = p;
        lim = cur + BLOCK;
    }
    void *r = cur;
    cur += n;
    atomic_flag_clear_explicit(&lock, memory_order_release);
    return r;
}

char *plx_arena_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = plx_arena_alloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}
