/* Phase "work" with a thread started inside it: before the phase main calls leaf once, inside
 * it the thread calls leaf 7 times and main 3 times, after it main calls leaf twice. */
#include <plx.h>
#include <pthread.h>

static volatile unsigned sink;

void leaf(void) { sink += 1; }

void *worker(void *arg)
{
    for (int i = 0; i < 7; i++)
        leaf();
    return arg;
}

int main(void)
{
    leaf();
    plx_phase_begin("work");
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    for (int i = 0; i < 3; i++)
        leaf();
    pthread_join(t, NULL);
    plx_phase_end("work");
    leaf();
    leaf();
    return 0;
}
