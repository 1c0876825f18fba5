/* Sampling and inlining: work is a function of its own whose time is nearly all in now(),
 * inlined into it; it prints the CPU seconds it took ("truth main work SECONDS"). Built plain
 * (-O2 -g): a sample in now's code is in work too. */
#include <stdio.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

volatile double sink;

__attribute__((noinline)) double work(double s)
{
    double e = now() + s, x = 0;
    while (now() < e)
        x += 1;
    return x;
}

int main(void)
{
    double t0 = now();
    sink = work(0.3);
    printf("truth main work %.6f\n", now() - t0);
    return 0;
}
