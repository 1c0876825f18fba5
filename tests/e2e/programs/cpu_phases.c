/* One thread: spins 300 ms, sleeps 300 ms (the nanosleep system call made directly: a wait no
 * wrapper of the runtime sees, so the trace's states cannot tell it from computing), spins
 * 300 ms — by wall-clock time, so the three phases are thirds of the run. */
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile double sink;

__attribute__((no_instrument_function)) static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void spin(void)
{
    long long end = now_ns() + 300000000LL;
    while (now_ns() < end)
        for (int i = 0; i < 1000; i++)
            sink += i;
}

void nap(void)
{
    struct timespec d = {0, 300000000};
    while (syscall(SYS_nanosleep, &d, &d) != 0)
        ;
}

int main(void)
{
    spin();
    nap();
    spin();
    return 0;
}
