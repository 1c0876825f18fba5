/* 8 worker threads (start routine `worker`) call work() 100 times each; main calls it 10 times. */
#include <pthread.h>
#include <stdio.h>

static volatile unsigned sink;

void work(void)
{
    for (int i = 0; i < 100; i++)
        __atomic_add_fetch(&sink, 1, __ATOMIC_RELAXED);
}

void *worker(void *arg)
{
    for (int i = 0; i < 100; i++)
        work();
    return arg;
}

int main(void)
{
    pthread_t th[8];
    for (int i = 0; i < 8; i++)
        pthread_create(&th[i], NULL, worker, NULL);
    for (int i = 0; i < 10; i++)
        work();
    for (int i = 0; i < 8; i++)
        pthread_join(th[i], NULL);
    printf("%u\n", sink);
    return sink == 81000 ? 0 : 1;
}
