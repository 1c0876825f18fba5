/* N rounds (argv[1]) of: a detached thread (argv[2] "attr": created detached; "self": created
 * joinable, it detaches itself), waited for until the kernel has seen it end, then a joinable
 * thread, joined, which glibc gives the detached one's handle. Each thread calls tick() once.
 * Prints how many joinable threads had the detached one's handle before them. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned ticks;
static int self_detach;

void tick(void) { __atomic_add_fetch(&ticks, 1, __ATOMIC_RELAXED); }

static void *detached(void *arg)
{
    if (self_detach)
        pthread_detach(pthread_self());
    __atomic_store_n((pid_t *)arg, gettid(), __ATOMIC_RELEASE);
    tick();
    return NULL;
}

static void *joinable(void *arg)
{
    tick();
    return arg;
}

/* until thread `tid` is gone from the kernel (glibc frees its handle then) */
static void wait_gone(volatile pid_t *tid)
{
    char path[64];
    while (!__atomic_load_n(tid, __ATOMIC_ACQUIRE))
        nanosleep(&(struct timespec){0, 100000}, NULL);
    snprintf(path, sizeof path, "/proc/self/task/%d", (int)*tid);
    struct stat st;
    while (stat(path, &st) == 0)
        nanosleep(&(struct timespec){0, 100000}, NULL);
}

int main(int argc, char **argv)
{
    unsigned n = argc > 1 ? (unsigned)atoi(argv[1]) : 10, reused = 0;
    self_detach = argc > 2 && strcmp(argv[2], "self") == 0;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    if (!self_detach)
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    for (unsigned i = 0; i < n; i++) {
        pthread_t d, j;
        volatile pid_t tid = 0;
        if (pthread_create(&d, &attr, detached, (void *)&tid) != 0)
            return 2;
        wait_gone(&tid);
        if (pthread_create(&j, NULL, joinable, NULL) != 0)
            return 2;
        reused += pthread_equal(d, j) != 0;
        pthread_join(j, NULL);
    }
    printf("%u threads, %u joinable with the detached one's handle\n", ticks, reused);
    return ticks == 2 * n ? 0 : 1;
}
