/* Two phases on one thread: phase_f spins 0.3 s of the thread's CPU time, then phase_g 0.3 s.
 * Prints each phase's CLOCK_MONOTONIC interval (ns) as "phase NAME START END": every sample
 * taken in a phase must be timed inside it. With the argument `overlap`, the worker spins
 * phase_g 0.6 s while main spins phase_f 0.3 s, then main joins it: the critical path runs
 * through the worker, and main's phase_f is off it. Built plain (gcc -O2 -g, no frame
 * pointers). */
#include <pthread.h>
#include <stdio.h>
#include <time.h>

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static long long mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static volatile double sink;

static void spin(double seconds)
{
    double end = cpu_now() + seconds;
    double x = 1.0;
    while (cpu_now() < end)
        for (int i = 0; i < 10000; i++)
            x = x * 1.0000001 + 1e-9;
    sink = x;
}

/* the store after the call keeps each phase's frame on the stack (no tail call to spin) */
__attribute__((noinline)) void phase_f(void) { spin(0.3); sink += 1; }
__attribute__((noinline)) void phase_g(void) { spin(0.3); sink += 2; }

static long long t[4];

static void *worker(void *arg)
{
    (void)arg;
    t[0] = mono_ns();
    phase_f();
    t[1] = mono_ns();
    t[2] = mono_ns();
    phase_g();
    t[3] = mono_ns();
    return NULL;
}

static void *long_g(void *arg)
{
    (void)arg;
    spin(0.3);
    phase_g();
    return NULL;
}

int main(int argc, char **argv)
{
    pthread_t th;
    if (argc > 1) { /* overlap */
        pthread_create(&th, NULL, long_g, NULL);
        phase_f();
        pthread_join(th, NULL);
        return 0;
    }
    pthread_create(&th, NULL, worker, NULL);
    pthread_join(th, NULL);
    printf("phase phase_f %lld %lld\nphase phase_g %lld %lld\n", t[0], t[1], t[2], t[3]);
    return 0;
}
