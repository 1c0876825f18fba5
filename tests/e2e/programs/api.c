/* User API: regions load (3) and iterate (5), phases setup and solve, user event bytes
 * (100, 200, 300), a thread named by plx_thread_name and one by pthread_setname_np, and a
 * region end that does not match the open region (ignored, one lost event). */
#define _GNU_SOURCE
#include <plx.h>
#include <pthread.h>

static volatile unsigned sink;

void read_input(void) { sink += 1; }
void step(void) { sink += 2; }
void report_only(void) { sink += 3; }

void *io_thread(void *arg)
{
    pthread_setname_np(pthread_self(), "io-thread");
    read_input();
    return arg;
}

void *helper(void *arg)
{
    plx_thread_name("helper-renamed");
    step();
    return arg;
}

int main(void)
{
    plx_thread_name("coordinator");
    plx_phase_begin("setup");
    for (int i = 0; i < 3; i++) {
        plx_region_begin("load");
        read_input();
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
    report_only();
    plx_region_begin("outer");
    plx_region_end("not-open");
    plx_region_end("outer");
    pthread_t a, b;
    pthread_create(&a, NULL, io_thread, NULL);
    pthread_join(a, NULL);
    pthread_create(&b, NULL, helper, NULL);
    pthread_join(b, NULL);
    return 0;
}
