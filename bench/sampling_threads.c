/* Call-stack sampling of short threads (bench/sampling_threads.sh): THREADS threads started one
 * after the other (BATCH at a time), each spinning SPIN_US µs of its own CPU time (the thread CPU
 * clock) in a call tree a few frames deep, then ending. Prints the process's CPU time (user +
 * system) as "S cpu_s" and its wall time as "S wall_s": under `plx run --sample` what each
 * thread's sampling set-up, first samples and end cost. gcc -O2 -g, no frame pointers.
 * Usage: sampling_threads THREADS SPIN_US BATCH */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long spin_ns;
static volatile double sink;

static long thread_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec * 1000000000L + t.tv_nsec;
}

__attribute__((noinline)) static double leaf(long n)
{
    double x = 0;
    for (long i = 0; i < n; i++)
        x += (double)(i & 7) * 0.5;
    return x;
}

__attribute__((noinline)) static double level(int depth, long n)
{
    if (depth == 0)
        return leaf(n);
    return level(depth - 1, n) + 0.5;
}

static void *work(void *arg)
{
    (void)arg;
    long end = thread_ns() + spin_ns;
    double x = 0;
    while (thread_ns() < end)
        x += level(4, 2000);
    sink += x;
    return NULL;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 400;
    spin_ns = (argc > 2 ? atol(argv[2]) : 2000) * 1000L;
    int batch = argc > 3 ? atoi(argv[3]) : 2;
    struct timespec w0, w1, c;
    clock_gettime(CLOCK_MONOTONIC, &w0);
    pthread_t t[64];
    if (batch < 1 || batch > 64)
        batch = 2;
    for (int i = 0; i < threads; i += batch) {
        int n = threads - i < batch ? threads - i : batch;
        for (int k = 0; k < n; k++)
            if (pthread_create(&t[k], NULL, work, NULL) != 0) {
                perror("pthread_create");
                return 1;
            }
        for (int k = 0; k < n; k++)
            pthread_join(t[k], NULL);
    }
    clock_gettime(CLOCK_MONOTONIC, &w1);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c);
    printf("%.6f cpu_s\n%.6f wall_s\n", c.tv_sec + c.tv_nsec * 1e-9,
           (w1.tv_sec - w0.tv_sec) + (w1.tv_nsec - w0.tv_nsec) * 1e-9);
    return 0;
}
