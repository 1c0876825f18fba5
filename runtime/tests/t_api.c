/* User API: regions, phases, user events, thread names. */
#define _GNU_SOURCE
#include <plx.h>
#include <pthread.h>
void step(void) {}
void *named(void *arg)
{
    pthread_setname_np(pthread_self(), "io-thread");
    step();
    return arg;
}
int main(void)
{
    plx_thread_name("coordinator");
    plx_phase_begin("setup");
    for (int i = 0; i < 3; i++) {
        plx_region_begin("load");
        step();
        plx_event("bytes", 100.0 * (i + 1));
        plx_region_end("load");
    }
    plx_phase_end("setup");
    plx_phase_begin("solve");
    for (int i = 0; i < 5; i++) {
        plx_region_begin("iterate");
        step();
        plx_region_end("iterate");
    }
    plx_phase_end("solve");
    pthread_t th;
    pthread_create(&th, NULL, named, NULL);
    pthread_join(th, NULL);
    return 0;
}
