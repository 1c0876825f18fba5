/* TCP over loopback with traffic known in advance. A server thread accepts two clients (accept,
 * then accept4) on a dual-stack IPv6 listener (IPv4 only when the host has no IPv6):
 *   client_sr  connects over IPv4 (the server sees ::ffff:127.0.0.1) with a blocking connect,
 *              moves to a dup() of its socket, sends request i with send() (even i) or
 *              sendto() (odd i) and reads the reply with recv(); then shuts down writing, and a
 *              last send fails with EPIPE (errno kept)
 *   client_rw  connects over IPv6 (::1) with a non-blocking connect (EINPROGRESS), moves to a
 *              dup2() of its socket, sends with write() / writev(), reads with read() / readv()
 * The server reads client_sr's requests with recv() (a MSG_PEEK first) and answers with
 * sendmsg(); client_rw's with read() / recvmsg(), answered with write(); then it sees each
 * client's end: recvfrom() and read() return 0. The main thread writes to /dev/null (not
 * traced). One message is in flight per direction and each is one call of under 5 KB, so every
 * call moves the whole message (checked here: a short transfer fails the run).
 *
 * Request i of client c: 64 + 97 i + 13 c bytes; its reply: twice that + 5; N = 25. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <plx.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define N 25
static int port, ipv6 = 1, sr_connected;
static char buf_server[2][16384];

static size_t request_size(int c, int i) { return 64 + 97 * (size_t)i + 13 * (size_t)c; }
static size_t reply_size(int c, int i) { return 2 * request_size(c, i) + 5; }

static void fail(const char *what)
{
    fprintf(stderr, "t_socket: %s: %s\n", what, strerror(errno));
    exit(1);
}

static void exact(ssize_t got, size_t want, const char *what)
{
    if (got != (ssize_t)want) {
        fprintf(stderr, "t_socket: %s moved %zd bytes, expected %zu\n", what, got, want);
        exit(1);
    }
}

static void no_delay(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

void *server(void *arg)
{
    plx_thread_name("server");
    int listener = (int)(long)arg;
    int fds[2];
    fds[0] = accept(listener, NULL, NULL);
    if (fds[0] < 0)
        fail("accept");
    struct sockaddr_storage peer;
    socklen_t plen = sizeof peer;
    fds[1] = accept4(listener, (struct sockaddr *)&peer, &plen, SOCK_CLOEXEC);
    if (fds[1] < 0)
        fail("accept4");
    no_delay(fds[0]);
    no_delay(fds[1]);
    int next[2] = {0, 0}, done[2] = {0, 0};
    while (!done[0] || !done[1]) {
        struct pollfd p[2] = {{fds[0], done[0] ? 0 : POLLIN, 0}, {fds[1], done[1] ? 0 : POLLIN, 0}};
        if (poll(p, 2, 10000) <= 0)
            fail("poll");
        for (int c = 0; c < 2; c++) {
            if (done[c] || !(p[c].revents & (POLLIN | POLLHUP)))
                continue;
            char *b = buf_server[c];
            int i = next[c];
            if (i == N) { /* the client's end */
                ssize_t n = c == 0 ? recvfrom(fds[c], b, 1, 0, NULL, NULL) : read(fds[c], b, 1);
                exact(n, 0, "end of stream");
                done[c] = 1;
                continue;
            }
            size_t q = request_size(c, i), r = reply_size(c, i);
            ssize_t n;
            if (c == 0) {
                if (i == 0)
                    exact(recv(fds[c], b, 1, MSG_PEEK), 1, "peek");
                n = recv(fds[c], b, q, 0);
            } else if (i % 2 == 0) {
                n = read(fds[c], b, q);
            } else {
                struct iovec v = {b, q};
                struct msghdr m = {.msg_iov = &v, .msg_iovlen = 1};
                n = recvmsg(fds[c], &m, 0);
            }
            exact(n, q, "request");
            memset(b, 'a' + i % 26, r);
            if (c == 0) {
                struct iovec v[2] = {{b, 5}, {b + 5, r - 5}};
                struct msghdr m = {.msg_iov = v, .msg_iovlen = 2};
                n = sendmsg(fds[c], &m, 0);
            } else {
                n = write(fds[c], b, r);
            }
            exact(n, r, "reply");
            next[c]++;
        }
    }
    close(fds[0]);
    close(fds[1]);
    return NULL;
}

void *client_sr(void *arg)
{
    plx_thread_name("client_sr");
    static char b[16384];
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(s, (struct sockaddr *)&a, sizeof a) != 0)
        fail("connect");
    __atomic_store_n(&sr_connected, 1, __ATOMIC_RELEASE);
    int fd = dup(s); /* the duplicate carries on the connection's counts */
    close(s);
    no_delay(fd);
    for (int i = 0; i < N; i++) {
        size_t q = request_size(0, i), r = reply_size(0, i);
        memset(b, 'A' + i % 26, q);
        errno = 4242;
        ssize_t n = i % 2 == 0 ? send(fd, b, q, 0) : sendto(fd, b, q, 0, NULL, 0);
        exact(n, q, "send");
        if (errno != 4242) {
            fprintf(stderr, "t_socket: errno changed by a successful send: %d\n", errno);
            exit(1);
        }
        exact(recv(fd, b, r, 0), r, "recv");
    }
    shutdown(fd, SHUT_WR);
    errno = 0;
    if (send(fd, b, 1, MSG_NOSIGNAL) != -1 || errno != EPIPE) {
        fprintf(stderr, "t_socket: send after shutdown: errno %d, expected EPIPE\n", errno);
        exit(1);
    }
    close(fd);
    return arg;
}

void *client_rw(void *arg)
{
    plx_thread_name("client_rw");
    static char b[16384];
    int s;
    if (ipv6) {
        s = socket(AF_INET6, SOCK_STREAM | SOCK_NONBLOCK, 0);
        struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port)};
        a.sin6_addr = in6addr_loopback;
        if (connect(s, (struct sockaddr *)&a, sizeof a) != 0 && errno != EINPROGRESS)
            fail("connect (non-blocking)");
    } else {
        s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (connect(s, (struct sockaddr *)&a, sizeof a) != 0 && errno != EINPROGRESS)
            fail("connect (non-blocking)");
    }
    struct pollfd p = {s, POLLOUT, 0};
    int err = 0;
    socklen_t len = sizeof err;
    if (poll(&p, 1, 10000) != 1 || getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err)
        fail("non-blocking connect");
    fcntl(s, F_SETFL, fcntl(s, F_GETFL) & ~O_NONBLOCK);
    int fd = 200;
    if (dup2(s, fd) != fd)
        fail("dup2");
    close(s);
    no_delay(fd);
    for (int i = 0; i < N; i++) {
        size_t q = request_size(1, i), r = reply_size(1, i);
        memset(b, 'A' + i % 26, q);
        ssize_t n;
        if (i % 2 == 0) {
            n = write(fd, b, q);
        } else {
            struct iovec v[2] = {{b, 7}, {b + 7, q - 7}};
            n = writev(fd, v, 2);
        }
        exact(n, q, "write");
        if (i % 2 == 0) {
            n = read(fd, b, r);
        } else {
            struct iovec v[2] = {{b, r / 2}, {b + r / 2, r - r / 2}};
            n = readv(fd, v, 2);
        }
        exact(n, r, "read");
    }
    close(fd);
    return arg;
}

int main(void)
{
    int l = socket(AF_INET6, SOCK_STREAM, 0);
    int zero = 0;
    struct sockaddr_in6 a6 = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_ANY_INIT};
    if (l < 0 || setsockopt(l, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero) != 0 ||
        bind(l, (struct sockaddr *)&a6, sizeof a6) != 0) {
        if (l >= 0)
            close(l);
        ipv6 = 0;
        l = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a4 = {.sin_family = AF_INET};
        a4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (bind(l, (struct sockaddr *)&a4, sizeof a4) != 0)
            fail("bind");
    }
    if (listen(l, 4) != 0)
        fail("listen");
    struct sockaddr_storage me;
    socklen_t len = sizeof me;
    getsockname(l, (struct sockaddr *)&me, &len);
    port = ntohs(ipv6 ? ((struct sockaddr_in6 *)&me)->sin6_port : ((struct sockaddr_in *)&me)->sin_port);
    pthread_t th[3];
    pthread_create(&th[0], NULL, server, (void *)(long)l);
    pthread_create(&th[1], NULL, client_sr, NULL);
    /* client_sr's connection is complete first, so it is the one accept() takes */
    while (!__atomic_load_n(&sr_connected, __ATOMIC_ACQUIRE)) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    pthread_create(&th[2], NULL, client_rw, NULL);
    int null = open("/dev/null", O_WRONLY);
    for (int i = 0; i < 100; i++)
        if (write(null, "x", 1) != 1)
            fail("write /dev/null");
    close(null);
    for (int i = 0; i < 3; i++)
        pthread_join(th[i], NULL);
    close(l);
    printf("ipv6 %d\n", ipv6);
    return 0;
}
