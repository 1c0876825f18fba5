/* The clock: TSC ticks calibrated against CLOCK_MONOTONIC, or CLOCK_MONOTONIC itself, or
 * CLOCK_MONOTONIC_COARSE (PLX_CLOCK=coarse: the kernel's tick, read from the vDSO without
 * touching the clock source), as plx_cfg.clock chooses (its words are options.def's, in the
 * order of enum plx_clock_kind). Calibration pairs always read CLOCK_MONOTONIC. */
#include "plx_internal.h"

#include <cpuid.h>
#include <time.h>

int plx_clock_kind = PLX_CLOCK_MONOTONIC;
static double clock_rate = 1e9;

uint64_t plx_monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t plx_clock_slow(void)
{
    if (plx_clock_kind == PLX_CLOCK_COARSE) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
        return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    }
    return plx_monotonic_ns();
}

double plx_clock_rate(void)
{
    return clock_rate;
}

/* The TSC is usable when it ticks at a constant rate in every power state (invariant TSC). */
static int tsc_invariant(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u)
        return 0;
    __get_cpuid(0x80000007u, &a, &b, &c, &d);
    return (d >> 8) & 1;
}

void plx_clock_init(void)
{
    int want = plx_cfg.clock; /* -1: unset */
    struct timespec res;
    if (want == PLX_CLOCK_COARSE) {
        if (clock_getres(CLOCK_MONOTONIC_COARSE, &res) == 0) {
            plx_clock_kind = PLX_CLOCK_COARSE;
            clock_rate = 1e9;
            return;
        }
        plx_warn("PLX_CLOCK=coarse: CLOCK_MONOTONIC_COARSE is not available; using monotonic");
        want = PLX_CLOCK_MONOTONIC;
    }
    if (want == PLX_CLOCK_TSC && !tsc_invariant())
        plx_warn("PLX_CLOCK=tsc: the time-stamp counter is not invariant here; using monotonic");
    if (want == PLX_CLOCK_MONOTONIC || !tsc_invariant()) {
        plx_clock_kind = PLX_CLOCK_MONOTONIC;
        clock_rate = 1e9;
        return;
    }
    plx_clock_kind = PLX_CLOCK_TSC;
    /* A short measurement gives the rate used when the run ends before a second calibration
     * pair is written; the reader prefers the line through the first and last pairs. */
    uint64_t t0 = plx_ticks(), m0 = plx_monotonic_ns();
    struct timespec pause = {0, 2000000};
    plx_real_nanosleep(&pause, NULL);
    uint64_t t1 = plx_ticks(), m1 = plx_monotonic_ns();
    if (m1 > m0 && t1 > t0)
        clock_rate = (double)(t1 - t0) * 1e9 / (double)(m1 - m0);
    else
        plx_clock_kind = PLX_CLOCK_MONOTONIC;
}
