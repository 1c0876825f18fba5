/* One thread that computes (work, about 50 ms), then waits WAIT_MS in each of usleep, nanosleep,
 * poll, select and epoll_wait (nothing ready, so each returns at its timeout), then computes
 * again. Every wait is time the thread does not run. */
#include <poll.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>

#define WAIT_MS 100

static volatile unsigned long sink;

__attribute__((noinline)) void work(void)
{
    for (unsigned long i = 0; i < 20000000ul; i++)
        sink += i * 7;
}

int main(void)
{
    work();
    usleep(WAIT_MS * 1000);
    nanosleep(&(struct timespec){0, WAIT_MS * 1000000l}, NULL);
    poll(NULL, 0, WAIT_MS);
    select(0, NULL, NULL, NULL, &(struct timeval){0, WAIT_MS * 1000});
    int ep = epoll_create1(0);
    struct epoll_event ev;
    int n = epoll_wait(ep, &ev, 1, WAIT_MS);
    close(ep);
    work();
    printf("waited 5 times, %d events\n", n);
    return 0;
}
