/* Synchronization objects with counts known in advance:
 *   hot mutex    4 threads x 10000 lock/unlock, and the main thread holds it for 50 ms while
 *                they start, so each has to wait: 40001 acquisitions, contended, waited
 *   cold mutex   1 thread x 100                         100 acquisitions, never contended
 *   queue        producer/consumer, 1000 items, mutex + cond: mutex 1001 (producer) + 1000 + 2
 *                (consumers: one lock per item, one each to see the end) = 2003 acquisitions;
 *                cond: 1000 signals + 1 broadcast = 1001 releases
 *   rwlock       2 readers x 50 + 1 writer x 20         120 acquisitions, contended or not (timing)
 *   barrier      3 threads x 10 waits                    30 acquisitions
 *   semaphore    25 posts, 25 waits                      25 acquisitions, 25 releases
 *   spin lock    2 threads x 500                       1000 acquisitions
 *   statically initialised objects (hot, cold) are named by first use, the others by init. */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <time.h>

static pthread_mutex_t hot = PTHREAD_MUTEX_INITIALIZER, cold = PTHREAD_MUTEX_INITIALIZER;
static volatile long counter;
static volatile int go, ready; /* the hammers start together (no sync object involved) */

static void *hammer(void *arg)
{
    __atomic_add_fetch(&ready, 1, __ATOMIC_SEQ_CST);
    while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE))
        ;
    for (int i = 0; i < 10000; i++) {
        pthread_mutex_lock(&hot);
        for (int k = 0; k < 50; k++)
            counter++;
        pthread_mutex_unlock(&hot);
    }
    return arg;
}

static pthread_mutex_t qlock;
static pthread_cond_t qcond;
static int queue[1000], head, tail, done;

static void *producer(void *arg)
{
    for (int i = 0; i < 1000; i++) {
        pthread_mutex_lock(&qlock);
        queue[tail++] = i;
        pthread_cond_signal(&qcond);
        pthread_mutex_unlock(&qlock);
    }
    pthread_mutex_lock(&qlock);
    done = 1;
    pthread_cond_broadcast(&qcond);
    pthread_mutex_unlock(&qlock);
    return arg;
}

static void *consumer(void *arg)
{
    long taken = 0;
    for (;;) {
        pthread_mutex_lock(&qlock);
        while (head == tail && !done)
            pthread_cond_wait(&qcond, &qlock);
        if (head == tail) {
            pthread_mutex_unlock(&qlock);
            return (void *)taken;
        }
        head++;
        taken++;
        pthread_mutex_unlock(&qlock);
    }
}

static pthread_rwlock_t rw;
static void *reader(void *arg)
{
    for (int i = 0; i < 50; i++) {
        pthread_rwlock_rdlock(&rw);
        pthread_rwlock_unlock(&rw);
    }
    return arg;
}
static void *writer(void *arg)
{
    for (int i = 0; i < 20; i++) {
        pthread_rwlock_wrlock(&rw);
        pthread_rwlock_unlock(&rw);
    }
    return arg;
}

static pthread_barrier_t bar;
static void *barrier_user(void *arg)
{
    for (int i = 0; i < 10; i++)
        pthread_barrier_wait(&bar);
    return arg;
}

static sem_t sem;
static void *poster(void *arg)
{
    for (int i = 0; i < 25; i++)
        sem_post(&sem);
    return arg;
}

static pthread_spinlock_t spin;
static void *spinner(void *arg)
{
    for (int i = 0; i < 500; i++) {
        pthread_spin_lock(&spin);
        counter++;
        pthread_spin_unlock(&spin);
    }
    return arg;
}

static void run(int n, void *(*fn[])(void *))
{
    pthread_t th[8];
    for (int i = 0; i < n; i++)
        pthread_create(&th[i], NULL, fn[i], NULL);
    if (fn[0] == hammer) {
        while (__atomic_load_n(&ready, __ATOMIC_ACQUIRE) < n)
            ;
        pthread_mutex_lock(&hot);
        __atomic_store_n(&go, 1, __ATOMIC_RELEASE);
        struct timespec pause = {0, 50000000};
        nanosleep(&pause, NULL);
        pthread_mutex_unlock(&hot);
    }
    for (int i = 0; i < n; i++)
        pthread_join(th[i], NULL);
}

int main(void)
{
    void *(*hammers[])(void *) = {hammer, hammer, hammer, hammer};
    run(4, hammers);
    for (int i = 0; i < 100; i++) {
        pthread_mutex_lock(&cold);
        pthread_mutex_unlock(&cold);
    }
    pthread_mutex_init(&qlock, NULL);
    pthread_cond_init(&qcond, NULL);
    void *(*queue_users[])(void *) = {producer, consumer, consumer};
    run(3, queue_users);
    pthread_rwlock_init(&rw, NULL);
    void *(*rw_users[])(void *) = {reader, reader, writer};
    run(3, rw_users);
    pthread_barrier_init(&bar, NULL, 3);
    void *(*bar_users[])(void *) = {barrier_user, barrier_user, barrier_user};
    run(3, bar_users);
    sem_init(&sem, 0, 0);
    void *(*posters[])(void *) = {poster};
    run(1, posters);
    for (int i = 0; i < 25; i++)
        sem_wait(&sem);
    pthread_spin_init(&spin, 0);
    void *(*spinners[])(void *) = {spinner, spinner};
    run(2, spinners);
    printf("%ld\n", counter);
    return counter == 50 * 40000 + 1000 ? 0 : 1;
}
