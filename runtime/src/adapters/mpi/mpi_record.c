/* Recording MPI activity on the calling thread: trace events (send, receive, collective) and
 * per-thread message statistics by (routine, peer, communicator, direction). The statistics
 * table and scratch arrays live in the thread's ext slot, mapped on its first MPI call. */
#include "mpi_internal.h"

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

struct mpi_thread {
    struct stat_entry *stats;  /* STAT_SLOTS entries in the thread's "mpi" live file */
    struct plx_live_header *live;
    uint64_t lost;           /* statistics that found the table full */
    MPI_Request *requests;   /* scratch, grown by doubling (a new mapping) when too small */
    MPI_Status *statuses;
    int nrequests, nstatuses;
};

static struct mpi_thread *mine(struct plx_thread *t)
{
    if (!t->ext[0]) {
        struct mpi_thread *m = mmap(NULL, sizeof(struct mpi_thread), PROT_READ | PROT_WRITE,
                                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
            return NULL;
        m->stats = plx_ext_live_map("mpi", t, sizeof(struct stat_entry), STAT_SLOTS, &m->live);
        if (!m->stats) {
            munmap(m, sizeof *m);
            return NULL;
        }
        m->live->count = STAT_SLOTS; /* a hash table: readers take the entries marked used */
        t->ext[0] = m;
    }
    return t->ext[0];
}

static void *grow(void *old, size_t old_bytes, size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    if (old)
        munmap(old, old_bytes);
    return p;
}

MPI_Request *plx_mpi_scratch_requests(struct plx_thread *t, int n)
{
    struct mpi_thread *m = mine(t);
    if (!m || n < 0)
        return NULL;
    if (n > m->nrequests) {
        int cap = m->nrequests ? m->nrequests : 256;
        while (cap < n)
            cap *= 2;
        m->requests = grow(m->requests, sizeof(MPI_Request) * (size_t)m->nrequests,
                           sizeof(MPI_Request) * (size_t)cap);
        m->nrequests = m->requests ? cap : 0;
    }
    return m->requests;
}

MPI_Status *plx_mpi_scratch_statuses(struct plx_thread *t, int n)
{
    struct mpi_thread *m = mine(t);
    if (!m || n < 0)
        return NULL;
    if (n > m->nstatuses) {
        int cap = m->nstatuses ? m->nstatuses : 256;
        while (cap < n)
            cap *= 2;
        m->statuses = grow(m->statuses, sizeof(MPI_Status) * (size_t)m->nstatuses,
                           sizeof(MPI_Status) * (size_t)cap);
        m->nstatuses = m->statuses ? cap : 0;
    }
    return m->statuses;
}

static void count(struct plx_thread *t, uint32_t region, uint32_t peer, uint32_t comm, int dir,
                  uint64_t bytes)
{
    struct mpi_thread *m = mine(t);
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

uint64_t plx_mpi_bytes(int n, MPI_Datatype type)
{
    int size = 0;
    if (n <= 0 || PMPI_Type_size(type, &size) != MPI_SUCCESS || size < 0)
        return 0;
    return (uint64_t)n * (uint64_t)size;
}

void plx_mpi_sent(struct plx_thread *t, uint32_t region, const struct plx_comm *c, uint32_t peer,
                  int tag, uint64_t bytes)
{
    if (peer == PLX_NO_PEER || !c)
        return; /* MPI_PROC_NULL */
    uint64_t w[PLX_EXT_SEND_WORDS];
    plx_ext_pack_send(w, peer, tag, bytes, c->id);
    plx_ext_event(t, PLX_EXT_SEND, w, PLX_EXT_SEND_WORDS);
    count(t, region, peer, c->id, PLX_DIR_SENT, bytes);
}

void plx_mpi_received(struct plx_thread *t, uint32_t region, const struct plx_comm *c,
                      const MPI_Status *st)
{
    if (!c || st->MPI_SOURCE == MPI_PROC_NULL || st->MPI_SOURCE < 0)
        return;
    int n = 0;
    PMPI_Get_count(st, MPI_BYTE, &n);
    uint64_t bytes = n > 0 ? (uint64_t)n : 0;
    uint32_t peer = plx_mpi_world_rank(c, st->MPI_SOURCE);
    uint64_t w[PLX_EXT_RECV_WORDS];
    plx_ext_pack_recv(w, peer, st->MPI_TAG, bytes, c->id);
    plx_ext_event(t, PLX_EXT_RECV, w, PLX_EXT_RECV_WORDS);
    count(t, region, peer, c->id, PLX_DIR_RECEIVED, bytes);
}

void plx_mpi_collective(struct plx_thread *t, uint32_t region, MPI_Comm comm, int root,
                        uint64_t sent, uint64_t received)
{
    const struct plx_comm *c = plx_mpi_comm(comm);
    if (!c)
        return;
    uint32_t wroot = root >= 0 ? plx_mpi_world_rank(c, root) : PLX_NO_PEER;
    uint64_t w[PLX_EXT_COLLECTIVE_WORDS];
    plx_ext_pack_collective(w, c->id, wroot, sent, received);
    plx_ext_event(t, PLX_EXT_COLLECTIVE, w, PLX_EXT_COLLECTIVE_WORDS);
    count(t, region, PLX_NO_PEER, c->id, PLX_DIR_SENT, sent);
    count(t, region, PLX_NO_PEER, c->id, PLX_DIR_RECEIVED, received);
}

/* A request finished (Wait/Test family): a receive is recorded now, with its real source. */
void plx_mpi_completed(struct plx_thread *t, MPI_Request saved, const MPI_Status *st)
{
    struct plx_req *e = plx_mpi_req_find(saved);
    if (!e)
        return;
    if (e->kind == PLX_REQ_RECV && st) {
        int cancelled = 0;
        PMPI_Test_cancelled(st, &cancelled);
        if (!cancelled)
            plx_mpi_received(t, e->region, plx_mpi_comm_by_id(e->comm), st);
    }
    if (!e->persistent)
        plx_mpi_req_remove(e);
}

void plx_mpi_stats_write(struct plx_thread *t)
{
    struct mpi_thread *m = t->ext[0];
    if (!m)
        return;
    for (uint32_t i = 0; i < STAT_SLOTS; i++) {
        const struct stat_entry *e = &m->stats[i];
        if (!e->used)
            continue;
        struct plx_rec rec;
        plx_ext_rec_init(&rec);
        plx_enc_message_stats(&rec, t->index, e->region, e->peer, e->dir, e->comm, e->count, e->bytes,
                              e->min, e->max);
        plx_ext_rec_write(&rec);
    }
    t->ext[0] = NULL;
    plx_ext_live_remove("mpi", t, m->live);
    if (m->requests)
        munmap(m->requests, sizeof(MPI_Request) * (size_t)m->nrequests);
    if (m->statuses)
        munmap(m->statuses, sizeof(MPI_Status) * (size_t)m->nstatuses);
    munmap(m, sizeof *m);
}
