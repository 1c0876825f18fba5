/* Built with plain cc: the target of plx attach for thread names (tests/e2e/test_probes.py).
 * attach_names DIR: 3 threads name themselves named-0, named-1, named-2 (pthread_setname_np),
 * then main writes DIR/ready; once DIR/go exists each thread calls work() 10 times and ends;
 * main then writes DIR/done and waits for DIR/quit. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static const char *dir;
static int named;

__attribute__((noinline)) long work(long x)
{
    volatile long s = x;
    return s + 1;
}

static int exists(const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return access(path, F_OK) == 0;
}

static void touch(const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (f)
        fclose(f);
}

static void *worker(void *arg)
{
    char name[16];
    snprintf(name, sizeof name, "named-%ld", (long)arg);
    pthread_setname_np(pthread_self(), name);
    __atomic_add_fetch(&named, 1, __ATOMIC_SEQ_CST);
    while (!exists("go"))
        usleep(1000);
    for (long i = 0; i < 10; i++)
        work(i);
    return NULL;
}

int main(int argc, char **argv)
{
    dir = argc > 1 ? argv[1] : ".";
    pthread_t th[3];
    for (long i = 0; i < 3; i++)
        pthread_create(&th[i], NULL, worker, (void *)i);
    while (__atomic_load_n(&named, __ATOMIC_SEQ_CST) < 3)
        usleep(1000);
    touch("ready");
    for (int i = 0; i < 3; i++)
        pthread_join(th[i], NULL);
    touch("done");
    while (!exists("quit"))
        usleep(1000);
    return 0;
}
