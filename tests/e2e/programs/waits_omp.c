/* OpenMP wait states of known size (plx waits, tests/e2e/test_waits.py), 2 threads; D seconds
 * = argv[1]:
 *   barrier:  thread 1 sleeps D in late_thread inside a parallel region; thread 0 waits at the
 *             region's implicit barrier
 *   critical: thread 0 sleeps D in hold_critical inside a critical section, which thread 1
 *             enters once thread 0 holds it */
#include <omp.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))

static double D;
static atomic_int inside;

static void nap(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

NOINLINE static void late_thread(void) { nap(D); }

NOINLINE static void hold_critical(void)
{
    atomic_store(&inside, 1);
    nap(D);
}

NOINLINE static void barrier(void)
{
#pragma omp parallel num_threads(2)
    {
        if (omp_get_thread_num() == 1)
            late_thread();
    }
}

NOINLINE static void critical(void)
{
#pragma omp parallel num_threads(2)
    {
        if (omp_get_thread_num() == 0) {
#pragma omp critical
            hold_critical();
        } else {
            while (!atomic_load(&inside))
                sched_yield();
#pragma omp critical
            {
            }
        }
    }
}

int main(int argc, char **argv)
{
    D = argc > 1 ? atof(argv[1]) : 0.2;
    barrier();
    critical();
    return 0;
}
