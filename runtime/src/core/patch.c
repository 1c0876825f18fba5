/* Removing instrumentation at run time (Paradyn's deletion of instrumentation): the call of a
 * hook inside an excluded function is overwritten so the function runs at nearly its
 * uninstrumented cost. Done once per call site, on the excluded path, never for the exit of a
 * function that may have frames open (throttled ones keep their exit calls).
 *
 * Safety: `call rel32` (e8) becomes `cmp $rel32, %eax` (3d) by a one-byte store, so a thread
 * executing the site sees either the whole old or the whole new instruction (flags are dead
 * across a call). `call *GOT(%rip)` (ff 15, from -fno-plt) becomes a short jump over itself by
 * one locked compare-and-swap of the aligned word holding both bytes. A call is only replaced
 * when it is verified to reach the hook directly or through a PLT/GOT slot holding the hook's
 * address. PLX_PATCH=0 turns it off. */
#include "plx_internal.h"

#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static atomic_flag lock = ATOMIC_FLAG_INIT;
static atomic_int refused; /* the system does not allow writable code */
static _Atomic uint64_t patched_sites;

static int enabled(void)
{
    return plx_cfg.patch && !atomic_load_explicit(&refused, memory_order_relaxed);
}

static int32_t rel32(const unsigned char *p)
{
    int32_t v;
    memcpy(&v, p, 4);
    return v;
}

int plx_patch_plt_reaches(uintptr_t target, uintptr_t hook)
{
    const unsigned char *p = (const unsigned char *)target;
    if (p[0] == 0xf3 && p[1] == 0x0f && p[2] == 0x1e && p[3] == 0xfa)
        p += 4; /* endbr64 */
    if (p[0] == 0xf2)
        p++; /* bnd */
    if (p[0] != 0xff || p[1] != 0x25)
        return 0;
    uintptr_t got = (uintptr_t)(p + 6) + (intptr_t)rel32(p + 2);
    uintptr_t v;
    memcpy(&v, (const void *)got, sizeof v);
    return v == hook;
}

/* A locked compare-and-swap written out, so no sanitizer treats code as instrumented data. */
static int code_cas(uint64_t *p, uint64_t old, uint64_t new)
{
    unsigned char ok;
    __asm__ volatile("lock cmpxchgq %3, %1; sete %0"
                     : "=q"(ok), "+m"(*p), "+a"(old)
                     : "r"(new)
                     : "memory", "cc");
    return ok;
}

/* `ret` is the hook's return address in the instrumented function. */
void plx_patch_hook_call(uintptr_t ret, uintptr_t hook)
{
    if (!enabled())
        return;
    const unsigned char *r = (const unsigned char *)ret;
    uintptr_t site;
    unsigned char code[2];
    size_t len;
    if (r[-5] == 0xe8) { /* call rel32: direct or through the PLT */
        uintptr_t target = ret + (intptr_t)rel32(r - 4);
        if (target != hook && !plx_patch_plt_reaches(target, hook))
            return;
        site = ret - 5;
        code[0] = 0x3d;
        len = 1;
    } else if (r[-6] == 0xff && r[-5] == 0x15) { /* call *GOT(%rip), from -fno-plt */
        uintptr_t got = ret + (intptr_t)rel32(r - 4);
        uintptr_t v;
        memcpy(&v, (const void *)got, sizeof v);
        if (v != hook)
            return;
        site = ret - 6;
        code[0] = 0xeb;
        code[1] = 4;
        len = 2;
    } else {
        return;
    }
    if (len == 2 && (site & 7) == 7)
        return; /* the two bytes would straddle two words */
    uintptr_t word = site & ~(uintptr_t)7;
    long pagesz = sysconf(_SC_PAGESIZE);
    uintptr_t page = word & ~(uintptr_t)(pagesz - 1);
    while (atomic_flag_test_and_set_explicit(&lock, memory_order_acquire))
        sched_yield();
    if (mprotect((void *)page, (size_t)pagesz, PROT_READ | PROT_WRITE | PROT_EXEC) == 0) {
        uint64_t old, new;
        memcpy(&old, (const void *)word, 8);
        new = old;
        memcpy((unsigned char *)&new + (site - word), code, len);
        if (code_cas((uint64_t *)word, old, new))
            atomic_fetch_add(&patched_sites, 1);
        mprotect((void *)page, (size_t)pagesz, PROT_READ | PROT_EXEC);
    } else {
        atomic_store(&refused, 1);
    }
    atomic_flag_clear_explicit(&lock, memory_order_release);
}

uint64_t plx_patched_sites(void)
{
    return atomic_load(&patched_sites);
}
