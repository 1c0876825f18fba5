/* Counters (counters.c): per-thread perf_event groups read at thread start/end and at the
 * entry/exit of the functions a `counters` context of the filter file names (docs/counters.md).
 *
 * Invariants: the hot path never reaches this file. A function is counted when its region's
 * slot carries PLX_REGION_COUNTERS, decided at first sight (and again at a reload) like the
 * filter; its frame then carries PLX_FRAME_COUNTED in `cpu` and the hooks' slow paths call
 * plx_counters_enter/exit. Each thread owns its groups and its counting state; another thread
 * touches them only at the process end, when the owner no longer records. */
#ifndef PLX_COUNTERS_H
#define PLX_COUNTERS_H

#include "plx_internal.h"
#include "filter_parse.h"

#define PLX_CTR_MAX_EVENTS PLX_FILTER_MAX_EVENTS /* events in one set (a perf group) */
#define PLX_CTR_MAX_SETS 64    /* event sets of a run, over every reload */
#define PLX_CTR_MAX_CONTEXTS 128

/* Bits of plx_frame.cpu below the CPU time (which is kept a multiple of 4). */
#define PLX_FRAME_CPU 1ull
#define PLX_FRAME_COUNTED 2ull

/* Starts a new configuration (epoch) of contexts; rules are added, then committed. */
PLX_HIDDEN void plx_counters_begin(void);
PLX_HIDDEN void plx_counters_add_rule(const struct plx_filter_rule *rule);
PLX_HIDDEN void plx_counters_commit(const char *path, int bad_lines);

/* At process start, after the filter: PLX_COUNTERS (whole-thread totals), the reload signal. */
PLX_HIDDEN void plx_counters_init(void);
/* The context of a function named `name` in the current configuration: index + 1, or 0. */
PLX_HIDDEN uint32_t plx_counters_context_of(const char *name);
PLX_HIDDEN void plx_counters_set_region(uint32_t region, uint32_t context);
PLX_HIDDEN int plx_counters_active(void);

PLX_HIDDEN void plx_counters_thread_start(struct plx_thread *t);
/* Closes the counted frames still open, then writes the thread's counter records. */
PLX_HIDDEN void plx_counters_thread_end(struct plx_thread *t);
PLX_HIDDEN void plx_counters_after_fork(struct plx_thread *t);
/* After fork: the set definitions again, into the child's file. */
PLX_HIDDEN void plx_counters_rewrite(void);

/* Slow paths of the hooks: the innermost frame `f` is a counted function's. */
PLX_HIDDEN void plx_counters_enter(struct plx_thread *t, struct plx_frame *f);
PLX_HIDDEN void plx_counters_exit(struct plx_thread *t, struct plx_frame *f);

#endif /* PLX_COUNTERS_H */
