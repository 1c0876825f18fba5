/* Frames left without their exit hook in C: longjmp out of JUMPS nests of DEPTH frames; a
 * thread that calls pthread_exit two frames down after a wait; a thread cancelled while it
 * waits two frames down. The later calls must be children of the functions that made them,
 * and the abandoned frames must end when their thread went on or ended. */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdio.h>
#include <time.h>

enum { JUMPS = 5, DEPTH = 3 };
static jmp_buf env;

static volatile int waiting; /* cancel_inner has begun its wait */

__attribute__((no_instrument_function)) static void nap(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

void sink(int k)
{
    if (k == 0)
        longjmp(env, 1);
    sink(k - 1);
}

int after(int x) { return x + 1; }

int jumper(void)
{
    volatile int n = 0;
    for (volatile int i = 0; i < JUMPS; i++) {
        if (setjmp(env) == 0)
            sink(DEPTH - 1);
        n = after(n);
    }
    return n;
}

void exit_inner(void)
{
    nap(60);
    pthread_exit(NULL);
}

void exit_outer(void) { exit_inner(); }

void *exiter(void *arg)
{
    (void)arg;
    exit_outer();
    return NULL;
}

void cancel_inner(void)
{
    waiting = 1;
    for (;;)
        nap(1000); /* a cancellation point */
}

void cancel_outer(void) { cancel_inner(); }

void *cancelled(void *arg)
{
    (void)arg;
    cancel_outer();
    return NULL;
}

int main(void)
{
    int n = jumper();
    n = after(n);
    pthread_t a, b;
    pthread_create(&a, NULL, exiter, NULL);
    pthread_join(a, NULL);
    pthread_create(&b, NULL, cancelled, NULL);
    while (!waiting)
        sched_yield();
    nap(60);
    pthread_cancel(b);
    pthread_join(b, NULL);
    printf("%d\n", n);
    return n == JUMPS + 1 ? 0 : 1;
}
