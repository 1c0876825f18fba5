/* Threads of the runtime's own (the CPU sampler, the counters' reloader, the probe listener):
 * never measured, never passed to the program's start-routine trampoline. */
#include "plx_internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

PLX_TLS int plx_creating_internal;

/* What a new internal thread is to run, and whether it has begun; the creator and the thread
 * each hold a reference, and the last to let go frees it. */
struct start {
    void *(*fn)(void *);
    void *arg;
    atomic_int entered;
    atomic_int refs;
};

static void release(struct start *s)
{
    if (atomic_fetch_sub(&s->refs, 1) == 1)
        free(s);
}

static void *internal_main(void *p)
{
    struct start *s = p;
    void *(*fn)(void *) = s->fn;
    void *arg = s->arg;
    atomic_store(&s->entered, 1);
    release(s);
    return fn(arg);
}

/* A detached thread. It goes through the first pthread_create in the global scope — a
 * sanitizer's interceptor when there is one, so the sanitizer knows the thread — and the
 * runtime's own wrapper passes it straight on while plx_creating_internal is set: no
 * trampoline, never measured.
 *
 * Returns once the thread runs its function (within a second): a thread still starting may be
 * inside an allocator that fork() does not lock (AddressSanitizer's: it allocates for the new
 * thread before the thread's function runs), and a fork() then leaves the child an allocator
 * lock that no thread will release, so the child hangs at its next allocation or its exit. */
int plx_create_internal_thread(pthread_t *th, void *(*fn)(void *), void *arg)
{
    create_fn first = (create_fn)dlsym(RTLD_DEFAULT, "pthread_create");
    if (!first)
        return EAGAIN;
    struct start *s = malloc(sizeof *s);
    if (!s)
        return ENOMEM;
    s->fn = fn;
    s->arg = arg;
    atomic_init(&s->entered, 0);
    atomic_init(&s->refs, 2);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    plx_creating_internal = 1;
    int rc = first(th, &attr, internal_main, s);
    plx_creating_internal = 0;
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        free(s);
        return rc;
    }
    for (int i = 0; i < 20100 && !atomic_load(&s->entered); i++) {
        if (i < 100) {
            sched_yield();
        } else {
            struct timespec d = {0, 50000};
            plx_real_nanosleep(&d, NULL);
        }
    }
    release(s);
    return 0;
}
