/* A multi-threaded object server, a small cousin of the EXODUS storage manager in the IPS-2
 * paper's client/server study. Clients connect over TCP and send requests: PUT stores an
 * object under a key, GET returns it — waiting until some client has put it. One reader thread
 * per connection receives the requests and queues them; a pool of worker threads serves the
 * queue and writes the replies, so the thread that receives a request is not the one that
 * answers it.
 *
 *   server PORTFILE CLIENTS [WORKERS]     listens on 127.0.0.1, an ephemeral port written to
 *                                         PORTFILE; ends after CLIENTS connections have closed
 *
 * Protocol (all integers little-endian u32): request = op (1 PUT, 2 GET), key, size, then size
 * bytes for a PUT; reply = key, size, then size bytes (GET) or nothing (PUT). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_KEYS 4096
#define QUEUE 256

struct request {
    uint32_t op, key, size;
    char *data;
    struct conn *conn;
};

struct conn {
    int fd;
    pthread_mutex_t write_lock;
};

static struct {
    char *data[MAX_KEYS];
    uint32_t size[MAX_KEYS];
    pthread_mutex_t lock;
    pthread_cond_t stored;
} table = {.lock = PTHREAD_MUTEX_INITIALIZER, .stored = PTHREAD_COND_INITIALIZER};

static struct {
    struct request items[QUEUE];
    int head, count, closed;
    pthread_mutex_t lock;
    pthread_cond_t nonempty, nonfull;
} queue = {.lock = PTHREAD_MUTEX_INITIALIZER,
           .nonempty = PTHREAD_COND_INITIALIZER,
           .nonfull = PTHREAD_COND_INITIALIZER};

static volatile double sink;

static int read_full(int fd, void *buf, size_t n)
{
    char *p = buf;
    while (n > 0) {
        ssize_t r = read(fd, p, n);
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
        ssize_t r = send(fd, p, n, MSG_NOSIGNAL);
        if (r <= 0)
            return -1;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

/* The server's own work on an object: a checksum over it, a few passes. */
__attribute__((noinline)) static void checksum(const char *data, uint32_t size)
{
    double s = 0;
    for (int pass = 0; pass < 8; pass++)
        for (uint32_t i = 0; i < size; i++)
            s = s * 0.999 + (unsigned char)data[i];
    sink = s;
}

static void enqueue(struct request r)
{
    pthread_mutex_lock(&queue.lock);
    while (queue.count == QUEUE)
        pthread_cond_wait(&queue.nonfull, &queue.lock);
    queue.items[(queue.head + queue.count++) % QUEUE] = r;
    pthread_cond_signal(&queue.nonempty);
    pthread_mutex_unlock(&queue.lock);
}

static int dequeue(struct request *r)
{
    pthread_mutex_lock(&queue.lock);
    while (queue.count == 0 && !queue.closed)
        pthread_cond_wait(&queue.nonempty, &queue.lock);
    int got = queue.count > 0;
    if (got) {
        *r = queue.items[queue.head];
        queue.head = (queue.head + 1) % QUEUE;
        queue.count--;
        pthread_cond_signal(&queue.nonfull);
    }
    pthread_mutex_unlock(&queue.lock);
    return got;
}

__attribute__((noinline)) static void serve_put(struct request *r)
{
    checksum(r->data, r->size);
    pthread_mutex_lock(&table.lock);
    table.data[r->key] = r->data;
    table.size[r->key] = r->size;
    pthread_cond_broadcast(&table.stored);
    pthread_mutex_unlock(&table.lock);
    uint32_t reply[2] = {r->key, 0};
    pthread_mutex_lock(&r->conn->write_lock);
    write_full(r->conn->fd, reply, sizeof reply);
    pthread_mutex_unlock(&r->conn->write_lock);
}

__attribute__((noinline)) static void serve_get(struct request *r)
{
    pthread_mutex_lock(&table.lock);
    while (!table.data[r->key])
        pthread_cond_wait(&table.stored, &table.lock);
    char *data = table.data[r->key];
    uint32_t size = table.size[r->key];
    pthread_mutex_unlock(&table.lock);
    checksum(data, size);
    uint32_t reply[2] = {r->key, size};
    pthread_mutex_lock(&r->conn->write_lock);
    write_full(r->conn->fd, reply, sizeof reply);
    write_full(r->conn->fd, data, size);
    pthread_mutex_unlock(&r->conn->write_lock);
}

static void *worker(void *arg)
{
    (void)arg;
    struct request r;
    while (dequeue(&r)) {
        if (r.op == 1)
            serve_put(&r);
        else
            serve_get(&r);
    }
    return NULL;
}

/* One per connection: receives the requests and queues them. */
static void *reader(void *arg)
{
    struct conn *c = arg;
    uint32_t hdr[3];
    while (read_full(c->fd, hdr, sizeof hdr) == 0) {
        struct request r = {hdr[0], hdr[1], hdr[2], NULL, c};
        if (r.key >= MAX_KEYS || (r.op != 1 && r.op != 2) || r.size > (1u << 24))
            break;
        if (r.op == 1) {
            r.data = malloc(r.size ? r.size : 1);
            if (!r.data || read_full(c->fd, r.data, r.size) != 0)
                break;
        }
        enqueue(r);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: server PORTFILE CLIENTS [WORKERS]\n");
        return 2;
    }
    int clients = atoi(argv[2]);
    int nworkers = argc > 3 ? atoi(argv[3]) : 4;
    int ls = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof a;
    if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof a) != 0 || listen(ls, 16) != 0 ||
        getsockname(ls, (struct sockaddr *)&a, &alen) != 0) {
        perror("server");
        return 1;
    }
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", argv[1]);
    FILE *pf = fopen(tmp, "w");
    if (!pf || fprintf(pf, "%d\n", ntohs(a.sin_port)) < 0 || fclose(pf) != 0 ||
        rename(tmp, argv[1]) != 0) {
        perror(argv[1]);
        return 1;
    }
    pthread_t workers[64], readers[64];
    if (nworkers < 1 || nworkers > 64 || clients < 1 || clients > 64) {
        fprintf(stderr, "server: 1-64 clients and workers\n");
        return 2;
    }
    for (int i = 0; i < nworkers; i++)
        pthread_create(&workers[i], NULL, worker, NULL);
    struct conn conns[64];
    for (int i = 0; i < clients; i++) {
        conns[i].fd = accept(ls, NULL, NULL);
        /* replies are a header then the object: no Nagle delay between them (see client.c) */
        const char *nagle = getenv("CS_NAGLE");
        int one = 1;
        if (!(nagle && *nagle == '1'))
            setsockopt(conns[i].fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        pthread_mutex_init(&conns[i].write_lock, NULL);
        pthread_create(&readers[i], NULL, reader, &conns[i]);
    }
    for (int i = 0; i < clients; i++)
        pthread_join(readers[i], NULL);
    pthread_mutex_lock(&queue.lock);
    queue.closed = 1;
    pthread_cond_broadcast(&queue.nonempty);
    pthread_mutex_unlock(&queue.lock);
    for (int i = 0; i < nworkers; i++)
        pthread_join(workers[i], NULL);
    for (int i = 0; i < clients; i++)
        close(conns[i].fd);
    printf("server: %d clients served by %d workers\n", clients, nworkers);
    return 0;
}
