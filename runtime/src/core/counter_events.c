/* Counter event names (docs/formats/counters.md) to perf_event types and configs: one table for
 * libplx and the plx command (engine/crates/plx-cli/build.rs compiles this file in).
 * Standalone: no runtime state. */
#include "counter_events.h"

#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct named { const char *name; uint32_t type; uint64_t config; };
static const struct named generic[] = {
    {"task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK},
    {"cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK},
    {"page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS},
    {"faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS},
    {"minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN},
    {"major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ},
    {"context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES},
    {"cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES},
    {"cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS},
    {"migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS},
    {"alignment-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS},
    {"emulation-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS},
    {"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
    {"cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
    {"instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS},
    {"cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES},
    {"cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES},
    {"branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS},
    {"branch-instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS},
    {"branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES},
    {"bus-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES},
    {"ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES},
    {"stalled-cycles-frontend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND},
    {"stalled-cycles-backend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND},
};

static const struct named caches[] = {
    {"L1-dcache", 0, PERF_COUNT_HW_CACHE_L1D}, {"L1-icache", 0, PERF_COUNT_HW_CACHE_L1I},
    {"LLC", 0, PERF_COUNT_HW_CACHE_LL},        {"dTLB", 0, PERF_COUNT_HW_CACHE_DTLB},
    {"iTLB", 0, PERF_COUNT_HW_CACHE_ITLB},     {"branch", 0, PERF_COUNT_HW_CACHE_BPU},
    {"node", 0, PERF_COUNT_HW_CACHE_NODE},
};

/* op | result << 8, shifted 8 more into perf's cache id | op << 8 | result << 16 */
static const struct named cache_ops[] = {
    {"loads", 0, PERF_COUNT_HW_CACHE_OP_READ | (PERF_COUNT_HW_CACHE_RESULT_ACCESS << 8)},
    {"load-misses", 0, PERF_COUNT_HW_CACHE_OP_READ | (PERF_COUNT_HW_CACHE_RESULT_MISS << 8)},
    {"stores", 0, PERF_COUNT_HW_CACHE_OP_WRITE | (PERF_COUNT_HW_CACHE_RESULT_ACCESS << 8)},
    {"store-misses", 0, PERF_COUNT_HW_CACHE_OP_WRITE | (PERF_COUNT_HW_CACHE_RESULT_MISS << 8)},
    {"prefetches", 0, PERF_COUNT_HW_CACHE_OP_PREFETCH | (PERF_COUNT_HW_CACHE_RESULT_ACCESS << 8)},
    {"prefetch-misses", 0, PERF_COUNT_HW_CACHE_OP_PREFETCH | (PERF_COUNT_HW_CACHE_RESULT_MISS << 8)},
};

int plx_counter_papi_name(const char *name)
{
    return strncmp(name, "PAPI_", 5) == 0 || strstr(name, "::") != NULL;
}

int plx_counter_event_lookup(const char *name, uint32_t *type, uint64_t *config)
{
    for (size_t i = 0; i < sizeof generic / sizeof generic[0]; i++)
        if (strcmp(name, generic[i].name) == 0) {
            *type = generic[i].type;
            *config = generic[i].config;
            return 0;
        }
    if (name[0] == 'r' && name[1]) {
        char *end;
        unsigned long long raw = strtoull(name + 1, &end, 16);
        if (!*end) {
            *type = PERF_TYPE_RAW;
            *config = raw;
            return 0;
        }
    }
    for (size_t c = 0; c < sizeof caches / sizeof caches[0]; c++) {
        size_t n = strlen(caches[c].name);
        if (strncmp(name, caches[c].name, n) != 0 || name[n] != '-')
            continue;
        for (size_t o = 0; o < sizeof cache_ops / sizeof cache_ops[0]; o++)
            if (strcmp(name + n + 1, cache_ops[o].name) == 0) {
                *type = PERF_TYPE_HW_CACHE;
                *config = caches[c].config | (cache_ops[o].config << 8);
                return 0;
            }
    }
    return -1;
}


int plx_counter_event_valid(const char *name)
{
    uint32_t type;
    uint64_t config;
    return plx_counter_event_lookup(name, &type, &config) == 0 || plx_counter_papi_name(name);
}

const char *plx_counter_event_name(size_t i, char *buf, size_t cap)
{
    size_t ngeneric = sizeof generic / sizeof generic[0];
    size_t nops = sizeof cache_ops / sizeof cache_ops[0];
    if (i < ngeneric)
        return generic[i].name;
    i -= ngeneric;
    if (i >= nops * (sizeof caches / sizeof caches[0]))
        return NULL;
    snprintf(buf, cap, "%s-%s", caches[i / nops].name, cache_ops[i % nops].name);
    return buf;
}
