/* Two threads and main call work() 1000 times each; then main prints "ready PID" and every
 * thread blocks until the process is killed (SIGKILL, by the test). */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#define CALLS 1000

static volatile unsigned long sink;
static pthread_barrier_t done;

void work(void) { __atomic_add_fetch(&sink, 1, __ATOMIC_RELAXED); }

static void block(void)
{
    for (;;)
        pause();
}

void *worker(void *arg)
{
    for (int i = 0; i < CALLS; i++)
        work();
    pthread_barrier_wait(&done);
    block();
    return arg;
}

int main(void)
{
    pthread_t th[2];
    pthread_barrier_init(&done, NULL, 3);
    for (int i = 0; i < 2; i++)
        pthread_create(&th[i], NULL, worker, NULL);
    for (int i = 0; i < CALLS; i++)
        work();
    pthread_barrier_wait(&done);
    printf("ready %d\n", (int)getpid());
    fflush(stdout);
    block();
    return 0;
}
