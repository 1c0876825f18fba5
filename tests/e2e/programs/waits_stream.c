/* A stream wait of known size (plx waits, tests/e2e/test_waits.py): main accepts a TCP
 * connection on 127.0.0.1 and reads a request in serve; the client thread connects, sleeps D
 * seconds (argv[1]) in slow_request, then writes it. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static double D;
static struct sockaddr_in addr;

static void nap(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

NOINLINE static void slow_request(int fd)
{
    char req[64] = "request";
    nap(D);
    if (write(fd, req, sizeof req) != (ssize_t)sizeof req)
        exit(3);
}

static void *client(void *arg)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0)
        exit(2);
    slow_request(fd);
    close(fd);
    return arg;
}

NOINLINE static void serve(int lfd)
{
    char req[64];
    size_t got = 0;
    int fd = accept(lfd, NULL, NULL);
    if (fd < 0)
        exit(4);
    while (got < sizeof req) {
        ssize_t n = read(fd, req + got, sizeof req - got);
        if (n <= 0)
            exit(5);
        got += (size_t)n;
    }
    close(fd);
}

int main(int argc, char **argv)
{
    D = argc > 1 ? atof(argv[1]) : 0.2;
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    socklen_t len = sizeof addr;
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (lfd < 0 || bind(lfd, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(lfd, 1) != 0 ||
        getsockname(lfd, (struct sockaddr *)&addr, &len) != 0)
        return 1;
    pthread_t t;
    pthread_create(&t, NULL, client, NULL);
    serve(lfd);
    pthread_join(t, NULL);
    close(lfd);
    return 0;
}
