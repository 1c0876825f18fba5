/* Threads cancelled asynchronously (PTHREAD_CANCEL_ASYNCHRONOUS) while they call work() in a
 * loop: ROUNDS rounds of 2 threads, each cancelled after 3 ms + 0.1 ms per round, then main
 * calls work() once. Prints the calls of work() it counted itself (a cancellation between a
 * call's entry and its count leaves one call the program did not count).
 * Usage: async_cancel ROUNDS */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static volatile long sink;
static long n_work;

__attribute__((noinline)) void work(long i)
{
    sink += i;
    __atomic_fetch_add(&n_work, 1, __ATOMIC_RELAXED);
}

__attribute__((noinline)) void loop(void)
{
    for (long i = 0;; i++)
        work(i);
}

static void *spin(void *arg)
{
    (void)arg;
    pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
    loop();
    return NULL;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 20;
    for (int r = 0; r < rounds; r++) {
        pthread_t th[2];
        for (int i = 0; i < 2; i++)
            pthread_create(&th[i], NULL, spin, NULL);
        usleep(3000 + r * 100);
        for (int i = 0; i < 2; i++) {
            pthread_cancel(th[i]);
            pthread_join(th[i], NULL);
        }
        work(r);
    }
    printf("work calls %ld\n", n_work);
    return 0;
}
