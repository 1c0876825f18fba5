/* Recording MPI activity on the calling thread through the runtime's message records
 * (core/messages.c: trace events and per-thread statistics), with MPI's peers translated to
 * world ranks; the scratch arrays live in the thread's ext slot, mapped on its first use. */
#include "mpi_internal.h"

#include <string.h>
#include <sys/mman.h>

struct mpi_thread {
    MPI_Request *requests; /* scratch, grown by doubling (a new mapping) when too small */
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

uint64_t plx_mpi_bytes(int n, MPI_Datatype type)
{
    int size = 0;
    if (n <= 0 || PMPI_Type_size(type, &size) != MPI_SUCCESS || size < 0)
        return 0;
    return (uint64_t)n * (uint64_t)size;
}

uint64_t plx_mpi_sent(struct plx_thread *t, uint32_t region, const struct plx_comm *c,
                      uint32_t peer, int tag, uint64_t bytes)
{
    if (peer == PLX_NO_PEER || !c)
        return PLX_EXT_NO_SEND; /* MPI_PROC_NULL */
    return plx_ext_msg_sent(t, region, c->id, peer, tag, bytes);
}

void plx_mpi_received(struct plx_thread *t, uint32_t region, const struct plx_comm *c,
                      const MPI_Status *st, uint64_t posted)
{
    if (!c || st->MPI_SOURCE == MPI_PROC_NULL || st->MPI_SOURCE < 0)
        return;
    int n = 0;
    PMPI_Get_count(st, MPI_BYTE, &n);
    uint64_t bytes = n > 0 ? (uint64_t)n : 0;
    uint32_t peer = plx_mpi_world_rank(c, st->MPI_SOURCE);
    if (posted)
        plx_ext_msg_recv_posted(t, posted);
    plx_ext_msg_received(t, region, c->id, peer, st->MPI_TAG, bytes);
}

uint64_t plx_mpi_collective(struct plx_thread *t, uint32_t region, MPI_Comm comm, int root,
                            uint64_t sent, uint64_t received)
{
    const struct plx_comm *c = plx_mpi_comm(comm);
    if (!c)
        return PLX_EXT_NO_SEND;
    uint32_t wroot = root >= 0 ? plx_mpi_world_rank(c, root) : PLX_NO_PEER;
    return plx_ext_msg_collective(t, region, c->id, wroot, sent, received);
}

void plx_mpi_coll_posted(MPI_Request *r, struct plx_thread *t, uint32_t region, uint64_t n)
{
    if (n == PLX_EXT_NO_SEND || *r == MPI_REQUEST_NULL)
        return;
    /* its completion names the post alone: no communicator looked up again */
    plx_mpi_req_add(*r, PLX_REQ_COLL, 0, region, PLX_NO_PEER, PLX_NO_PEER, 0, 0, 0);
    plx_mpi_req_sent(*r, t, 0, n);
}

/* An MPI_Isendrecv's receive: source and tag as posted (the status's for a wildcard), the bytes
 * of the status where it names them and fits the buffer, else the buffer's (MPICH 4.0 leaves
 * the status unset or empty now and then). */
static void sendrecv_received(struct plx_thread *t, const struct plx_req *e, const MPI_Status *st)
{
    const struct plx_comm *c = plx_mpi_comm_by_id(e->comm);
    if (!c)
        return;
    uint32_t from = st->MPI_SOURCE >= 0 ? plx_mpi_world_rank(c, st->MPI_SOURCE) : PLX_NO_PEER;
    uint32_t peer = e->peer != PLX_NO_PEER ? e->peer : from;
    int tag = e->tag != MPI_ANY_TAG ? e->tag : st->MPI_TAG;
    if (peer == PLX_NO_PEER)
        return;
    int n = 0;
    uint64_t bytes = e->bytes;
    if (from == peer && st->MPI_TAG == tag && PMPI_Get_count(st, MPI_BYTE, &n) == MPI_SUCCESS &&
        n > 0 && (uint64_t)n <= e->bytes)
        bytes = (uint64_t)n;
    if (e->posted)
        plx_ext_msg_recv_posted(t, e->posted);
    plx_ext_msg_received(t, e->region, c->id, peer, tag, bytes);
}

/* A request finished (Wait/Test family): a receive is recorded now, with its real source; an
 * MPI_Isendrecv's request is both its send's completion and its receive; a nonblocking
 * collective's completion names its post. */
void plx_mpi_completed(struct plx_thread *t, MPI_Request saved, const MPI_Status *st)
{
    struct plx_req *e = plx_mpi_req_find(saved);
    if (!e)
        return;
    int send = e->kind == PLX_REQ_SEND || e->kind == PLX_REQ_SENDRECV;
    if (send && e->send != PLX_EXT_NO_SEND)
        plx_ext_msg_send_done(t, e->thread, e->mode, e->send);
    if (e->kind == PLX_REQ_COLL && e->send != PLX_EXT_NO_SEND)
        plx_ext_msg_coll_done(t, e->thread, e->send);
    if (e->kind == PLX_REQ_SENDRECV && st) {
        int cancelled = 0;
        PMPI_Test_cancelled(st, &cancelled);
        if (!cancelled)
            sendrecv_received(t, e, st);
    }
    if (e->kind == PLX_REQ_RECV && st) {
        int cancelled = 0;
        PMPI_Test_cancelled(st, &cancelled);
        if (!cancelled)
            plx_mpi_received(t, e->region, plx_mpi_comm_by_id(e->comm), st, e->posted);
    }
    if (!e->persistent)
        plx_mpi_req_remove(e);
}

void plx_mpi_thread_end(struct plx_thread *t)
{
    struct mpi_thread *m = t->ext[0];
    if (!m)
        return;
    t->ext[0] = NULL;
    if (m->requests)
        munmap(m->requests, sizeof(MPI_Request) * (size_t)m->nrequests);
    if (m->statuses)
        munmap(m->statuses, sizeof(MPI_Status) * (size_t)m->nstatuses);
    munmap(m, sizeof *m);
}
