/* Call-stack sampling benchmark's program: a compute-bound call tree (a recursion 8 deep over
 * small arithmetic leaves), built plain (-O2 -g, with or without frame pointers). Prints the
 * process's CPU time, user + system, which includes whatever a sampler's interrupts cost it.
 * `sampling ROUNDS HZ [rt]`: the program samples itself the way libplx does (a perf_event
 * cpu-clock counter interrupting the thread HZ times per CPU second: SIGTRAP raised by the event,
 * or with `rt` SIGRTMIN+6 through its file) into an empty handler — the kernel's share of a
 * sample, without unwinding. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile double sink;
static volatile long signals;

__attribute__((noinline)) static double leaf(long n)
{
    double x = 0;
    for (long i = 0; i < n; i++)
        x += (double)(i & 7) * 0.5;
    return x;
}

__attribute__((noinline)) static double level(int depth, long n)
{
    if (depth == 0)
        return leaf(n);
    return level(depth - 1, n) + level(depth - 1, n / 2) * 0.5;
}

static void on_signal(int sig)
{
    (void)sig;
    signals++;
}

static int self_sample(long hz, int rt)
{
    int sig = rt ? SIGRTMIN + 6 : SIGTRAP;
    signal(sig, on_signal);
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_CPU_CLOCK;
    a.sample_period = 1000000000 / hz;
    a.sigtrap = !rt;
    a.remove_on_exec = !rt;
    int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0)
        return -1;
    if (!rt)
        return 0;
    struct f_owner_ex owner = {F_OWNER_TID, (pid_t)syscall(SYS_gettid)};
    fcntl(fd, F_SETOWN_EX, &owner);
    fcntl(fd, F_SETSIG, sig);
    return fcntl(fd, F_SETFL, O_ASYNC | O_NONBLOCK);
}

int main(int argc, char **argv)
{
    long rounds = argc > 1 ? atol(argv[1]) : 30000;
    if (argc > 2 && self_sample(atol(argv[2]), argc > 3 && strcmp(argv[3], "rt") == 0) != 0) {
        perror("perf_event_open");
        return 1;
    }
    for (long r = 0; r < rounds; r++)
        sink += level(8, 2000);
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    printf("%.6f cpu_s %ld signals\n", t.tv_sec + t.tv_nsec * 1e-9, signals);
    return 0;
}
