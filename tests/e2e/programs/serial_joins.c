/* N threads (argv[1], default 100) created and joined one after another: glibc gives each the
 * handle of the one before. Each calls tick() once. With argv[2] "kill" the process then
 * kills itself (SIGKILL), leaving its live files. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile unsigned ticks;

void tick(void) { __atomic_add_fetch(&ticks, 1, __ATOMIC_RELAXED); }

void *serial(void *arg)
{
    tick();
    return arg;
}

int main(int argc, char **argv)
{
    unsigned n = argc > 1 ? (unsigned)atoi(argv[1]) : 100, handles = 0;
    pthread_t first = 0;
    for (unsigned i = 0; i < n; i++) {
        pthread_t th;
        if (pthread_create(&th, NULL, serial, NULL) != 0)
            return 2;
        if (i == 0)
            first = th;
        handles += pthread_equal(th, first) != 0;
        pthread_join(th, NULL);
    }
    printf("%u threads, %u with the first one's handle\n", ticks, handles);
    fflush(stdout);
    if (argc > 2 && strcmp(argv[2], "kill") == 0)
        raise(SIGKILL);
    return ticks == n ? 0 : 1;
}
