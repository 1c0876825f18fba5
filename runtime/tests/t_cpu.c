/* CPU time of selected functions (filter rule cputime): burn() computes for ~30 ms of CPU,
 * nap() sleeps 30 ms; both are called 3 times. */
#include <time.h>
static volatile double sink;
static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}
void burn(void)
{
    double t0 = cpu_now();
    while (cpu_now() - t0 < 0.030)
        sink += 1;
}
void nap(void)
{
    struct timespec d = {0, 30000000};
    nanosleep(&d, NULL);
}
int main(void)
{
    for (int i = 0; i < 3; i++) {
        burn();
        nap();
    }
    return 0;
}
