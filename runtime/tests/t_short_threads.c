/* N short-lived threads (default 10000), created and joined 16 at a time; each calls tick(). */
#include <pthread.h>
#include <stdlib.h>
static volatile int ticks;
void tick(void) { __atomic_add_fetch(&ticks, 1, __ATOMIC_RELAXED); }
void *brief(void *arg) { tick(); return arg; }
int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 10000;
    pthread_t th[16];
    for (int done = 0; done < n;) {
        int k = n - done < 16 ? n - done : 16;
        for (int i = 0; i < k; i++)
            if (pthread_create(&th[i], NULL, brief, NULL) != 0)
                return 1;
        for (int i = 0; i < k; i++)
            pthread_join(th[i], NULL);
        done += k;
    }
    return ticks == n ? 0 : 1;
}
