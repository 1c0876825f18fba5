/* The rdpmc read path (rdpmc.c) against a synthetic perf_event_mmap_page: when the kernel's
 * capability bits allow it, the seqlock protocol (a reading the kernel overlapped is taken
 * again, with the page's new offset), the sign extension of a counter narrower than 64 bits,
 * the fallback when the event is not on a counter, and a set's choice between rdpmc and read().
 * The machines the tests run on have no PMU: the instruction is replaced by `fake_rdpmc`.
 * Exit status 0 when every check holds. */
#include "../src/core/rdpmc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define CHECK(cond)                                                                       \
    do {                                                                                  \
        if (!(cond)) {                                                                    \
            fprintf(stderr, "%s:%d: failed: %s\n", __FILE__, __LINE__, #cond);            \
            failures++;                                                                   \
        }                                                                                 \
    } while (0)

static struct perf_event_mmap_page *page;
static uint64_t counter_value; /* what the fake counter holds */
static uint32_t last_counter;  /* the counter number the reader asked for */
static int calls;
static int concurrent_updates; /* rdpmc calls during which the "kernel" rewrites the page */

/* The instruction's stand-in; while `concurrent_updates` lasts, the kernel rewrites the page
 * during the reading (the event was rescheduled: a new offset, the lock moved on by 2). */
static uint64_t fake_rdpmc(uint32_t counter)
{
    calls++;
    last_counter = counter;
    if (concurrent_updates > 0) {
        concurrent_updates--;
        page->lock += 2;
        page->offset += 1000;
    }
    return counter_value;
}

static void reset(void)
{
    memset(page, 0, 4096);
    page->cap_bit0_is_deprecated = 1;
    page->cap_user_rdpmc = 1;
    page->index = 3; /* counter 2 */
    page->pmc_width = 48;
    page->offset = 500;
    page->lock = 10;
    counter_value = 0;
    calls = 0;
    concurrent_updates = 0;
}

int main(void)
{
    page = aligned_alloc(4096, 4096);
    uint64_t v = 0;

    /* a plain reading: offset + counter, from counter index - 1 */
    reset();
    counter_value = 1234;
    CHECK(plx_rdpmc_allowed(page));
    CHECK(plx_rdpmc_read_with(page, fake_rdpmc, &v) == 0);
    CHECK(v == 1734);
    CHECK(last_counter == 2 && calls == 1);

    /* the capability bits: without cap_user_rdpmc, or on a kernel where bit 0 is ambiguous
     * (cap_bit0_is_deprecated clear), never rdpmc */
    reset();
    page->cap_user_rdpmc = 0;
    CHECK(!plx_rdpmc_allowed(page));
    CHECK(plx_rdpmc_read_with(page, fake_rdpmc, &v) == -1 && calls == 0);
    reset();
    page->cap_bit0_is_deprecated = 0;
    page->cap_bit0 = 1;
    CHECK(!plx_rdpmc_allowed(page));
    CHECK(plx_rdpmc_read_with(page, fake_rdpmc, &v) == -1 && calls == 0);
    CHECK(!plx_rdpmc_allowed(NULL));

    /* index 0: the event is not on a counter now (descheduled, multiplexed out): read() */
    reset();
    page->index = 0;
    v = 77;
    CHECK(plx_rdpmc_read_with(page, fake_rdpmc, &v) == -1);
    CHECK(v == 77 && calls == 0);

    /* the seqlock: the page changed during the reading, twice; the third is consistent and
     * has the new offset */
    reset();
    counter_value = 10;
    concurrent_updates = 2;
    CHECK(plx_rdpmc_read_with(page, fake_rdpmc, &v) == 0);
    CHECK(calls == 3);
    CHECK(v == 500 + 2000 + 10);

    /* a page that never settles: given up after PLX_RDPMC_TRIES readings, read() instead */
    reset();
    concurrent_updates = 1 << 30;
    CHECK(plx_rdpmc_read_with(page, fake_rdpmc, &v) == -1);
    CHECK(calls == PLX_RDPMC_TRIES);

    /* a 48-bit counter that wrapped below zero: sign-extended, then added to the offset */
    reset();
    counter_value = 0xFFFFFFFFFFF0ull; /* -16 in 48 bits */
    page->offset = 1000;
    CHECK(plx_rdpmc_read_with(page, fake_rdpmc, &v) == 0);
    CHECK(v == 984);
    /* the bits above the width are not the counter's: ignored */
    reset();
    counter_value = 0xABCD000000000005ull;
    page->offset = 0;
    CHECK(plx_rdpmc_read_with(page, fake_rdpmc, &v) == 0);
    CHECK(v == 5);
    /* a 64-bit wide counter is taken whole */
    reset();
    page->pmc_width = 64;
    page->offset = 1;
    counter_value = 41;
    CHECK(plx_rdpmc_read_with(page, fake_rdpmc, &v) == 0 && v == 42);
    /* a width the kernel never gives: not read */
    reset();
    page->pmc_width = 0;
    CHECK(plx_rdpmc_read_with(page, fake_rdpmc, &v) == -1);

    /* a set's choice: rdpmc only when every group event can be read so */
    uint8_t all[3] = {PLX_PATH_RDPMC, PLX_PATH_RDPMC, PLX_PATH_NONE};
    CHECK(plx_rdpmc_decide(all, 3) == 1);
    CHECK(all[0] == PLX_PATH_RDPMC && all[1] == PLX_PATH_RDPMC && all[2] == PLX_PATH_NONE);
    uint8_t with_papi[2] = {PLX_PATH_RDPMC, PLX_PATH_PAPI};
    CHECK(plx_rdpmc_decide(with_papi, 2) == 1 && with_papi[0] == PLX_PATH_RDPMC);
    /* a software event in the group (page-faults): the group is read(), rdpmc events too */
    uint8_t mixed[2] = {PLX_PATH_RDPMC, PLX_PATH_READ};
    CHECK(plx_rdpmc_decide(mixed, 2) == 0);
    CHECK(mixed[0] == PLX_PATH_READ && mixed[1] == PLX_PATH_READ);
    /* a clock event comes from the group's read() (its time enabled) */
    uint8_t clock[2] = {PLX_PATH_TIME, PLX_PATH_RDPMC};
    CHECK(plx_rdpmc_decide(clock, 2) == 0);
    CHECK(clock[0] == PLX_PATH_TIME && clock[1] == PLX_PATH_READ);
    /* software events only (these machines): read() */
    uint8_t soft[2] = {PLX_PATH_READ, PLX_PATH_TIME};
    CHECK(plx_rdpmc_decide(soft, 2) == 0 && soft[0] == PLX_PATH_READ);
    uint8_t none[1] = {PLX_PATH_NONE};
    CHECK(plx_rdpmc_decide(none, 1) == 0);

    free(page);
    if (failures)
        fprintf(stderr, "%d checks failed\n", failures);
    return failures != 0;
}
