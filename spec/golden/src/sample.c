/* The sample golden experiment: built with plain cc -O2 -g (no instrumentation), run with
 * --sample=1000: main spins 30 ms of its CPU time in spin(), sampled (SampleTree). */
#include <stdio.h>
#include <time.h>

static volatile double sink;

__attribute__((noinline)) static void spin(void)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    do {
        for (int i = 0; i < 10000; i++)
            sink += i * 0.5;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    } while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 30000000L);
}

int main(void)
{
    spin();
    printf("%.0f\n", sink > 0 ? 1.0 : 0.0);
    return 0;
}
