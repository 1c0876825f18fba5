/* Throttling per thread and callpath: main calls tiny() 1000 times, then slow() 200 times
 * (each calling tiny() once); four threads call tiny() 1000 times each from work(). */
#include <pthread.h>
#include <stdio.h>

static volatile unsigned long sink;

void tiny(void) { __atomic_add_fetch(&sink, 1, __ATOMIC_RELAXED); }

void slow(void)
{
    for (int i = 0; i < 200000; i++) /* well over 50 us a call */
        sink += 2;
    tiny();
}

void *work(void *arg)
{
    for (int i = 0; i < 1000; i++)
        tiny();
    return arg;
}

int main(void)
{
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&th[i], NULL, work, NULL);
    for (int i = 0; i < 1000; i++)
        tiny();
    for (int i = 0; i < 200; i++)
        slow();
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    printf("%lu\n", sink);
    return 0;
}
