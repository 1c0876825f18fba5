/* Golden program: every record of process.plx and every event subtype of a real run except
 * the MPI ones (mpi.c) and the time reset (its 40-bit delta needs minutes; spec/golden/unknown
 * has one). Run with the filter "throttle 100 1000" / "cputime spin" and --cpu-sample 2:
 * threads named with plx_thread_name, a contended mutex and joins, user events, a throttled
 * function, the CPU time of spin(), a TCP exchange over loopback (100 bytes, 50 back). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <plx.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long counter;
static int listener;

int tiny(int x) { return x + 1; }

double spin(int ms)
{
    struct timespec a, b;
    double s = 0;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
    do {
        for (int i = 0; i < 10000; i++)
            s += i * 0.5;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
    } while ((b.tv_sec - a.tv_sec) * 1000.0 + (b.tv_nsec - a.tv_nsec) / 1e6 < ms);
    return s;
}

static size_t exchange(int fd, char *buf, size_t n, int sending)
{
    size_t done = 0;
    while (done < n) {
        ssize_t k = sending ? send(fd, buf + done, n - done, 0) : recv(fd, buf + done, n - done, 0);
        if (k <= 0)
            break;
        done += (size_t)k;
    }
    return done;
}

void *server(void *arg)
{
    plx_thread_name("server");
    int c = accept(listener, NULL, NULL);
    char buf[100];
    exchange(c, buf, 100, 0);
    exchange(c, buf, 50, 1);
    close(c);
    return arg;
}

void *worker(void *arg)
{
    for (int i = 0; i < 3; i++) {
        pthread_mutex_lock(&lock);
        counter++;
        spin(1);
        pthread_mutex_unlock(&lock);
    }
    return arg;
}

int main(void)
{
    listener = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (bind(listener, (struct sockaddr *)&a, sizeof a) || listen(listener, 1) ||
        getsockname(listener, (struct sockaddr *)&a, &len))
        return 1;
    pthread_t s, w;
    pthread_create(&s, NULL, server, NULL);
    pthread_create(&w, NULL, worker, NULL);
    plx_phase_begin("compute");
    for (int i = 0; i < 200; i++)
        tiny(i);
    plx_event("size", 5);
    plx_event("size", 7);
    spin(20);
    for (int i = 0; i < 3; i++) {
        pthread_mutex_lock(&lock);
        counter++;
        pthread_mutex_unlock(&lock);
    }
    plx_phase_end("compute");
    int c = socket(AF_INET, SOCK_STREAM, 0);
    char msg[100];
    memset(msg, 'x', sizeof msg);
    if (connect(c, (struct sockaddr *)&a, sizeof a))
        return 1;
    size_t sent = exchange(c, msg, 100, 1), got = exchange(c, msg, 50, 0);
    close(c);
    pthread_join(s, NULL);
    pthread_join(w, NULL);
    return sent == 100 && got == 50 && counter == 6 ? 0 : 1;
}
