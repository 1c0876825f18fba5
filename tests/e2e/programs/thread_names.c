/* Thread names given outside pthread_setname_np on the thread itself after its first event,
 * and a thread that sleeps before its first event (start routines are not instrumented, so a
 * thread's first event is its call of work(); unnamed, a thread is named after its start
 * routine):
 *   early      names itself "first-name" before its first event;
 *   byhandle   is named "from-main" by main through its handle while it waits, after its
 *              first event;
 *   viaprctl   names itself "with-prctl" with prctl(PR_SET_NAME), which no wrapper sees;
 *   late_start sleeps 300 ms before its first event: its wall time still starts at its
 *              creation.
 * Each thread calls work() once. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <unistd.h>

#define NOHOOK __attribute__((no_instrument_function))

static volatile int named, registered;

void work(void) { __atomic_add_fetch(&registered, 1, __ATOMIC_SEQ_CST); }

NOHOOK static void *early(void *arg)
{
    pthread_setname_np(pthread_self(), "first-name");
    work();
    return arg;
}

NOHOOK static void *byhandle(void *arg)
{
    work();
    while (!__atomic_load_n(&named, __ATOMIC_SEQ_CST))
        usleep(1000);
    return arg;
}

NOHOOK static void *viaprctl(void *arg)
{
    work();
    prctl(PR_SET_NAME, "with-prctl");
    return arg;
}

NOHOOK static void *late_start(void *arg)
{
    usleep(300000);
    work();
    return arg;
}

int main(void)
{
    pthread_t a, b, c, d;
    pthread_create(&a, NULL, early, NULL);
    pthread_join(a, NULL);
    pthread_create(&b, NULL, byhandle, NULL);
    while (__atomic_load_n(&registered, __ATOMIC_SEQ_CST) < 2)
        usleep(1000);
    pthread_setname_np(b, "from-main");
    __atomic_store_n(&named, 1, __ATOMIC_SEQ_CST);
    pthread_join(b, NULL);
    pthread_create(&c, NULL, viaprctl, NULL);
    pthread_join(c, NULL);
    pthread_create(&d, NULL, late_start, NULL);
    pthread_join(d, NULL);
    printf("%d threads\n", registered);
    return registered == 4 ? 0 : 1;
}
