/* The counters grammar and event names (filter_parse.c, counter_events.c), alone: names map to
 * the perf types and configs the kernel documents; rules parse into their sets; bad rules give
 * the documented messages. Exit status 0 when every check holds. */
#include "../src/core/counter_events.h"
#include "../src/core/filter_parse.h"

#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>

static int failures;

#define CHECK(cond)                                                                       \
    do {                                                                                  \
        if (!(cond)) {                                                                    \
            fprintf(stderr, "%s:%d: failed: %s\n", __FILE__, __LINE__, #cond);            \
            failures++;                                                                   \
        }                                                                                 \
    } while (0)

static void name_is(const char *name, uint32_t type, uint64_t config)
{
    uint32_t t = 99;
    uint64_t c = 99;
    CHECK(plx_counter_event_lookup(name, &t, &c) == 0);
    if (t != type || c != config) {
        fprintf(stderr, "%s: type %u config %#llx, expected %u %#llx\n", name, t,
                (unsigned long long)c, type, (unsigned long long)config);
        failures++;
    }
}

static struct plx_filter_rule last; /* its strings point into `names` (a rule lives only
                                      during its callback) */
static char names[32][64];
static int rules;
static char errors[8][256];
static int nerrors;

static void on_rule(void *ctx, const struct plx_filter_rule *r)
{
    (void)ctx;
    int k = 0;
    last = *r;
    snprintf(names[k], sizeof names[0], "%s", r->glob ? r->glob : "");
    last.glob = names[k++];
    for (unsigned i = 0; i < r->nsets; i++)
        for (unsigned j = 0; j < r->nevents[i] && k < 32; j++) {
            snprintf(names[k], sizeof names[0], "%s", r->events[i][j]);
            last.events[i][j] = names[k++];
        }
    rules++;
}

static void on_error(void *ctx, const char *m)
{
    (void)ctx;
    if (nerrors < 8)
        snprintf(errors[nerrors], sizeof errors[0], "%s", m);
    nerrors++;
}

static int parse(const char *text)
{
    struct plx_filter_sink sink = {on_rule, on_error, NULL};
    rules = nerrors = 0;
    return plx_filter_parse("f", text, strlen(text), &sink);
}

int main(void)
{
    name_is("task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK);
    name_is("page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS);
    name_is("cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES);
    name_is("cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
    name_is("branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES);
    /* cache id | op << 8 | result << 16 (perf_event_open(2)) */
    name_is("L1-dcache-load-misses", PERF_TYPE_HW_CACHE, 0 | 0 << 8 | 1 << 16);
    name_is("LLC-stores", PERF_TYPE_HW_CACHE, 2 | 1 << 8 | 0 << 16);
    name_is("r01c2", PERF_TYPE_RAW, 0x1c2);
    uint32_t t;
    uint64_t c;
    CHECK(plx_counter_event_lookup("cycels", &t, &c) == -1);
    CHECK(plx_counter_event_lookup("L1-dcache-misses", &t, &c) == -1);
    CHECK(plx_counter_event_lookup("rxyz", &t, &c) == -1);
    CHECK(plx_counter_event_valid("perf::PAGE-FAULTS") && plx_counter_event_valid("PAPI_TOT_INS"));
    CHECK(!plx_counter_event_valid("PAGE-FAULTS"));

    CHECK(parse("counters solve cycles, instructions | cache-misses every 100 # two sets\n") == 0);
    CHECK(rules == 1 && last.kind == PLX_FILTER_COUNTERS && last.line == 1);
    CHECK(strcmp(last.glob, "solve") == 0 && last.nsets == 2 && last.every == 100);
    CHECK(last.nevents[0] == 2 && last.nevents[1] == 1);
    CHECK(strcmp(last.events[0][1], "instructions") == 0);
    CHECK(strcmp(last.events[1][0], "cache-misses") == 0);

    CHECK(parse("exclude x\ncounters *::update page-faults\n") == 0);
    CHECK(rules == 2 && last.nsets == 1 && last.every == 0 && last.line == 2);

    CHECK(parse("counters a b c d e f g h i j k\n") == 1);
    CHECK(strcmp(errors[0], "f:1: unknown counter 'b' (docs/formats/counters.md lists the names)") == 0);
    CHECK(parse("counters a cs,cs,cs,cs,cs,cs,cs,cs,cs\n") == 1);
    CHECK(strcmp(errors[0], "f:1: more than 8 events in one set") == 0);
    CHECK(parse("counters a cs | | cs every 2\n") == 1);
    CHECK(strcmp(errors[0], "f:1: an empty event set") == 0);
    CHECK(parse("counters a cs | cs every 0\ncounters [a cs\n") == 2);
    CHECK(strcmp(errors[0], "f:1: 'every' takes a whole number of calls from 1 (e.g. every 100)") == 0);
    CHECK(strcmp(errors[1], "f:2: '[a': a '[' is not closed") == 0);
    if (failures)
        fprintf(stderr, "%d failures\n", failures);
    return failures != 0;
}
