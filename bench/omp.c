/* Cost of OpenMP constructs: `omp parallel N` runs N empty parallel regions, `omp barrier N`
 * one region whose threads pass N barriers; prints ns per region or per barrier. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
    int barriers = argc > 1 && strcmp(argv[1], "barrier") == 0;
    long n = argc > 2 ? atol(argv[2]) : 100000;
    volatile int sink = 0;
#pragma omp parallel
    sink++; /* the team is made before timing */
    double t0 = now();
    if (barriers) {
#pragma omp parallel
        for (long i = 0; i < n; i++) {
#pragma omp barrier
        }
    } else {
        for (long i = 0; i < n; i++) {
#pragma omp parallel
            {
                if (omp_get_thread_num() < 0) /* never: the region is empty but not removable */
                    sink++;
            }
        }
    }
    double t1 = now();
    printf("%.1f ns/call (%s, %d threads)\n", (t1 - t0) / n, barriers ? "barrier" : "parallel",
           omp_get_max_threads());
    return sink == 0;
}
