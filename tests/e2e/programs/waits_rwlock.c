/* Readers waiting for a writer (plx waits, tests/e2e/test_waits.py): thread 1 takes the rwlock
 * for writing and sleeps D (argv[1]) in hold_write; main and thread 2 then block taking it for
 * reading (main in read_lock, thread 2 in spin_reader). When the writer releases it both get
 * it; thread 2 takes and releases it again and again until main has it, so a reader's release
 * comes between the writer's and main's acquire: main waited for the writer all the same. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))

static double D;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static atomic_int written, done;

static void nap(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

NOINLINE static void hold_write(void)
{
    pthread_rwlock_wrlock(&rw);
    atomic_store(&written, 1);
    nap(D);
    pthread_rwlock_unlock(&rw);
}

static void *writer(void *arg)
{
    hold_write();
    return arg;
}

NOINLINE static void spin_reader(void)
{
    while (!atomic_load(&written))
        sched_yield();
    for (int i = 0; i < 1000000 && !atomic_load(&done); i++) {
        pthread_rwlock_rdlock(&rw);
        pthread_rwlock_unlock(&rw);
    }
}

static void *reader(void *arg)
{
    spin_reader();
    return arg;
}

NOINLINE static void read_lock(void)
{
    while (!atomic_load(&written))
        sched_yield();
    pthread_rwlock_rdlock(&rw);
    atomic_store(&done, 1);
    pthread_rwlock_unlock(&rw);
}

int main(int argc, char **argv)
{
    D = argc > 1 ? atof(argv[1]) : 0.2;
    pthread_t w, r;
    pthread_create(&w, NULL, writer, NULL);
    pthread_create(&r, NULL, reader, NULL);
    read_lock();
    pthread_join(w, NULL);
    pthread_join(r, NULL);
    return 0;
}
