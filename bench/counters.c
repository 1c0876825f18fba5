/* The cost of reading counters as the runtime does: one read() of a per-thread group of
 * page-faults and context-switches with its time enabled (task-clock), N times; and, where the
 * kernel lets user space read a hardware counter (cap_user_rdpmc), one rdpmc of instructions.
 * Prints "X ns/read" lines; "rdpmc: unavailable (...)" where it cannot be measured. */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int open_event(uint32_t type, uint64_t config, int group)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = type;
    a.config = config;
    a.exclude_hv = 1;
    a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
    return (int)syscall(SYS_perf_event_open, &a, 0, -1, group, 0);
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    int lead = open_event(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, -1);
    if (lead < 0 || open_event(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, lead) < 0) {
        printf("read: unavailable (%s)\n", strerror(errno));
        return 1;
    }
    uint64_t buf[8], sum = 0;
    double t0 = now();
    for (long i = 0; i < n; i++) {
        if (read(lead, buf, sizeof buf) < 32)
            return 1;
        sum += buf[1];
    }
    double t1 = now();
    printf("%.1f ns/read (group read of 3 software counters, %lu)\n", (t1 - t0) * 1e9 / n,
           (unsigned long)(sum & 1));
    int hw = open_event(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, -1);
    if (hw < 0) {
        printf("rdpmc: unavailable (instructions: %s)\n", strerror(errno));
        return 0;
    }
    struct perf_event_mmap_page *pg = mmap(NULL, 4096, PROT_READ, MAP_SHARED, hw, 0);
    if (pg == MAP_FAILED || !pg->cap_user_rdpmc || !pg->index) {
        printf("rdpmc: unavailable (the kernel does not allow user reads here)\n");
        return 0;
    }
    uint32_t idx = pg->index - 1;
    t0 = now();
    for (long i = 0; i < n; i++) {
        uint32_t lo, hi;
        __asm__ volatile("rdpmc" : "=a"(lo), "=d"(hi) : "c"(idx));
        sum += lo;
    }
    t1 = now();
    printf("%.1f ns/rdpmc (%lu)\n", (t1 - t0) * 1e9 / n, (unsigned long)(sum & 1));
    return 0;
}
