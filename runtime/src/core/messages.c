/* Messages of every message-passing layer (MPI's PMPI wrappers in libplx-mpi, MPJ Express through
 * the Java agent): the trace events (send, receive, collective) and the per-thread statistics by
 * (routine, peer, communicator, direction), in the thread's "mpi" live file, written as
 * MessageStats records when the thread's data is written. Peers are world ranks; communicators
 * are the ids of their CommDef records. */
#include "ext.h"
#include "hotpath.h"

#include <stddef.h>
#include <string.h>
#include <sys/mman.h>

#define STAT_SLOTS 4096u

/* 56 bytes, the item of the "mpi" live file (spec/format.md) */
struct stat_entry {
    uint32_t region, peer, comm, used;
    uint8_t dir, pad[7];
    uint64_t count, bytes, min, max;
};
_Static_assert(sizeof(struct stat_entry) == PLX_LIVE_MPI_ITEM_SIZE &&
               offsetof(struct stat_entry, used) == PLX_LIVE_MPI_OFF_USED &&
               offsetof(struct stat_entry, dir) == PLX_LIVE_MPI_OFF_DIRECTION &&
               offsetof(struct stat_entry, count) == PLX_LIVE_MPI_OFF_COUNT &&
               offsetof(struct stat_entry, max) == PLX_LIVE_MPI_OFF_MAX_BYTES, "live mpi item");

enum { DIR_SENT = 0, DIR_RECEIVED = 1 };

struct msg_thread {
    struct stat_entry *stats; /* STAT_SLOTS entries in the thread's "mpi" live file */
    struct plx_live_header *live;
    uint64_t lost;            /* statistics that found the table full */
};

static struct msg_thread *mine(struct plx_thread *t)
{
    if (!t->messages) {
        struct msg_thread *m = mmap(NULL, sizeof(struct msg_thread), PROT_READ | PROT_WRITE,
                                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
            return NULL;
        m->stats = plx_live_map("mpi", t->index, sizeof(struct stat_entry), STAT_SLOTS, &m->live);
        if (!m->stats) {
            munmap(m, sizeof *m);
            return NULL;
        }
        m->live->count = STAT_SLOTS; /* a hash table: readers take the entries marked used */
        t->messages = m;
    }
    return t->messages;
}

static void count(struct plx_thread *t, uint32_t region, uint32_t peer, uint32_t comm, int dir,
                  uint64_t bytes)
{
    struct msg_thread *m = mine(t);
    if (!m)
        return;
    uint32_t h = (uint32_t)(((uint64_t)region * 0x9E3779B1u ^ (uint64_t)peer * 0x85EBCA77u ^
                             (uint64_t)comm * 0xC2B2AE3Du ^ (uint64_t)dir) * 0x9E3779B97F4A7C15ull >> 40);
    for (uint32_t n = 0; n < STAT_SLOTS; n++) {
        struct stat_entry *e = &m->stats[(h + n) & (STAT_SLOTS - 1)];
        if (!e->used) {
            *e = (struct stat_entry){region, peer, comm, 0, (uint8_t)dir, {0}, 0, 0, bytes, bytes};
            __atomic_store_n(&e->used, 1, __ATOMIC_RELEASE);
        } else if (e->region != region || e->peer != peer || e->comm != comm || e->dir != dir) {
            continue;
        }
        e->count++;
        e->bytes += bytes;
        if (bytes < e->min)
            e->min = bytes;
        if (bytes > e->max)
            e->max = bytes;
        return;
    }
    m->lost++;
}

uint64_t plx_ext_msg_sent(struct plx_thread *t, uint32_t region, uint32_t comm, uint32_t peer,
                          int tag, uint64_t bytes)
{
    uint64_t w[PLX_EXT_SEND_WORDS];
    plx_ext_pack_send(w, peer, tag, bytes, comm);
    plx_trace_ext(t, PLX_EXT_SEND, w, PLX_EXT_SEND_WORDS);
    count(t, region, peer, comm, DIR_SENT, bytes);
    return t->buf ? t->sends++ : PLX_EXT_NO_SEND;
}

void plx_ext_msg_send_done(struct plx_thread *t, uint32_t thread, int mode, uint64_t send)
{
    uint64_t w[PLX_EXT_SEND_DONE_WORDS];
    plx_ext_pack_send_done(w, thread, (uint8_t)mode, send);
    plx_trace_ext(t, PLX_EXT_SEND_DONE, w, PLX_EXT_SEND_DONE_WORDS);
}

void plx_ext_msg_recv_posted(struct plx_thread *t, uint64_t posted)
{
    uint64_t w[PLX_EXT_RECV_POSTED_WORDS];
    plx_ext_pack_recv_posted(w, posted);
    plx_trace_ext(t, PLX_EXT_RECV_POSTED, w, PLX_EXT_RECV_POSTED_WORDS);
}

void plx_ext_msg_received(struct plx_thread *t, uint32_t region, uint32_t comm, uint32_t peer,
                          int tag, uint64_t bytes)
{
    uint64_t w[PLX_EXT_RECV_WORDS];
    plx_ext_pack_recv(w, peer, tag, bytes, comm);
    plx_trace_ext(t, PLX_EXT_RECV, w, PLX_EXT_RECV_WORDS);
    count(t, region, peer, comm, DIR_RECEIVED, bytes);
}

uint64_t plx_ext_msg_collective(struct plx_thread *t, uint32_t region, uint32_t comm,
                                uint32_t root, uint64_t sent, uint64_t received)
{
    uint64_t w[PLX_EXT_COLLECTIVE_WORDS];
    plx_ext_pack_collective(w, comm, root, sent, received);
    plx_trace_ext(t, PLX_EXT_COLLECTIVE, w, PLX_EXT_COLLECTIVE_WORDS);
    count(t, region, PLX_EXT_NO_PEER, comm, DIR_SENT, sent);
    count(t, region, PLX_EXT_NO_PEER, comm, DIR_RECEIVED, received);
    return t->buf ? t->collectives++ : PLX_EXT_NO_SEND;
}

void plx_ext_msg_coll_done(struct plx_thread *t, uint32_t thread, uint64_t collective)
{
    uint64_t w[PLX_EXT_COLL_DONE_WORDS];
    plx_ext_pack_coll_done(w, thread, collective);
    plx_trace_ext(t, PLX_EXT_COLL_DONE, w, PLX_EXT_COLL_DONE_WORDS);
}

struct plx_coll_bytes plx_ext_coll_bytes(enum plx_coll kind, int at_root, uint32_t ranks,
                                         uint64_t send, uint64_t recv)
{
    uint64_t n = ranks;
    switch (kind) {
    case PLX_COLL_BARRIER:
        break;
    case PLX_COLL_BCAST:
        return at_root ? (struct plx_coll_bytes){send, 0} : (struct plx_coll_bytes){0, send};
    case PLX_COLL_REDUCE:
        return (struct plx_coll_bytes){send, at_root ? send : 0};
    case PLX_COLL_ALLREDUCE:
        return (struct plx_coll_bytes){send, send};
    case PLX_COLL_GATHER:
        return (struct plx_coll_bytes){send, at_root ? recv * n : 0};
    case PLX_COLL_GATHERV:
        return (struct plx_coll_bytes){send, at_root ? recv : 0};
    case PLX_COLL_SCATTER:
        return (struct plx_coll_bytes){at_root ? send * n : 0, recv};
    case PLX_COLL_SCATTERV:
        return (struct plx_coll_bytes){at_root ? send : 0, recv};
    case PLX_COLL_ALLGATHER:
        return (struct plx_coll_bytes){send, recv * n};
    case PLX_COLL_ALLGATHERV:
    case PLX_COLL_ALLTOALLV:
    case PLX_COLL_REDUCE_SCATTER:
        return (struct plx_coll_bytes){send, recv};
    case PLX_COLL_ALLTOALL:
        return (struct plx_coll_bytes){send * n, recv * n};
    case PLX_COLL_REDUCE_SCATTER_BLOCK:
        return (struct plx_coll_bytes){send * n, recv};
    }
    return (struct plx_coll_bytes){0, 0};
}

static int same_list(const uint32_t *a, uint32_t na, const uint32_t *b, uint32_t nb)
{
    return na == nb && (na == 0 || memcmp(a, b, na * sizeof *a) == 0);
}

int plx_ext_comm_same_members(struct plx_comm_members a, struct plx_comm_members b)
{
    if (!a.local != !b.local)
        return 0;
    if (!a.local)
        return same_list(a.world, a.size, b.world, b.size);
    return (same_list(a.local, a.local_size, b.local, b.local_size) &&
            same_list(a.world, a.size, b.world, b.size)) ||
           (same_list(a.local, a.local_size, b.world, b.size) &&
            same_list(a.world, a.size, b.local, b.local_size));
}

void plx_ext_enc_comm_def(struct plx_rec *r, uint32_t comm, uint32_t ordinal, uint32_t size,
                          const uint32_t *world, uint32_t world_size)
{
    uint32_t i = 0;
    if (size == world_size)
        while (i < size && world[i] == i)
            i++;
    if (size == world_size && i == size)
        plx_enc_comm_def(r, comm, ordinal, 0, NULL);
    else
        plx_enc_comm_def(r, comm, ordinal, size, world);
}

void plx_messages_write(struct plx_thread *t)
{
    struct msg_thread *m = t->messages;
    if (!m)
        return;
    for (uint32_t i = 0; i < STAT_SLOTS; i++) {
        const struct stat_entry *e = &m->stats[i];
        if (!e->used)
            continue;
        struct plx_rec rec;
        plx_rec_init(&rec);
        plx_enc_message_stats(&rec, t->index, e->region, e->peer, e->dir, e->comm, e->count, e->bytes,
                              e->min, e->max);
        plx_rec_write(&rec, 0);
    }
    t->messages = NULL;
    plx_live_remove("mpi", t->index);
    plx_live_unmap(m->live);
    munmap(m, sizeof *m);
}

void plx_messages_after_fork(struct plx_thread *t)
{
    struct msg_thread *m = t->messages;
    if (!m)
        return;
    t->messages = NULL; /* the mapping is the parent's file: the child counts in its own */
    plx_live_unmap(m->live);
    munmap(m, sizeof *m);
}
