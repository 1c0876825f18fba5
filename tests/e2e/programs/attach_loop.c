/* Built with plain gcc -O2: the target of plx attach (tests/e2e/test_probes.py).
 * attach_loop T N DIR: T worker threads wait for DIR/go, then each calls work() N times; the
 * main thread then writes DIR/done, waits for DIR/quit and prints a checksum of the results.
 * attach_loop T 0 -: the workers call work() forever (a few thousand calls per second). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static long n_calls;
static const char *dir;
static long sums[64];

__attribute__((noinline)) long work(long x)
{
    volatile long s = 0;
    for (int i = 0; i < 50; i++)
        s += i ^ x;
    return s;
}

static int exists(const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return access(path, F_OK) == 0;
}

static void *worker(void *arg)
{
    long id = (long)arg, s = 0;
    if (n_calls == 0)
        for (long i = 0;; i++) {
            s += work(i);
            usleep(200);
        }
    while (!exists("go"))
        usleep(1000);
    for (long i = 0; i < n_calls; i++)
        s += work(i + id);
    sums[id] = s;
    return NULL;
}

int main(int argc, char **argv)
{
    int t = argc > 1 ? atoi(argv[1]) : 2;
    n_calls = argc > 2 ? atol(argv[2]) : 0;
    dir = argc > 3 ? argv[3] : ".";
    if (t < 1 || t > 64)
        return 2;
    pthread_t th[64];
    for (long i = 0; i < t; i++)
        pthread_create(&th[i], NULL, worker, (void *)i);
    for (int i = 0; i < t; i++)
        pthread_join(th[i], NULL);
    char path[4096];
    snprintf(path, sizeof path, "%s/done", dir);
    FILE *f = fopen(path, "w");
    if (f)
        fclose(f);
    while (!exists("quit"))
        usleep(1000);
    long total = 0;
    for (int i = 0; i < t; i++)
        total += sums[i];
    printf("checksum %ld\n", total);
    return 0;
}
