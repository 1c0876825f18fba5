/* Threads: pthread_create notes who the new thread is (named after its start routine, its wall
 * time from the call) before it runs; pthread_setname_np renames the calling thread (a name
 * given another way is read from the kernel: core/thread_name.c). A thread object (what
 * pthread_join acquires) is one joinable thread's lifetime: a thread created detached has none,
 * and pthread_detach ends it, so that the next thread glibc gives the same handle has its own.
 * Interposed by symbol, so LD_PRELOAD suffices. */
#include "../core/hotpath.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#define PLX_EXPORT __attribute__((visibility("default")))

struct start {
    void *(*fn)(void *);
    void *arg;
    uint32_t parent;
    uintptr_t site;   /* the pthread_create call's return address */
    uint64_t created; /* ticks at the call: the thread's wall time starts there */
    char comm[16];    /* the creator's kernel name, which the thread inherits */
};

typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
typedef int (*setname_fn)(pthread_t, const char *);
typedef int (*detach_fn)(pthread_t);

/* Runs first in the new thread, before a sanitizer's own start routine has set the thread up
 * when one interposes pthread_create too: so it only notes who the thread is, and the thread is
 * registered by its first event (plx_thread_attach reads the note). */
__attribute__((no_sanitize("thread", "address"))) static void *trampoline(void *p)
{
    struct start *s = p;
    plx_pending_start = (uintptr_t)s->fn;
    plx_pending_parent = s->parent;
    plx_pending_site = s->site;
    plx_pending_block = p;
    plx_pending_created = s->created;
    plx_pending_comm = s->comm; /* no call: the sanitizers' interceptors are not ready */
    void *(*fn)(void *) = s->fn;
    void *arg = s->arg;
#ifndef PLX_SANITIZE_THREAD
    /* sampled threads are registered before they run (the sampler needs their state); the
     * registration frees s. Not under ThreadSanitizer, whose start routine has not run yet
     * when a sanitized program's pthread_create reached this one: there a thread is sampled
     * from its first event. */
    if (plx_stack_sampling() && plx_active && !plx_self)
        plx_thread_attach();
#endif
    return fn(arg);
}

PLX_EXPORT int pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
    static create_fn real;
    if (!real)
        real = (create_fn)dlsym(RTLD_NEXT, "pthread_create");
    struct plx_thread *t = plx_self;
    if (!plx_active || plx_creating_internal || (t && t->guard))
        return real(th, attr, fn, arg);
    struct start *s = malloc(sizeof *s);
    if (!s)
        return real(th, attr, fn, arg);
    s->fn = fn;
    s->arg = arg;
    s->parent = t ? t->index : PLX_NO_INDEX;
    uintptr_t site = (uintptr_t)__builtin_return_address(0);
    s->site = site; /* s belongs to the new thread once it runs: it frees it */
    s->created = plx_ticks();
    plx_thread_comm_self(s->comm);
    int rc = real(th, attr, trampoline, s);
    if (rc != 0) {
        free(s);
        return rc;
    }
    int detached = PTHREAD_CREATE_JOINABLE;
    if (attr)
        pthread_attr_getdetachstate(attr, &detached);
    if (t && detached == PTHREAD_CREATE_JOINABLE) { /* its thread object is named after this call */
        t->guard++;
        plx_sync_define((const void *)*th, PLX_SYNC_THREAD, site, 1);
        t->guard--;
    }
    return rc;
}

PLX_EXPORT int pthread_setname_np(pthread_t th, const char *name)
{
    static setname_fn real;
    if (!real)
        real = (setname_fn)dlsym(RTLD_NEXT, "pthread_setname_np");
    int rc = real(th, name);
    struct plx_thread *t = plx_self;
    if (rc == 0 && plx_active && t && !t->guard && !t->java_name &&
        pthread_equal(th, pthread_self())) {
        t->guard++;
        plx_thread_set_name(t, name);
        t->guard--;
    }
    return rc;
}

/* The handle's object is retired before the real call: once a detached thread has ended, glibc
 * may give its handle to a new thread at once. */
PLX_EXPORT int pthread_detach(pthread_t th)
{
    static detach_fn real;
    if (!real)
        real = (detach_fn)dlsym(RTLD_NEXT, "pthread_detach");
    struct plx_thread *t = plx_self;
    if (plx_active && !plx_creating_internal && !(t && t->guard)) {
        if (t)
            t->guard++;
        plx_sync_retire((const void *)th);
        if (t)
            t->guard--;
    }
    return real(th);
}
