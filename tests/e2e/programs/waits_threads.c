/* Thread wait states of known size (plx waits, tests/e2e/test_waits.py); D seconds = argv[1].
 *   lock:  thread 1 takes the mutex and sleeps D in hold_lock; main then blocks in take_lock
 *   join:  thread 2 sleeps D in slow_worker; main joins it at once in join_worker
 *   cond:  thread 3 sleeps D in produce, then signals; main waits in consume
 *   barrier: thread 4 sleeps D in late_arrival, then meets main at a pthread barrier (meet)
 *   sem:   thread 5 sleeps D in slow_post, then posts; main waits in take_token */
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))

static double D;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t cm = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static atomic_int locked;
static int ready;
static pthread_barrier_t bar;
static sem_t token;

static void nap(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

NOINLINE static void hold_lock(void)
{
    pthread_mutex_lock(&lock);
    atomic_store(&locked, 1);
    nap(D);
    pthread_mutex_unlock(&lock);
}

static void *holder(void *arg)
{
    hold_lock();
    return arg;
}

NOINLINE static void take_lock(void)
{
    while (!atomic_load(&locked))
        sched_yield();
    pthread_mutex_lock(&lock);
    pthread_mutex_unlock(&lock);
}

NOINLINE static void slow_worker(void) { nap(D); }

static void *worker(void *arg)
{
    slow_worker();
    return arg;
}

NOINLINE static void join_worker(pthread_t t) { pthread_join(t, NULL); }

NOINLINE static void produce(void)
{
    nap(D);
    pthread_mutex_lock(&cm);
    ready = 1;
    pthread_cond_signal(&cv);
    pthread_mutex_unlock(&cm);
}

static void *producer(void *arg)
{
    produce();
    return arg;
}

NOINLINE static void consume(void)
{
    pthread_mutex_lock(&cm);
    while (!ready)
        pthread_cond_wait(&cv, &cm);
    pthread_mutex_unlock(&cm);
}

NOINLINE static void late_arrival(void) { nap(D); }

static void *arriver(void *arg)
{
    late_arrival();
    pthread_barrier_wait(&bar);
    return arg;
}

NOINLINE static void meet(void) { pthread_barrier_wait(&bar); }

NOINLINE static void slow_post(void)
{
    nap(D);
    sem_post(&token);
}

static void *poster(void *arg)
{
    slow_post();
    return arg;
}

NOINLINE static void take_token(void) { sem_wait(&token); }

int main(int argc, char **argv)
{
    D = argc > 1 ? atof(argv[1]) : 0.2;
    pthread_t t1, t2, t3, t4, t5;
    pthread_create(&t1, NULL, holder, NULL);
    take_lock();
    pthread_join(t1, NULL);
    pthread_create(&t2, NULL, worker, NULL);
    join_worker(t2);
    pthread_create(&t3, NULL, producer, NULL);
    consume();
    pthread_join(t3, NULL);
    pthread_barrier_init(&bar, NULL, 2);
    pthread_create(&t4, NULL, arriver, NULL);
    meet();
    pthread_join(t4, NULL);
    sem_init(&token, 0, 0);
    pthread_create(&t5, NULL, poster, NULL);
    take_token();
    pthread_join(t5, NULL);
    return 0;
}
