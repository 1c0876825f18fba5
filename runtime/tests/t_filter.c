/* Four threads call alpha 10, beta 20, gamma_one 30 and gamma_two 40 times each, then the main
 * thread calls tiny() 100000 times and rec() recursively (depth 50, 200 times), then after()
 * once: for filters that exclude, include and throttle. */
#include <pthread.h>
#include <stdio.h>
static volatile int sink;
void alpha(void) { __atomic_add_fetch(&sink, 1, __ATOMIC_RELAXED); }
void beta(void) { __atomic_add_fetch(&sink, 1, __ATOMIC_RELAXED); }
void gamma_one(void) { __atomic_add_fetch(&sink, 1, __ATOMIC_RELAXED); }
void gamma_two(void) { __atomic_add_fetch(&sink, 1, __ATOMIC_RELAXED); }
void tiny(void) { __atomic_add_fetch(&sink, 1, __ATOMIC_RELAXED); }
void rec(int depth) { if (depth > 0) rec(depth - 1); }
void after(void) {}
void *work(void *arg)
{
    for (int i = 0; i < 10; i++) alpha();
    for (int i = 0; i < 20; i++) beta();
    for (int i = 0; i < 30; i++) gamma_one();
    for (int i = 0; i < 40; i++) gamma_two();
    return arg;
}
int main(void)
{
    pthread_t th[4];
    for (int i = 0; i < 4; i++) pthread_create(&th[i], NULL, work, NULL);
    for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < 100000; i++) tiny();
    for (int i = 0; i < 200; i++) rec(50);
    after();
    printf("%d\n", sink);
    return sink == 4 * 100 + 100000 ? 0 : 1;
}
