/* CPU sampling (PLX_CPU_SAMPLE): the one thread spins for 300 ms of CPU, sleeps 300 ms, spins
 * 300 ms of CPU again. With an argument it writes the four boundaries there as CLOCK_MONOTONIC
 * ns: "spin_start sleep_start sleep_end spin_end". Spinning counts CPU time (wall time capped at
 * 10 s) so that a loaded machine stretches the spin instead of shortening its CPU. */
#include <stdio.h>
#include <time.h>

static volatile double sink;

__attribute__((no_instrument_function)) static long long now_ns(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void spin(void)
{
    long long c0 = now_ns(CLOCK_THREAD_CPUTIME_ID), w0 = now_ns(CLOCK_MONOTONIC);
    while (now_ns(CLOCK_THREAD_CPUTIME_ID) - c0 < 300000000LL && now_ns(CLOCK_MONOTONIC) - w0 < 10000000000LL)
        for (int i = 0; i < 1000; i++)
            sink += i;
}

void nap(void)
{
    struct timespec d = {0, 300000000};
    while (nanosleep(&d, &d) != 0)
        ;
}

int main(int argc, char **argv)
{
    long long t[4];
    t[0] = now_ns(CLOCK_MONOTONIC);
    spin();
    t[1] = now_ns(CLOCK_MONOTONIC);
    nap();
    t[2] = now_ns(CLOCK_MONOTONIC);
    spin();
    t[3] = now_ns(CLOCK_MONOTONIC);
    if (argc > 1) {
        FILE *f = fopen(argv[1], "w");
        if (!f)
            return 1;
        fprintf(f, "%lld %lld %lld %lld\n", t[0], t[1], t[2], t[3]);
        fclose(f);
    }
    return 0;
}
