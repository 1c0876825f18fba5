/* Socket calls, interposed by symbol (LD_PRELOAD suffices): connect and accept make a connected
 * TCP socket traced (core/streams.c), close and dup keep the descriptor table right, and each
 * send or receive call on a traced socket is a region of kind 5 named after the call, holding a
 * stream event for the bytes it moved (spec/format.md "Stream subtypes"); connect, accept and
 * accept4 are regions of kind 5 too (the time a client and a server wait for each other), each
 * holding a stream event of 0 bytes that links the two ends.
 *
 * A data call on any other descriptor costs the table load before the real call. On a traced
 * one every byte is counted, whichever thread moves it (offsets must match the peer's); the
 * region and event are recorded only for a measured thread outside the runtime (its guard
 * free). As in sync.c the real call runs with the guard released, so a signal handler may run
 * measured code meanwhile; errno is the real call's on return. */
#include "../core/hotpath.h"
#include "../core/streams.h"
#include "call_region.h"

#include <dlfcn.h>
#include <errno.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#define PLX_EXPORT __attribute__((visibility("default")))

/* The socket address arguments as <sys/socket.h> declares them (a transparent union with
 * _GNU_SOURCE in C), and the pointer inside. */
#if defined __cplusplus || !__GNUC_PREREQ(2, 7) || !defined __USE_GNU
#define SA(a) (a)
#else
#define SA(a) ((a).__sockaddr__)
#endif

extern void __chk_fail(void) __attribute__((noreturn));

static struct {
    int (*connect)(int, __CONST_SOCKADDR_ARG, socklen_t);
    int (*accept)(int, __SOCKADDR_ARG, socklen_t *);
    int (*accept4)(int, __SOCKADDR_ARG, socklen_t *, int);
    int (*close)(int);
    int (*close_range)(unsigned, unsigned, int);
    void (*closefrom)(int);
    int (*dup)(int);
    int (*dup2)(int, int);
    int (*dup3)(int, int, int);
} real;

__attribute__((noinline, cold)) static void *lazy(void **slot, const char *name)
{
    if (!*slot)
        *slot = dlsym(RTLD_NEXT, name);
    return *slot;
}

/* Resolved by the constructor; lazily when called before it (another library's constructor,
 * or the runtime's own reads while it starts). The data calls' pointers start at a stub that
 * resolves them (DATA_CALL), so their check is a load and a jump. */
#define REAL(f) ((typeof(real.f))(real.f ? (void *)real.f : lazy((void **)&real.f, #f)))

/* ---- recording ---------------------------------------------------------------------------- */

/* Each call's region (kind 5). */
PLX_CALL_REGION(send);
PLX_CALL_REGION(sendto);
PLX_CALL_REGION(sendmsg);
PLX_CALL_REGION(write);
PLX_CALL_REGION(writev);
PLX_CALL_REGION(recv);
PLX_CALL_REGION(recvfrom);
PLX_CALL_REGION(recvmsg);
PLX_CALL_REGION(read);
PLX_CALL_REGION(readv);
PLX_CALL_REGION(accept);
PLX_CALL_REGION(accept4);
PLX_CALL_REGION(connect);

/* Before the real call on a traced descriptor: the region is entered (clock read last). */
__attribute__((noinline)) static struct plx_call call_begin(struct plx_call_region *r)
{
    struct plx_call k = {NULL, 0};
    int saved = errno;
    struct plx_thread *t = plx_wrapper_thread();
    if (t)
        k = plx_call_enter(t, r);
    errno = saved;
    return k;
}

/* After it: the clock is read first (the region's end), then `moved` bytes (0 for EOF, an
 * error or a peek) are counted on the connection; a measured thread records the stream event
 * at the region's end time and leaves the region. `opened`: the call opened connection `c`
 * (connect, accept), recorded as an event of 0 bytes at offset 0 (spec/format.md). */
__attribute__((noinline)) static void call_end_as(struct plx_call k, int fd, struct plx_conn *c,
                                                  int dir, ssize_t moved, int opened)
{
    int saved = errno;
    struct plx_thread *t = k.t;
    uint64_t now = t ? plx_ticks() : 0;
    uint64_t end = moved > 0 ? plx_stream_moved(c, dir, (uint64_t)moved) : 0;
    /* the guard is taken from outside only by the process end, which has written this thread */
    if (t && !t->guard && !t->dead) {
        t->guard++;
        if ((moved > 0 || (opened && c)) && t->buf && plx_stream_ready(fd, c)) {
            uint64_t w[PLX_EXT_STREAM_SEND_WORDS];
            uint64_t id = atomic_load_explicit(dir ? &c->in : &c->out, memory_order_relaxed);
            if (dir)
                plx_ext_pack_stream_recv(w, id, end, (uint64_t)moved);
            else
                plx_ext_pack_stream_send(w, id, end, (uint64_t)moved);
            _Static_assert(PLX_EXT_STREAM_SEND_WORDS == PLX_EXT_STREAM_RECV_WORDS, "stream payloads");
            plx_trace_ext_at(t, now, dir ? PLX_EXT_STREAM_RECV : PLX_EXT_STREAM_SEND, w,
                             PLX_EXT_STREAM_SEND_WORDS);
        }
        plx_call_leave(k, now);
        t->guard--;
    }
    errno = saved;
}

static void call_end(struct plx_call k, int fd, struct plx_conn *c, int dir, ssize_t moved)
{
    call_end_as(k, fd, c, dir, moved, 0);
}

/* A data call `name` with parameters PARAMS (the descriptor is `fd`) and arguments ARGS:
 * do_<name> is the check, inlined into the exported function, and the real call; the traced
 * path is a function of its own so the check stays a load and a tail call. `dir` 0 writes,
 * 1 reads; `moves` says whether a positive result took bytes off the stream (not MSG_PEEK). */
#define LIST(...) __VA_ARGS__
#define DATA_CALL(name, dir, moves, PARAMS, ARGS)                                             \
    static ssize_t first_##name(LIST PARAMS);                                              \
    static ssize_t (*_Atomic real_##name)(LIST PARAMS) = first_##name;                     \
    static void resolve_##name(void)                                                      \
    {                                                                                      \
        atomic_store_explicit(&real_##name, (typeof(real_##name))dlsym(RTLD_NEXT, #name),  \
                              memory_order_relaxed);                                       \
    }                                                                                      \
    __attribute__((noinline, cold)) static ssize_t first_##name(LIST PARAMS)               \
    {                                                                                      \
        resolve_##name();                                                                  \
        return REAL_DATA(name)(LIST ARGS);                                                 \
    }                                                                                      \
    __attribute__((noinline)) static ssize_t traced_##name(struct plx_conn *c_, LIST PARAMS) \
    {                                                                                      \
        struct plx_call k_ = call_begin(&r_##name);                                            \
        ssize_t n_ = REAL_DATA(name)(LIST ARGS);                                           \
        call_end(k_, fd, c_, dir, (moves) && n_ > 0 ? n_ : 0);                             \
        return n_;                                                                         \
    }                                                                                      \
    static inline ssize_t do_##name(LIST PARAMS)                                           \
    {                                                                                      \
        struct plx_conn *c_ = plx_stream_conn(fd);                                         \
        if (PLX_UNLIKELY(c_ != NULL))                                                      \
            return traced_##name(c_, LIST ARGS);                                           \
        return REAL_DATA(name)(LIST ARGS);                                                 \
    }
#define REAL_DATA(name) atomic_load_explicit(&real_##name, memory_order_relaxed)

DATA_CALL(send, 0, 1, (int fd, const void *buf, size_t n, int flags), (fd, buf, n, flags))
DATA_CALL(sendto, 0, 1,
          (int fd, const void *buf, size_t n, int flags, __CONST_SOCKADDR_ARG to, socklen_t tolen),
          (fd, buf, n, flags, to, tolen))
DATA_CALL(sendmsg, 0, 1, (int fd, const struct msghdr *msg, int flags), (fd, msg, flags))
DATA_CALL(write, 0, 1, (int fd, const void *buf, size_t n), (fd, buf, n))
DATA_CALL(writev, 0, 1, (int fd, const struct iovec *iov, int n), (fd, iov, n))
DATA_CALL(recv, 1, !(flags & MSG_PEEK), (int fd, void *buf, size_t n, int flags),
          (fd, buf, n, flags))
DATA_CALL(recvfrom, 1, !(flags & MSG_PEEK),
          (int fd, void *buf, size_t n, int flags, __SOCKADDR_ARG from, socklen_t *fromlen),
          (fd, buf, n, flags, from, fromlen))
DATA_CALL(recvmsg, 1, !(flags & MSG_PEEK), (int fd, struct msghdr *msg, int flags),
          (fd, msg, flags))
DATA_CALL(read, 1, 1, (int fd, void *buf, size_t n), (fd, buf, n))
DATA_CALL(readv, 1, 1, (int fd, const struct iovec *iov, int n), (fd, iov, n))

__attribute__((constructor(101))) static void resolve(void)
{
    REAL(connect), REAL(accept), REAL(accept4), REAL(close), REAL(close_range), REAL(closefrom);
    REAL(dup), REAL(dup2), REAL(dup3);
    resolve_send(), resolve_sendto(), resolve_sendmsg(), resolve_write(), resolve_writev();
    resolve_recv(), resolve_recvfrom(), resolve_recvmsg(), resolve_read(), resolve_readv();
}

PLX_EXPORT ssize_t send(int fd, const void *buf, size_t n, int flags)
{
    return do_send(fd, buf, n, flags);
}

PLX_EXPORT ssize_t sendto(int fd, const void *buf, size_t n, int flags, __CONST_SOCKADDR_ARG to,
                          socklen_t tolen)
{
    return do_sendto(fd, buf, n, flags, to, tolen);
}

PLX_EXPORT ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
    return do_sendmsg(fd, msg, flags);
}

PLX_EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
    return do_write(fd, buf, n);
}

PLX_EXPORT ssize_t writev(int fd, const struct iovec *iov, int n)
{
    return do_writev(fd, iov, n);
}

PLX_EXPORT ssize_t recv(int fd, void *buf, size_t n, int flags)
{
    return do_recv(fd, buf, n, flags);
}

PLX_EXPORT ssize_t recvfrom(int fd, void *buf, size_t n, int flags, __SOCKADDR_ARG from,
                            socklen_t *fromlen)
{
    return do_recvfrom(fd, buf, n, flags, from, fromlen);
}

PLX_EXPORT ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
    return do_recvmsg(fd, msg, flags);
}

PLX_EXPORT ssize_t read(int fd, void *buf, size_t n)
{
    return do_read(fd, buf, n);
}

PLX_EXPORT ssize_t readv(int fd, const struct iovec *iov, int n)
{
    return do_readv(fd, iov, n);
}

/* The _FORTIFY_SOURCE forms: glibc does not route them through the calls above. */
PLX_EXPORT ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen)
{
    if (n > buflen)
        __chk_fail();
    return do_read(fd, buf, n);
}

PLX_EXPORT ssize_t __recv_chk(int fd, void *buf, size_t n, size_t buflen, int flags)
{
    if (n > buflen)
        __chk_fail();
    return do_recv(fd, buf, n, flags);
}

PLX_EXPORT ssize_t __recvfrom_chk(int fd, void *buf, size_t n, size_t buflen, int flags,
                                  __SOCKADDR_ARG from, socklen_t *fromlen)
{
    if (n > buflen)
        __chk_fail();
    return do_recvfrom(fd, buf, n, flags, from, fromlen);
}

/* ---- which descriptors are traced ---------------------------------------------------------- */

static int ip_family(const struct sockaddr *a, socklen_t len)
{
    return a && len >= sizeof(sa_family_t) && (a->sa_family == AF_INET || a->sa_family == AF_INET6);
}

/* connect to an IP address is a region of kind 5 on a measured thread, in a program with
 * instrumented code or without (a launcher records nothing: core/launchers.c); its stream send
 * of 0 bytes is what the peer's accept waited for (the critical path's arc between the two).
 * A non-blocking connect (EINPROGRESS) holds it too, at the connect's own time: a thread's
 * events are in time order, so it cannot be written later with that time, and it is the
 * connect that the peer's accept answers. Its ids come from the address the connect bound and
 * the destination; asking again (connect returning 0 or EISCONN later) records nothing more. */
PLX_EXPORT int connect(int fd, __CONST_SOCKADDR_ARG addr, socklen_t len)
{
    if (!plx_active || !ip_family(SA(addr), len))
        return REAL(connect)(fd, addr, len);
    struct plx_call k = call_begin(&r_connect);
    int rc = REAL(connect)(fd, addr, len);
    int saved = errno, opened = 0;
    if (rc == 0 || saved == EINPROGRESS || saved == EINTR) /* the last two go on without us */
        opened = plx_stream_connected(fd, rc == 0, SA(addr), len);
    errno = saved;
    if (k.t)
        call_end_as(k, fd, opened ? plx_stream_conn(fd) : NULL, 0, 0, 1);
    return rc;
}

static void accepted(int fd, const struct sockaddr *a, const socklen_t *len)
{
    int saved = errno;
    if (a && len && *len >= sizeof(sa_family_t) && !ip_family(a, *len))
        plx_stream_closed(fd); /* not IP: only a stale entry to forget */
    else
        plx_stream_accepted(fd);
    errno = saved;
}

/* accept and accept4 are regions of their own (kind 5): the time a server blocks in them is
 * waiting for a client, which the analysis must not take for CPU. A traced connection's
 * stream receive of 0 bytes inside names the client's connect that ended the wait. */
static int accept_end(struct plx_call k, int rc, const struct sockaddr *a, const socklen_t *len)
{
    int saved = errno;
    if (rc >= 0 && plx_active)
        accepted(rc, a, len);
    if (k.t)
        call_end_as(k, rc, rc >= 0 ? plx_stream_conn(rc) : NULL, 1, 0, 1);
    errno = saved;
    return rc;
}

PLX_EXPORT int accept(int fd, __SOCKADDR_ARG addr, socklen_t *len)
{
    struct plx_call k = plx_active ? call_begin(&r_accept) : (struct plx_call){NULL, 0};
    int rc = REAL(accept)(fd, addr, len);
    return accept_end(k, rc, SA(addr), len);
}

PLX_EXPORT int accept4(int fd, __SOCKADDR_ARG addr, socklen_t *len, int flags)
{
    struct plx_call k = plx_active ? call_begin(&r_accept4) : (struct plx_call){NULL, 0};
    int rc = REAL(accept4)(fd, addr, len, flags);
    return accept_end(k, rc, SA(addr), len);
}

/* The entry goes first: a descriptor number reused by another thread right after the close
 * must not inherit it. */
PLX_EXPORT int close(int fd)
{
    if (PLX_UNLIKELY(plx_stream_conn(fd) != NULL))
        plx_stream_closed(fd);
    return REAL(close)(fd);
}

PLX_EXPORT int close_range(unsigned first, unsigned last, int flags)
{
    if (!(flags & CLOSE_RANGE_CLOEXEC))
        plx_stream_closed_range(first, last);
    return REAL(close_range)(first, last, flags);
}

PLX_EXPORT void closefrom(int low)
{
    if (low >= 0)
        plx_stream_closed_range((unsigned)low, ~0u);
    REAL(closefrom)(low);
}

PLX_EXPORT int dup(int fd)
{
    int rc = REAL(dup)(fd);
    if (rc >= 0 && (plx_stream_conn(fd) || plx_stream_conn(rc)))
        plx_stream_dup(fd, rc);
    return rc;
}

/* dup2 and dup3 close `newfd` first: it names the old descriptor's connection, or none. */
PLX_EXPORT int dup2(int oldfd, int newfd)
{
    int rc = REAL(dup2)(oldfd, newfd);
    if (rc >= 0 && (plx_stream_conn(oldfd) || plx_stream_conn(rc)))
        plx_stream_dup(oldfd, rc);
    return rc;
}

PLX_EXPORT int dup3(int oldfd, int newfd, int flags)
{
    int rc = REAL(dup3)(oldfd, newfd, flags);
    if (rc >= 0 && (plx_stream_conn(oldfd) || plx_stream_conn(rc)))
        plx_stream_dup(oldfd, rc);
    return rc;
}
