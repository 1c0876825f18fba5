/* A probe's cost: a leaf long enough to be probed (>= 5 bytes of whole instructions) called N
 * times; prints nanoseconds per call. bench/probes.sh runs it plain, with compiler hooks, and
 * plain under `--probe leaf`, in one run. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

__attribute__((noinline)) long leaf(long x)
{
    __asm__ volatile("" ::: "memory");
    return x * 3 + 1;
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
    long acc = 0;
    double t0 = now();
    for (long i = 0; i < n; i++)
        acc = leaf(acc) & 0xffff;
    double t1 = now();
    printf("%.3f ns/call (%ld)\n", (t1 - t0) * 1e9 / n, acc & 1);
    return 0;
}
