/* Traced TCP connections by descriptor (streams.c): the connected TCP sockets whose connect or
 * accept the process saw, each with its two stream ids and the bytes moved each way. The socket
 * wrappers (adapters/socket.c) consult it on every data call; for a descriptor that is not
 * traced that costs one load, no lock and no system call.
 *
 * Invariants: a descriptor's entry is published (release) after its connection is complete, and
 * only connect, accept, close, dup and fork change entries; byte counts are atomic because
 * several threads may use one socket. A connection's stream ids are written once, before
 * `ready` is set (release). */
#ifndef PLX_STREAMS_H
#define PLX_STREAMS_H

#include "plx_internal.h"

#include <sys/socket.h>

#define PLX_STREAM_FDS 65536u /* descriptors from this one up are not traced */

struct plx_conn {
    _Atomic uint64_t out, in;       /* stream ids: this process writing, this process reading */
    _Atomic uint64_t written, read; /* bytes moved since the connect or accept */
    _Atomic uint32_t ready;         /* ids known (a non-blocking connect learns them on first use) */
    _Atomic uint32_t refs;          /* descriptors naming it (dup); 0 when free */
    _Atomic uint32_t pending;       /* a non-blocking connect in progress, not yet asked again */
    uint32_t next_free;             /* 1 + next free connection, under the pool lock */
};

/* 1 + index of the descriptor's connection in plx_conns; 0 when the descriptor is not traced. */
PLX_HIDDEN extern _Atomic uint32_t plx_stream_fd[PLX_STREAM_FDS];
PLX_HIDDEN extern struct plx_conn *plx_conns;

/* The connection of a traced descriptor, NULL for any other: the data calls' only check. */
static inline struct plx_conn *plx_stream_conn(int fd)
{
    if (PLX_UNLIKELY((unsigned)fd >= PLX_STREAM_FDS))
        return NULL;
    uint32_t v = atomic_load_explicit(&plx_stream_fd[fd], memory_order_acquire);
    return PLX_LIKELY(v == 0) ? NULL : &plx_conns[v - 1];
}

/* `n` bytes moved (dir 0 written, 1 read): the direction's offset after them. */
static inline uint64_t plx_stream_moved(struct plx_conn *c, int dir, uint64_t n)
{
    return atomic_fetch_add_explicit(dir ? &c->read : &c->written, n, memory_order_relaxed) + n;
}

/* After connect to AF_INET/AF_INET6 address `to` (`len` bytes): `established` (it returned 0)
 * or in progress (EINPROGRESS, EINTR: the ids are known at once, from the local address the
 * connect bound and `to`). 1 when this call opened the connection (its stream send of 0 bytes
 * is to be recorded), 0 for none or for a connect in progress asked again. Cold: a few system
 * calls. */
PLX_HIDDEN int plx_stream_connected(int fd, int established, const struct sockaddr *to,
                                     socklen_t len);
/* After accept/accept4 returned `fd`. */
PLX_HIDDEN void plx_stream_accepted(int fd);
/* Before the descriptor is closed (close, close_range, closefrom); `fd` may be untraced. */
PLX_HIDDEN void plx_stream_closed(int fd);
PLX_HIDDEN void plx_stream_closed_range(unsigned first, unsigned last);
/* After dup/dup2/dup3 made `newfd` name what `oldfd` names. */
PLX_HIDDEN void plx_stream_dup(int oldfd, int newfd);
/* Whether the connection's stream ids are known, finding them now for a non-blocking connect. */
PLX_HIDDEN int plx_stream_ready(int fd, struct plx_conn *c);
/* In a fork()ed child: traced descriptors stay traced (their counts go on), the pool is unlocked. */
PLX_HIDDEN void plx_streams_after_fork(void);

#endif /* PLX_STREAMS_H */
