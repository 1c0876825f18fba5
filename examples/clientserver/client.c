/* A client of server.c: a producer creates objects and puts them, a consumer gets them and
 * works on each. The consumer never talks to the producer, yet it waits for it through the
 * server (a GET waits until the object has been put).
 *
 *   client PORTFILE put|get OBJECTS [SIZE] [WORK]
 *
 * CS_NAGLE=1 leaves Nagle's algorithm on (see connect_to).
 *
 * WORK: microseconds of computation per object (produce for put, consume for get), default
 * 20000; the computation runs until that much wall-clock time has passed, so its length holds
 * on a loaded machine. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static volatile double sink;

static int read_full(int fd, void *buf, size_t n)
{
    char *p = buf;
    while (n > 0) {
        ssize_t r = recv(fd, p, n, 0);
        if (r <= 0)
            return -1;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

static int write_full(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t r = write(fd, p, n);
        if (r <= 0)
            return -1;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

/* Not measured themselves: their time is their callers' (produce, consume). */
__attribute__((no_instrument_function)) static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* Computes for `us` microseconds of wall-clock time. */
__attribute__((no_instrument_function)) static double spin(int us, double seed)
{
    double x = seed + 1.0, end = now_us() + us;
    for (int i = 0; now_us() < end; i++)
        for (int k = 0; k < 1000; k++)
            x = x * 1.0000001 + 0.5 / (x + k + i);
    return x;
}

__attribute__((noinline)) static void produce(char *buf, uint32_t size, int key, int work)
{
    double x = spin(work, key);
    for (uint32_t i = 0; i < size; i++)
        buf[i] = (char)(key + i + (int)x);
}

__attribute__((noinline)) static void consume(const char *buf, uint32_t size, int work)
{
    double s = spin(work, buf[0]);
    for (uint32_t i = 0; i < size; i++)
        s += (unsigned char)buf[i];
    sink = s;
}

static int connect_to(const char *portfile)
{
    int port = 0;
    for (int tries = 0; tries < 600 && port == 0; tries++) {
        FILE *f = fopen(portfile, "r");
        if (f) {
            if (fscanf(f, "%d", &port) != 1)
                port = 0;
            fclose(f);
        }
        if (port == 0)
            usleep(50000);
    }
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (port == 0 || fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        fprintf(stderr, "client: cannot connect to the server of %s\n", portfile);
        exit(1);
    }
    /* A request is a header then the object, in two writes: with Nagle's algorithm the second
     * waits for the server's delayed ACK of the first (40 ms on Linux). CS_NAGLE=1 keeps it. */
    const char *nagle = getenv("CS_NAGLE");
    int one = 1;
    if (!(nagle && *nagle == '1'))
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

int main(int argc, char **argv)
{
    if (argc < 4 || (strcmp(argv[2], "put") != 0 && strcmp(argv[2], "get") != 0)) {
        fprintf(stderr, "usage: client PORTFILE put|get OBJECTS [SIZE] [WORK]\n");
        return 2;
    }
    int put = strcmp(argv[2], "put") == 0;
    int objects = atoi(argv[3]);
    uint32_t size = argc > 4 ? (uint32_t)atoi(argv[4]) : 4096;
    int work = argc > 5 ? atoi(argv[5]) : 20000;
    int fd = connect_to(argv[1]);
    char *buf = malloc(size ? size : 1);
    for (int k = 0; k < objects; k++) {
        uint32_t hdr[3] = {put ? 1u : 2u, (uint32_t)k, put ? size : 0};
        if (put)
            produce(buf, size, k, work);
        if (write_full(fd, hdr, sizeof hdr) != 0 || (put && write_full(fd, buf, size) != 0)) {
            fprintf(stderr, "client: the server went away\n");
            return 1;
        }
        uint32_t reply[2];
        if (read_full(fd, reply, sizeof reply) != 0 || reply[0] != (uint32_t)k ||
            (!put && (reply[1] != size || read_full(fd, buf, size) != 0))) {
            fprintf(stderr, "client: bad reply for object %d\n", k);
            return 1;
        }
        if (!put)
            consume(buf, size, work);
    }
    close(fd);
    printf("client: %s %d objects of %u bytes\n", put ? "put" : "got", objects, size);
    return 0;
}
