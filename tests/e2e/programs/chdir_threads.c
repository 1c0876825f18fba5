/* Changes its working directory to DIR, then runs 2 threads calling work() 1000 times each.
 * Usage: chdir_threads DIR */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

__attribute__((noinline)) void work(long i)
{
    __asm__ volatile("" ::"r"(i));
}

static void *run(void *arg)
{
    (void)arg;
    for (long i = 0; i < 1000; i++)
        work(i);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 2 || chdir(argv[1]) != 0)
        return 2;
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, run, NULL);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    printf("chdir_threads: %d\n", 2000);
    return 0;
}
