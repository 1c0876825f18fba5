/* 10,000 short-lived threads (start routine `brief`), created and joined in batches of 16,
 * each calling tick() once. */
#include <pthread.h>
#include <stdio.h>

static volatile unsigned ticks;

void tick(void) { __atomic_add_fetch(&ticks, 1, __ATOMIC_RELAXED); }

void *brief(void *arg)
{
    tick();
    return arg;
}

int main(void)
{
    pthread_t th[16];
    for (int done = 0; done < 10000; done += 16) {
        int n = 10000 - done < 16 ? 10000 - done : 16;
        for (int i = 0; i < n; i++)
            if (pthread_create(&th[i], NULL, brief, NULL) != 0)
                return 2;
        for (int i = 0; i < n; i++)
            pthread_join(th[i], NULL);
    }
    printf("%u\n", ticks);
    return ticks == 10000 ? 0 : 1;
}
