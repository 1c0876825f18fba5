/* Waits for one byte on standard input (the test frees room on the disk meanwhile), then calls
 * work() CALLS times (in a thread started then, with "thread") and prints one line.
 * Usage: room_later CALLS [thread] */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((noinline)) void work(long i)
{
    __asm__ volatile("" ::"r"(i));
}

/* not measured: the calls are work()'s, main's counts the same with or without a thread */
__attribute__((no_instrument_function)) static void *calls(void *arg)
{
    long n = *(long *)arg;
    for (long i = 0; i < n; i++)
        work(i);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 2 && argc != 3)
        return 2;
    long n = atol(argv[1]);
    char c;
    if (read(0, &c, 1) != 1)
        return 1;
    if (argc == 3) {
        pthread_t t;
        if (pthread_create(&t, NULL, calls, &n) != 0 || pthread_join(t, NULL) != 0)
            return 1;
    } else {
        calls(&n);
    }
    printf("room_later: %ld\n", n);
    return 0;
}
