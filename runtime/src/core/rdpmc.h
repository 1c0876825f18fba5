/* rdpmc (rdpmc.c): reading a perf event in user space from its mmap page, without a system
 * call, where the kernel allows it (docs/counters.md "Read paths").
 *
 * Invariants: a page is usable only when the kernel says so unambiguously
 * (cap_bit0_is_deprecated set and cap_user_rdpmc set); a reading is taken only under the page's
 * seqlock (`lock` unchanged around it) and only while the event is on a counter (`index` != 0);
 * otherwise the caller reads the group with read(). */
#ifndef PLX_RDPMC_H
#define PLX_RDPMC_H

#include <linux/perf_event.h>
#include <stdint.h>

/* Reads hardware counter `counter` (the page's index - 1; the x86 `rdpmc` instruction). */
typedef uint64_t (*plx_rdpmc_fn)(uint32_t counter);

/* Whether the kernel lets this thread read the page's event in user space. */
int plx_rdpmc_allowed(const volatile struct perf_event_mmap_page *pc);

/* The event's count now, read with `rdpmc` under the page's seqlock: 0 and *value, or -1 when
 * the page does not allow it or the event is not on a counter (index 0: not scheduled,
 * multiplexed out): then read() is the way. Gives up (-1) after `PLX_RDPMC_TRIES` changes of
 * the lock in a row. */
#define PLX_RDPMC_TRIES 64
int plx_rdpmc_read_with(const volatile struct perf_event_mmap_page *pc, plx_rdpmc_fn rd,
                        uint64_t *value);

/* How each event of a set is read (record CounterReadPaths). */
enum plx_read_path {
    PLX_PATH_NONE = 0,  /* not counted */
    PLX_PATH_READ = 1,  /* read() of the group */
    PLX_PATH_TIME = 2,  /* the group's time enabled (task-clock, cpu-clock) */
    PLX_PATH_RDPMC = 3, /* rdpmc from the event's mmap page */
    PLX_PATH_PAPI = 4,
};

/* Decides a set's read path from each event's candidate (PLX_PATH_RDPMC where the event's page
 * allows rdpmc): the set is read with rdpmc only when every event read through the perf group
 * can be (a clock event, or one without rdpmc, needs the group's read() anyway: then its rdpmc
 * candidates become PLX_PATH_READ). Returns 1 for the rdpmc path, 0 for read(). */
int plx_rdpmc_decide(uint8_t *paths, unsigned n);

/* The instruction itself (x86-64; elsewhere never called: plx_rdpmc_available() is 0). */
uint64_t plx_rdpmc_insn(uint32_t counter);
/* Whether this build can execute rdpmc at all. */
int plx_rdpmc_available(void);

#endif /* PLX_RDPMC_H */
