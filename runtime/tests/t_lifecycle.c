/* Threads in awkward lives: one started by a global constructor, one that exits holding a
 * mutex, one cancelled while waiting on a condition variable, one cancelled in a measured loop
 * (at a cancellation point). Each must be measured, none may crash the run. With the argument
 * "nocancel" the last two end normally instead: the sanitizers' own interceptors do not survive
 * cancellation (they report the unwinding itself). */
#include <pthread.h>
#include <stdio.h>
#include <time.h>

static volatile int sink;
void work(void) { sink++; }

static void *early(void *arg)
{
    for (int i = 0; i < 10; i++)
        work();
    return arg;
}

static pthread_t early_thread;
__attribute__((constructor)) static void start_early(void)
{
    pthread_create(&early_thread, NULL, early, NULL);
}

static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static void *exits_holding(void *arg)
{
    pthread_mutex_lock(&held);
    work();
    return arg; /* never unlocks */
}

/* main cancels or stops the threads only once they have started (on a loaded machine a
 * thread may not have run at all after main's sleep) */
static int waiting, stepped;

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never = PTHREAD_COND_INITIALIZER;
static void unlock_on_cancel(void *mx) { pthread_mutex_unlock(mx); }
static void *waits_forever(void *arg)
{
    pthread_mutex_lock(&m);
    __atomic_store_n(&waiting, 1, __ATOMIC_RELEASE);
    pthread_cleanup_push(unlock_on_cancel, &m);
    for (;;)
        pthread_cond_wait(&never, &m);
    pthread_cleanup_pop(1);
    return arg;
}

void spin_step(void)
{
    struct timespec d = {0, 100000};
    nanosleep(&d, NULL); /* a cancellation point */
    __atomic_store_n(&stepped, 1, __ATOMIC_RELEASE);
}
static void *loops_forever(void *arg)
{
    for (;;)
        spin_step();
    return arg;
}

static int stop;
static void *loops_until_stopped(void *arg)
{
    while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE))
        spin_step();
    return arg;
}

int main(int argc, char **argv)
{
    int cancel = !(argc > 1 && argv[1][0] == 'n');
    pthread_join(early_thread, NULL);
    pthread_t a, b, c;
    pthread_create(&a, NULL, exits_holding, NULL);
    pthread_join(a, NULL);
    pthread_create(&b, NULL, cancel ? waits_forever : early, NULL);
    pthread_create(&c, NULL, cancel ? loops_forever : loops_until_stopped, NULL);
    struct timespec d = {0, 20000000}, poll = {0, 1000000};
    nanosleep(&d, NULL);
    while (!__atomic_load_n(&stepped, __ATOMIC_ACQUIRE) ||
           (cancel && !__atomic_load_n(&waiting, __ATOMIC_ACQUIRE)))
        nanosleep(&poll, NULL);
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    if (cancel) {
        pthread_cancel(b);
        pthread_cancel(c);
    }
    pthread_join(b, NULL);
    pthread_join(c, NULL);
    for (int i = 0; i < 5; i++)
        work();
    return 0;
}
