/* An OpenMP program of known structure (the tests' and docs/openmp.md's):
 *
 *   known [REGIONS [SLEEP_MS]]      default 3 regions, 40 ms
 *
 * REGIONS parallel regions of 4 threads (line PARALLEL_LINE below). In each, every thread:
 *   - runs 8 iterations of a schedule(static) loop of 32, each calling work() once;
 *   - thread 3 then sleeps SLEEP_MS, so it arrives last at the explicit barrier and the
 *     three others wait there about SLEEP_MS;
 *   - enters the critical section `tally` 5 times and takes the lock `lk` 2 times;
 * and one thread of the team calls once() inside a single. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define THREADS 4
#define ITERATIONS 32

static omp_lock_t lk;
static long tally, locked; /* each guarded by its own construct */
static volatile double sink;

void work(int i)
{
    double x = i;
    for (int k = 0; k < 2000; k++)
        x = x * 0.999 + 1.0;
    sink = x;
}

void once(void)
{
    sink = sink + 1.0;
}

static void nap(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

void region(int sleep_ms)
{
#pragma omp parallel num_threads(THREADS) /* PARALLEL_LINE */
    {
#pragma omp for schedule(static)
        for (int i = 0; i < ITERATIONS; i++)
            work(i);
        if (omp_get_thread_num() == THREADS - 1)
            nap(sleep_ms);
#pragma omp barrier
        for (int k = 0; k < 5; k++) {
#pragma omp critical(tally)
            tally++;
        }
        for (int k = 0; k < 2; k++) {
            omp_set_lock(&lk);
            locked += 10;
            omp_unset_lock(&lk);
        }
#pragma omp single
        once();
    }
}

int main(int argc, char **argv)
{
    int regions = argc > 1 ? atoi(argv[1]) : 3;
    int sleep_ms = argc > 2 ? atoi(argv[2]) : 40;
    omp_init_lock(&lk);
    for (int r = 0; r < regions; r++)
        region(sleep_ms);
    omp_destroy_lock(&lk);
    long total = tally + locked;
    printf("total %ld (expected %d)\n", total, regions * THREADS * 25);
    return total == (long)regions * THREADS * 25 ? 0 : 1;
}
