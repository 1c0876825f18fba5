/* Producer/consumer queue with a hot lock: producers push items into a bounded ring under one
 * mutex, consumers pop them; two condition variables (not full, not empty). A second, cold
 * mutex guards a statistics counter updated once per thread.
 *
 *   queue [PRODUCERS] [CONSUMERS] [ITEMS per producer]    defaults: 2, 2, 20000
 * Mutex acquisitions of the queue lock: one per push and per pop, plus one per producer to say
 * it is done and one per consumer to see the end (2 x 20000 x 2 + 2 + 2 = 80004 by default);
 * the cold lock: one per thread. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define SLOTS 64

static int producers = 2, consumers = 2, items = 20000;
static int ring[SLOTS], head, count, finished_producers;
static long consumed;
static pthread_mutex_t queue_lock, stats_lock;
static pthread_cond_t not_full, not_empty;

static void push(int v)
{
    pthread_mutex_lock(&queue_lock);
    while (count == SLOTS)
        pthread_cond_wait(&not_full, &queue_lock);
    ring[(head + count++) % SLOTS] = v;
    pthread_cond_signal(&not_empty);
    pthread_mutex_unlock(&queue_lock);
}

/* Returns 0 when the producers are done and the queue is empty. */
static int pop(int *v)
{
    pthread_mutex_lock(&queue_lock);
    while (count == 0 && finished_producers < producers)
        pthread_cond_wait(&not_empty, &queue_lock);
    if (count == 0) {
        pthread_mutex_unlock(&queue_lock);
        return 0;
    }
    *v = ring[head];
    head = (head + 1) % SLOTS;
    count--;
    pthread_cond_signal(&not_full);
    pthread_mutex_unlock(&queue_lock);
    return 1;
}

static void *producer(void *arg)
{
    for (int i = 0; i < items; i++)
        push(i);
    pthread_mutex_lock(&queue_lock);
    finished_producers++;
    pthread_cond_broadcast(&not_empty);
    pthread_mutex_unlock(&queue_lock);
    pthread_mutex_lock(&stats_lock);
    pthread_mutex_unlock(&stats_lock);
    return arg;
}

static void *consumer(void *arg)
{
    long mine = 0;
    int v;
    while (pop(&v))
        mine++;
    pthread_mutex_lock(&stats_lock);
    consumed += mine;
    pthread_mutex_unlock(&stats_lock);
    return arg;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        producers = atoi(argv[1]);
    if (argc > 2)
        consumers = atoi(argv[2]);
    if (argc > 3)
        items = atoi(argv[3]);
    if (producers < 1 || consumers < 1 || producers + consumers > 64 || items < 0) {
        fprintf(stderr, "usage: queue [PRODUCERS] [CONSUMERS] [ITEMS]\n");
        return 2;
    }
    pthread_mutex_init(&queue_lock, NULL);
    pthread_mutex_init(&stats_lock, NULL);
    pthread_cond_init(&not_full, NULL);
    pthread_cond_init(&not_empty, NULL);
    pthread_t th[64];
    for (int i = 0; i < producers; i++)
        pthread_create(&th[i], NULL, producer, NULL);
    for (int i = 0; i < consumers; i++)
        pthread_create(&th[producers + i], NULL, consumer, NULL);
    for (int i = 0; i < producers + consumers; i++)
        pthread_join(th[i], NULL);
    printf("queue: %d producers, %d consumers, %ld items consumed\n", producers, consumers, consumed);
    return consumed == (long)producers * items ? 0 : 1;
}
