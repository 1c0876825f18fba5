/* Threads of the runtime's own (the CPU sampler): never measured, never passed to the
 * program's start-routine trampoline. */
#include "plx_internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>

typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

PLX_TLS int plx_creating_internal;

/* A detached thread. It goes through the first pthread_create in the global scope — a
 * sanitizer's interceptor when there is one, so the sanitizer knows the thread — and the
 * runtime's own wrapper passes it straight on while plx_creating_internal is set: no
 * trampoline, never measured. */
int plx_create_internal_thread(pthread_t *th, void *(*fn)(void *), void *arg)
{
    create_fn first = (create_fn)dlsym(RTLD_DEFAULT, "pthread_create");
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    plx_creating_internal = 1;
    int rc = first ? first(th, &attr, fn, arg) : EAGAIN;
    plx_creating_internal = 0;
    pthread_attr_destroy(&attr);
    return rc;
}
