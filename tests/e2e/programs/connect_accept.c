/* A client that prepares, then connects; a server that blocks in accept() until it does, then
 * works WORK_MS. Nothing but the connection passes between them (no bytes): only the arc from
 * the client's connect to the server's accept explains the server's wait.
 *   connect_accept server PORT_FILE   listens on 127.0.0.1, writes its port to PORT_FILE
 *   connect_accept client PORT MS     prepares MS ms, connects to PORT
 *   connect_accept nbclient PORT MS   the same with a non-blocking connect completed by poll()
 *                                     and SO_ERROR; prints "in progress" when it was
 *   connect_accept threads MS         both in one process: a client thread and main serving
 *   connect_accept pollread MS        one process: a reader thread connects and waits in poll()
 *                                     until main, once it accepted and prepared MS ms, writes 8
 *                                     bytes, which the reader then reads */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define WORK_MS 50

static int port, prep_ms;

__attribute__((no_instrument_function)) static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

__attribute__((no_instrument_function)) static void spin(int ms)
{
    double end = now_s() + ms * 1e-3;
    while (now_s() < end)
        ;
}

__attribute__((noinline)) void prepare(void)
{
    spin(prep_ms);
}

__attribute__((noinline)) void work(void)
{
    spin(WORK_MS);
}

__attribute__((noinline)) int client(void)
{
    prepare();
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
                            .sin_port = htons((unsigned short)port)};
    if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof a) != 0)
        return 1;
    close(s);
    return 0;
}

/* O_NONBLOCK connect; poll for writability; SO_ERROR says how it ended. */
__attribute__((noinline)) int nbclient(void)
{
    prepare();
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
                            .sin_port = htons((unsigned short)port)};
    if (s < 0 || fcntl(s, F_SETFL, O_NONBLOCK) != 0)
        return 1;
    int rc = connect(s, (struct sockaddr *)&a, sizeof a);
    if (rc != 0 && errno != EINPROGRESS)
        return 1;
    if (rc != 0) {
        printf("in progress\n");
        struct pollfd p = {.fd = s, .events = POLLOUT};
        int err = 0;
        socklen_t len = sizeof err;
        if (poll(&p, 1, 10000) != 1 || getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &len) != 0 ||
            err != 0)
            return 1;
    }
    close(s);
    return 0;
}

static void *client_thread(void *arg)
{
    (void)arg;
    return (void *)(long)client();
}

static int listener(void)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof a) != 0 || listen(s, 1) != 0 ||
        getsockname(s, (struct sockaddr *)&a, &len) != 0)
        return -1;
    port = ntohs(a.sin_port);
    return s;
}

__attribute__((noinline)) int serve(int s)
{
    int c = accept(s, NULL, NULL);
    if (c < 0)
        return 5;
    work();
    close(c);
    close(s);
    return 0;
}

/* Connects, then waits in poll() for the 8 bytes main writes and reads them. */
__attribute__((noinline)) void *poll_reader(void *arg)
{
    (void)arg;
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
                            .sin_port = htons((unsigned short)port)};
    char buf[8];
    struct pollfd p = {.fd = s, .events = POLLIN};
    if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof a) != 0 || poll(&p, 1, 10000) != 1 ||
        read(s, buf, sizeof buf) != (ssize_t)sizeof buf)
        return (void *)1L;
    close(s);
    return NULL;
}

__attribute__((noinline)) int pollread(void)
{
    int s = listener();
    pthread_t t;
    void *rc;
    if (s < 0 || pthread_create(&t, NULL, poll_reader, NULL) != 0)
        return 3;
    int c = accept(s, NULL, NULL);
    if (c < 0)
        return 5;
    prepare();
    if (write(c, "8 bytes!", 8) != 8)
        return 6;
    pthread_join(t, &rc);
    close(c);
    close(s);
    return (int)(long)rc;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "server") == 0) {
        int s = listener();
        FILE *f = s < 0 ? NULL : fopen(argv[2], "w");
        if (!f)
            return 3;
        fprintf(f, "%d\n", port);
        fclose(f);
        return serve(s);
    }
    if (argc == 4 && strcmp(argv[1], "client") == 0) {
        port = atoi(argv[2]);
        prep_ms = atoi(argv[3]);
        return client();
    }
    if (argc == 4 && strcmp(argv[1], "nbclient") == 0) {
        port = atoi(argv[2]);
        prep_ms = atoi(argv[3]);
        return nbclient();
    }
    if (argc == 3 && strcmp(argv[1], "pollread") == 0) {
        prep_ms = atoi(argv[2]);
        return pollread();
    }
    if (argc == 3 && strcmp(argv[1], "threads") == 0) {
        prep_ms = atoi(argv[2]);
        int s = listener();
        pthread_t t;
        void *rc;
        if (s < 0 || pthread_create(&t, NULL, client_thread, NULL) != 0)
            return 3;
        int served = serve(s);
        pthread_join(t, &rc);
        return served ? served : (int)(long)rc;
    }
    return 2;
}
