/* The hot path's cost: a tiny leaf called N times in a loop; prints nanoseconds per call.
 * Built once with -finstrument-functions and once without; bench/run.sh runs the variants. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

__attribute__((noinline)) int leaf(int x)
{
    __asm__ volatile("" ::: "memory");
    return x + 1;
}

__attribute__((noinline)) int filtered_leaf(int x)
{
    __asm__ volatile("" ::: "memory");
    return x + 2;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 20000000;
    int use_filtered = argc > 2 && argv[2][0] == 'f';
    int acc = 0;
    double t0 = now();
    if (use_filtered)
        for (long i = 0; i < n; i++)
            acc = filtered_leaf(acc);
    else
        for (long i = 0; i < n; i++)
            acc = leaf(acc);
    double t1 = now();
    printf("%.3f ns/call (%d)\n", (t1 - t0) * 1e9 / n, acc & 1);
    return 0;
}
