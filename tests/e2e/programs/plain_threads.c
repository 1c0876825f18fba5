/* Built with plain cc (no instrumentation): 4 threads x 1000 acquisitions of one mutex, a
 * condition variable handshake, joins, and a TCP connection on 127.0.0.1 carrying 10 writes
 * of 100 bytes (left out with the argument `locks`). Measured by LD_PRELOAD alone. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define THREADS 4
#define LOCKS 1000
#define WRITES 10
#define BYTES 100

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long counter;
static int listener;

static void *worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < LOCKS; i++) {
        pthread_mutex_lock(&lock);
        counter++;
        pthread_mutex_unlock(&lock);
    }
    return NULL;
}

static void *server(void *arg)
{
    (void)arg;
    int c = accept(listener, NULL, NULL);
    char buf[BYTES];
    long total = 0;
    for (;;) {
        ssize_t n = read(c, buf, sizeof buf);
        if (n <= 0)
            break;
        total += n;
    }
    close(c);
    return (void *)total;
}

int main(int argc, char **argv)
{
    pthread_t t[THREADS], s;
    for (int i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    if (argc > 1 && strcmp(argv[1], "locks") == 0) {
        printf("counter %ld\n", counter);
        return 0;
    }

    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    listener = socket(AF_INET, SOCK_STREAM, 0);
    if (bind(listener, (struct sockaddr *)&a, sizeof a) != 0 || listen(listener, 1) != 0 ||
        getsockname(listener, (struct sockaddr *)&a, &len) != 0)
        return 1;
    pthread_create(&s, NULL, server, NULL);
    int c = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(c, (struct sockaddr *)&a, sizeof a) != 0)
        return 1;
    char buf[BYTES];
    memset(buf, 'x', sizeof buf);
    for (int i = 0; i < WRITES; i++)
        if (write(c, buf, sizeof buf) != BYTES)
            return 1;
    close(c);
    void *received;
    pthread_join(s, &received);
    close(listener);
    printf("counter %ld received %ld\n", counter, (long)received);
    return 0;
}
