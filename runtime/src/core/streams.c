/* Traced TCP connections (streams.h): the descriptor table, the connection pool and the stream
 * ids of spec/format.md "Stream subtypes".
 *
 * The table is static (zero pages until a descriptor is traced). Connections come from a pool
 * mapped on the first one; the pool lock is taken only by connect, accept, close and dup of
 * traced descriptors, never by a data call. */
#include "streams.h"

#include <errno.h>
#include <netinet/in.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>

_Atomic uint32_t plx_stream_fd[PLX_STREAM_FDS];
struct plx_conn *plx_conns;

static atomic_flag pool_lock = ATOMIC_FLAG_INIT;
static uint32_t pool_used;     /* connections handed out so far (bump), under the lock */
static uint32_t free_head;     /* 1 + first free connection, 0 if none, under the lock */
static _Atomic int highest_fd = -1; /* highest descriptor ever traced: bounds close_range */

static void pool_take(void)
{
    while (atomic_flag_test_and_set_explicit(&pool_lock, memory_order_acquire))
        sched_yield();
}

static void pool_give(void)
{
    atomic_flag_clear_explicit(&pool_lock, memory_order_release);
}

/* A fresh connection (refs 1, no bytes, ids unknown), as 1 + its index; 0 when none is left. */
static uint32_t conn_new(void)
{
    uint32_t v = 0;
    pool_take();
    if (!plx_conns) {
        void *p = mmap(NULL, sizeof(struct plx_conn) * PLX_STREAM_FDS, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p != MAP_FAILED)
            plx_conns = p;
    }
    if (plx_conns && free_head) {
        v = free_head;
        free_head = plx_conns[v - 1].next_free;
    } else if (plx_conns && pool_used < PLX_STREAM_FDS) {
        v = ++pool_used;
    }
    pool_give();
    if (v) {
        struct plx_conn *c = &plx_conns[v - 1];
        atomic_store_explicit(&c->out, 0, memory_order_relaxed);
        atomic_store_explicit(&c->in, 0, memory_order_relaxed);
        atomic_store_explicit(&c->written, 0, memory_order_relaxed);
        atomic_store_explicit(&c->read, 0, memory_order_relaxed);
        atomic_store_explicit(&c->ready, 0, memory_order_relaxed);
        atomic_store_explicit(&c->pending, 0, memory_order_relaxed);
        atomic_store_explicit(&c->refs, 1, memory_order_relaxed);
    }
    return v;
}

/* Drops one descriptor's reference; the last one frees the connection. */
static void conn_put(uint32_t v)
{
    struct plx_conn *c = &plx_conns[v - 1];
    if (atomic_fetch_sub_explicit(&c->refs, 1, memory_order_acq_rel) != 1)
        return;
    pool_take();
    c->next_free = free_head;
    free_head = v;
    pool_give();
}

/* Makes `fd` name connection `v` (0: nothing), dropping what it named before. */
static void install(int fd, uint32_t v)
{
    uint32_t old = atomic_exchange_explicit(&plx_stream_fd[fd], v, memory_order_acq_rel);
    if (old)
        conn_put(old);
    int h = atomic_load_explicit(&highest_fd, memory_order_relaxed);
    while (v && fd > h &&
           !atomic_compare_exchange_weak_explicit(&highest_fd, &h, fd, memory_order_relaxed,
                                                  memory_order_relaxed))
        ;
}

/* ---- stream ids -------------------------------------------------------------------------- */

#define FNV_BASIS 0xcbf29ce484222325ull
#define FNV_PRIME 0x100000001b3ull

static uint64_t fnv(uint64_t h, const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * FNV_PRIME;
    return h;
}

/* An endpoint as the spec hashes it: address bytes in network order (4 for IPv4, an IPv4-mapped
 * IPv6 address included; 16 for IPv6), then the port's 2 bytes. Its length, 0 if not IP. */
static size_t endpoint(const struct sockaddr_storage *ss, unsigned char out[18])
{
    if (ss->ss_family == AF_INET) {
        const struct sockaddr_in *a = (const struct sockaddr_in *)ss;
        memcpy(out, &a->sin_addr, 4);
        memcpy(out + 4, &a->sin_port, 2);
        return 6;
    }
    if (ss->ss_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)ss;
        if (IN6_IS_ADDR_V4MAPPED(&a->sin6_addr)) {
            memcpy(out, a->sin6_addr.s6_addr + 12, 4);
            memcpy(out + 4, &a->sin6_port, 2);
            return 6;
        }
        memcpy(out, &a->sin6_addr, 16);
        memcpy(out + 16, &a->sin6_port, 2);
        return 18;
    }
    return 0;
}

/* The connection's ids from the socket's own and its peer's address (`to`, the address a
 * connect in progress was given; NULL: the peer's, asked of the socket); -1 if not an IP socket
 * or not connected (yet). */
static int find_ids_to(int fd, struct plx_conn *c, const struct sockaddr *to, socklen_t len)
{
    struct sockaddr_storage me, peer;
    socklen_t a = sizeof me, b = sizeof peer;
    unsigned char mine[18], theirs[18];
    if (getsockname(fd, (struct sockaddr *)&me, &a) != 0)
        return -1;
    size_t m = endpoint(&me, mine);
    if (!m)
        return -1;
    if (to) {
        memset(&peer, 0, sizeof peer);
        memcpy(&peer, to, len < sizeof peer ? len : sizeof peer);
    } else if (getpeername(fd, (struct sockaddr *)&peer, &b) != 0) {
        return -1;
    }
    size_t p = endpoint(&peer, theirs);
    if (!p)
        return -1;
    atomic_store_explicit(&c->out, fnv(fnv(FNV_BASIS, mine, m), theirs, p), memory_order_relaxed);
    atomic_store_explicit(&c->in, fnv(fnv(FNV_BASIS, theirs, p), mine, m), memory_order_relaxed);
    atomic_store_explicit(&c->ready, 1, memory_order_release);
    return 0;
}

static int find_ids(int fd, struct plx_conn *c)
{
    return find_ids_to(fd, c, NULL, 0);
}

int plx_stream_ready(int fd, struct plx_conn *c)
{
    if (PLX_LIKELY(atomic_load_explicit(&c->ready, memory_order_acquire)))
        return 1;
    int saved = errno;
    int ok = find_ids(fd, c) == 0;
    errno = saved;
    return ok;
}

static int is_stream(int fd)
{
    int type = 0;
    socklen_t len = sizeof type;
    return getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0 && type == SOCK_STREAM;
}

/* ---- table changes ---------------------------------------------------------------------- */

int plx_stream_connected(int fd, int established, const struct sockaddr *to, socklen_t len)
{
    if ((unsigned)fd >= PLX_STREAM_FDS)
        return 0;
    struct plx_conn *c = plx_stream_conn(fd);
    /* a non-blocking connect asked again and now done: the one in progress, its ids known */
    if (c && established && atomic_exchange_explicit(&c->pending, 0, memory_order_acq_rel)) {
        if (!atomic_load_explicit(&c->ready, memory_order_acquire))
            find_ids(fd, c);
        return 0;
    }
    uint32_t v = is_stream(fd) ? conn_new() : 0;
    if (v && established && find_ids(fd, &plx_conns[v - 1]) != 0) {
        conn_put(v);
        v = 0;
    }
    /* in progress: the ids from the local address (bound by the connect) and the destination;
     * else learnt on first use */
    if (v && !established) {
        atomic_store_explicit(&plx_conns[v - 1].pending, 1, memory_order_relaxed);
        if (to)
            find_ids_to(fd, &plx_conns[v - 1], to, len);
    }
    if (v || c)
        install(fd, v); /* 0: a stale entry of a descriptor closed behind our back */
    return v != 0;
}

void plx_stream_accepted(int fd)
{
    if ((unsigned)fd >= PLX_STREAM_FDS)
        return;
    uint32_t v = conn_new();
    if (v && (find_ids(fd, &plx_conns[v - 1]) != 0 || !is_stream(fd))) {
        conn_put(v);
        v = 0;
    }
    if (v || atomic_load_explicit(&plx_stream_fd[fd], memory_order_relaxed))
        install(fd, v); /* 0: a stale entry of a descriptor closed behind our back */
}

void plx_stream_closed(int fd)
{
    if ((unsigned)fd < PLX_STREAM_FDS &&
        atomic_load_explicit(&plx_stream_fd[fd], memory_order_relaxed))
        install(fd, 0);
}

void plx_stream_closed_range(unsigned first, unsigned last)
{
    int h = atomic_load_explicit(&highest_fd, memory_order_relaxed);
    if (h < 0)
        return;
    if (last > (unsigned)h)
        last = (unsigned)h;
    for (unsigned fd = first; fd <= last; fd++)
        plx_stream_closed((int)fd);
}

void plx_stream_dup(int oldfd, int newfd)
{
    if ((unsigned)newfd >= PLX_STREAM_FDS || oldfd == newfd)
        return;
    uint32_t v = (unsigned)oldfd < PLX_STREAM_FDS
                     ? atomic_load_explicit(&plx_stream_fd[oldfd], memory_order_acquire)
                     : 0;
    if (v)
        atomic_fetch_add_explicit(&plx_conns[v - 1].refs, 1, memory_order_relaxed);
    if (v || atomic_load_explicit(&plx_stream_fd[newfd], memory_order_relaxed))
        install(newfd, v);
}

void plx_streams_after_fork(void)
{
    atomic_flag_clear(&pool_lock); /* a thread that held it does not exist in the child */
}
