/* A server that blocks in accept(): it listens on 127.0.0.1 (the port written to argv[1]),
 * waits for one client, reads 8 bytes and works WORK_MS on them. The client is not measured
 * (the test connects from outside the run), so nothing in the trace explains the wait. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define WORK_MS 50

__attribute__((no_instrument_function)) static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

__attribute__((noinline)) void work(void)
{
    double end = now_s() + WORK_MS * 1e-3;
    while (now_s() < end)
        ;
}

__attribute__((noinline)) int serve(int fd)
{
    char buf[8];
    size_t got = 0;
    while (got < sizeof buf) {
        ssize_t n = read(fd, buf + got, sizeof buf - got);
        if (n <= 0)
            return 1;
        got += (size_t)n;
    }
    work();
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof a) != 0 || listen(s, 1) != 0 ||
        getsockname(s, (struct sockaddr *)&a, &len) != 0)
        return 3;
    FILE *f = fopen(argv[1], "w");
    if (!f)
        return 4;
    fprintf(f, "%d\n", ntohs(a.sin_port));
    fclose(f);
    int c = accept(s, NULL, NULL);
    if (c < 0)
        return 5;
    int rc = serve(c);
    close(c);
    close(s);
    return rc;
}
