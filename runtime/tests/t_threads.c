/* 8 worker threads, each calling work() 100 times; the main thread calls it 10 times. */
#include <pthread.h>
#include <stdio.h>
static double sink;
void work(int n) { double s = 0; for (int i = 0; i < n; i++) s += i * 0.5; __atomic_store(&sink, &s, __ATOMIC_RELAXED); }
void *worker(void *arg) { for (int i = 0; i < 100; i++) work(1000); return arg; }
int main(void)
{
    pthread_t th[8];
    for (int i = 0; i < 8; i++)
        pthread_create(&th[i], NULL, worker, NULL);
    for (int i = 0; i < 10; i++)
        work(1000);
    for (int i = 0; i < 8; i++)
        pthread_join(th[i], NULL);
    return 0;
}
