/* A trace of many locations: T threads each calling a two-level pair of tiny functions N times
 * (3 calls, 6 events per iteration). Built with -finstrument-functions; bench/export.sh runs it
 * under libplx.so with PLX_TRACE=1. Usage: threads THREADS CALLS_PER_THREAD */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static long calls;

__attribute__((noinline)) int inner(int x)
{
    __asm__ volatile("" ::: "memory");
    return x + 1;
}

__attribute__((noinline)) int outer(int x)
{
    return inner(inner(x));
}

static void *work(void *arg)
{
    int acc = (int)(long)arg;
    for (long i = 0; i < calls; i += 3)
        acc = outer(acc);
    return (void *)(long)(acc & 1);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 16;
    calls = argc > 2 ? atol(argv[2]) : 1000000;
    pthread_t *t = calloc(n, sizeof *t);
    for (int i = 0; i < n; i++)
        pthread_create(&t[i], NULL, work, (void *)(long)i);
    long acc = 0;
    for (int i = 0; i < n; i++) {
        void *r;
        pthread_join(t[i], &r);
        acc += (long)r;
    }
    printf("%d threads x %ld calls (%ld)\n", n, calls, acc);
    free(t);
    return 0;
}
