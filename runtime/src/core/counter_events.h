/* Counter event names to perf_event (type, config): perf's names (task-clock, page-faults,
 * cycles, L1-dcache-load-misses, ...) and raw rNNNN codes; PAPI names are recognised by their
 * form only (PAPI_* presets, COMPONENT::EVENT natives). Shared by libplx and plx. */
#ifndef PLX_COUNTER_EVENTS_H
#define PLX_COUNTER_EVENTS_H

#include <stddef.h>
#include <stdint.h>

/* 0 and (type, config) for a perf name or rNNNN, -1 otherwise. */
int plx_counter_event_lookup(const char *name, uint32_t *type, uint64_t *config);
/* Whether `name` has the form of a PAPI event (PAPI_TOT_INS, perf::PAGE-FAULTS). */
int plx_counter_papi_name(const char *name);
/* A name the filter grammar accepts: a perf name, rNNNN, or a PAPI name. */
int plx_counter_event_valid(const char *name);
/* The i-th perf name (generic, then cache events written into `buf`), NULL past the last:
 * the names a mistyped one is compared with. */
const char *plx_counter_event_name(size_t i, char *buf, size_t cap);

#endif
