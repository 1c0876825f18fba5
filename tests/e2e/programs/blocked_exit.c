/* A thread still blocked when the process ends: `waiter` blocks two frames down (wait_outer,
 * wait_inner) in a pipe read that never returns; the main thread, once the waiter is inside
 * wait_inner, waits 60 ms and calls exit() from within finish(). Every open call ends at the
 * process's end: wait_inner lasts at least 60 ms. With the argument `kill`, finish() calls
 * marker() after the wait instead, prints "ready PID" and blocks until it is killed. */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile int waiting;
static int fds[2];

__attribute__((no_instrument_function)) static void nap(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

void wait_inner(void)
{
    char c;
    waiting = 1;
    (void)!read(fds[0], &c, 1); /* nobody writes */
}

void wait_outer(void) { wait_inner(); }

void *waiter(void *arg)
{
    (void)arg;
    wait_outer();
    return NULL;
}

void marker(void) {}

void finish(int killed)
{
    nap(60);
    if (!killed)
        exit(0);
    marker();
    printf("ready %d\n", (int)getpid());
    fflush(stdout);
    for (;;)
        pause();
}

int main(int argc, char **argv)
{
    pthread_t t;
    if (pipe(fds) != 0)
        return 1;
    pthread_create(&t, NULL, waiter, NULL);
    while (!waiting)
        sched_yield();
    finish(argc > 1 && strcmp(argv[1], "kill") == 0);
}
