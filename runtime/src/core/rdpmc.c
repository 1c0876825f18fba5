/* Reading a perf event with rdpmc from its mmap page (the protocol of linux/perf_event.h's
 * struct perf_event_mmap_page): the decision, the seqlock loop and the instruction. */
#include "rdpmc.h"

int plx_rdpmc_allowed(const volatile struct perf_event_mmap_page *pc)
{
    /* before cap_bit0_is_deprecated, bit 0 meant either capability: trust neither */
    return pc && pc->cap_bit0_is_deprecated && pc->cap_user_rdpmc;
}

int plx_rdpmc_decide(uint8_t *paths, unsigned n)
{
    int any = 0, all = 1;
    for (unsigned i = 0; i < n; i++) {
        if (paths[i] == PLX_PATH_RDPMC)
            any = 1;
        else if (paths[i] == PLX_PATH_READ || paths[i] == PLX_PATH_TIME)
            all = 0;
    }
    if (any && all)
        return 1;
    for (unsigned i = 0; i < n; i++)
        if (paths[i] == PLX_PATH_RDPMC)
            paths[i] = PLX_PATH_READ;
    return 0;
}

int plx_rdpmc_read_with(const volatile struct perf_event_mmap_page *pc, plx_rdpmc_fn rd,
                        uint64_t *value)
{
    if (!plx_rdpmc_allowed(pc))
        return -1;
    for (int tries = 0; tries < PLX_RDPMC_TRIES; tries++) {
        uint32_t seq = pc->lock;
        __atomic_signal_fence(__ATOMIC_SEQ_CST); /* the kernel's barrier(): no reordering */
        uint32_t index = pc->index;
        int64_t count = pc->offset;
        uint16_t width = pc->pmc_width;
        int on = pc->cap_user_rdpmc && index != 0 && width > 0 && width <= 64;
        if (on) {
            uint64_t raw = rd(index - 1);
            /* the counter is `width` bits wide: sign-extend it before adding the offset */
            int64_t pmc = (int64_t)(raw << (64 - width)) >> (64 - width);
            count += pmc;
        }
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        if (pc->lock != seq)
            continue; /* the kernel updated the page meanwhile: read again */
        if (!on)
            return -1;
        *value = (uint64_t)count;
        return 0;
    }
    return -1;
}

#if defined(__x86_64__)
uint64_t plx_rdpmc_insn(uint32_t counter)
{
    uint32_t lo, hi;
    __asm__ volatile("rdpmc" : "=a"(lo), "=d"(hi) : "c"(counter));
    return (uint64_t)hi << 32 | lo;
}

int plx_rdpmc_available(void)
{
    return 1;
}
#else
uint64_t plx_rdpmc_insn(uint32_t counter)
{
    (void)counter;
    return 0;
}

int plx_rdpmc_available(void)
{
    return 0;
}
#endif
