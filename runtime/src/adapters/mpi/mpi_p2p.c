/* Point-to-point wrappers: sends recorded when the message leaves (blocking call, post of a
 * nonblocking one, start of a persistent one), receives when they complete with the status's
 * real source and tag. */
#include "mpi_internal.h"

#define SEND_EVENT(dest, tag, count, type)                                                    \
    const struct plx_comm *c = plx_mpi_comm(comm);                                         \
    plx_mpi_sent(t, rid, c, plx_mpi_world_rank(c, dest), tag, plx_mpi_bytes(count, type))

#define BLOCKING_SEND(NAME)                                                                   \
    PLX_MPI_EXPORT int NAME(const void *buf, int count, MPI_Datatype type, int dest, int tag,  \
                            MPI_Comm comm)                                                 \
    {                                                                                      \
        PLX_MPI_WRAP(#NAME, P##NAME(buf, count, type, dest, tag, comm),                    \
                     SEND_EVENT(dest, tag, count, type), );                                 \
    }

/* MODE: 0 standard, 1 synchronous, 2 buffered, 3 ready (the send_done event's). */
#define NONBLOCKING_SEND(NAME, PERSISTENT, MODE)                                              \
    PLX_MPI_EXPORT int NAME(const void *buf, int count, MPI_Datatype type, int dest, int tag,  \
                            MPI_Comm comm, MPI_Request *req)                               \
    {                                                                                      \
        PLX_MPI_WRAP(                                                                      \
            #NAME, P##NAME(buf, count, type, dest, tag, comm, req),                        \
            const struct plx_comm *c = plx_mpi_comm(comm);                                 \
            uint32_t peer = plx_mpi_world_rank(c, dest);                                   \
            uint64_t bytes = plx_mpi_bytes(count, type);                                   \
            uint64_t sent_ = PERSISTENT ? PLX_EXT_NO_SEND                                  \
                                        : plx_mpi_sent(t, rid, c, peer, tag, bytes),       \
            if (rc_ == MPI_SUCCESS && c) {                                                 \
                plx_mpi_req_add(*req, PLX_REQ_SEND, PERSISTENT, rid, c->id, peer, tag, bytes, 0); \
                plx_mpi_req_sent(*req, t, MODE, sent_);                                    \
            });                                                                            \
    }

BLOCKING_SEND(MPI_Send)
BLOCKING_SEND(MPI_Ssend)
BLOCKING_SEND(MPI_Bsend)
BLOCKING_SEND(MPI_Rsend)
NONBLOCKING_SEND(MPI_Isend, 0, 0)
NONBLOCKING_SEND(MPI_Issend, 0, 1)
NONBLOCKING_SEND(MPI_Ibsend, 0, 2)
NONBLOCKING_SEND(MPI_Irsend, 0, 3)
NONBLOCKING_SEND(MPI_Send_init, 1, 0)
NONBLOCKING_SEND(MPI_Ssend_init, 1, 1)
NONBLOCKING_SEND(MPI_Bsend_init, 1, 2)
NONBLOCKING_SEND(MPI_Rsend_init, 1, 3)

/* The status to hand to PMPI: the caller's, or ours when it passed MPI_STATUS_IGNORE. */
#define STATUS(st) MPI_Status own_status_, *st_ = (st) == MPI_STATUS_IGNORE ? &own_status_ : (st)

PLX_MPI_EXPORT int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag,
                            MPI_Comm comm, MPI_Status *status)
{
    STATUS(status);
    PLX_MPI_WRAP("MPI_Recv", PMPI_Recv(buf, count, type, source, tag, comm, st_), ,
                 if (rc_ == MPI_SUCCESS) plx_mpi_received(t, rid, plx_mpi_comm(comm), st_, 0));
}

/* An Irecv is posted at its entry (the thread's latest event); a persistent receive at each
 * MPI_Start. One from MPI_PROC_NULL receives nothing and is not followed (MPICH completes it
 * with source 0 in its status). */
static void post_recv(struct plx_thread *t, uint32_t rid, MPI_Comm comm, int source,
                      MPI_Request req, int persistent)
{
    const struct plx_comm *c = source == MPI_PROC_NULL ? NULL : plx_mpi_comm(comm);
    if (c)
        plx_mpi_req_add(req, PLX_REQ_RECV, persistent, rid, c->id, PLX_NO_PEER, 0, 0,
                        persistent ? 0 : plx_ext_last_ticks(t));
}

PLX_MPI_EXPORT int MPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag,
                             MPI_Comm comm, MPI_Request *req)
{
    PLX_MPI_WRAP("MPI_Irecv", PMPI_Irecv(buf, count, type, source, tag, comm, req), ,
                 if (rc_ == MPI_SUCCESS) post_recv(t, rid, comm, source, *req, 0));
}

PLX_MPI_EXPORT int MPI_Recv_init(void *buf, int count, MPI_Datatype type, int source, int tag,
                                 MPI_Comm comm, MPI_Request *req)
{
    PLX_MPI_WRAP("MPI_Recv_init", PMPI_Recv_init(buf, count, type, source, tag, comm, req), ,
                 if (rc_ == MPI_SUCCESS) post_recv(t, rid, comm, source, *req, 1));
}

PLX_MPI_EXPORT int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest,
                                int stag, void *rbuf, int rcount, MPI_Datatype rtype, int source,
                                int rtag, MPI_Comm comm, MPI_Status *status)
{
    STATUS(status);
    PLX_MPI_WRAP("MPI_Sendrecv",
                 PMPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag,
                               comm, st_),
                 SEND_EVENT(dest, stag, scount, stype),
                 if (rc_ == MPI_SUCCESS) plx_mpi_received(t, rid, c, st_, 0));
}

PLX_MPI_EXPORT int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype type, int dest,
                                        int stag, int source, int rtag, MPI_Comm comm,
                                        MPI_Status *status)
{
    STATUS(status);
    PLX_MPI_WRAP("MPI_Sendrecv_replace",
                 PMPI_Sendrecv_replace(buf, count, type, dest, stag, source, rtag, comm, st_),
                 SEND_EVENT(dest, stag, count, type),
                 if (rc_ == MPI_SUCCESS) plx_mpi_received(t, rid, c, st_, 0));
}

#if MPI_VERSION >= 4
/* MPI 4.0's nonblocking send-receive (MPICH; not in Open MPI 4.1): the send leaves at the post
 * (recorded before PMPI's call, as MPI_Isend's), the receive is posted at the routine's entry and
 * recorded by the Wait/Test that completes the one request, with the send's completion. Its
 * entry keeps the receive's side (source as a world rank, tag, the buffer's bytes): MPICH 4.0
 * does not set the request's status reliably (plx_mpi_completed). */
#define ISENDRECV(NAME, CALL, dest, stag, count, type, source, rtag, rcount, rtype)           \
    PLX_MPI_WRAP(                                                                          \
        NAME, CALL, const struct plx_comm *c = plx_mpi_comm(comm);                         \
        uint64_t posted_ = plx_ext_last_ticks(t);                                          \
        uint64_t sent_ = plx_mpi_sent(t, rid, c, plx_mpi_world_rank(c, dest), stag,        \
                                      plx_mpi_bytes(count, type)),                         \
        if (rc_ == MPI_SUCCESS && c) {                                                     \
            plx_mpi_req_add(*req, source == MPI_PROC_NULL ? PLX_REQ_SEND : PLX_REQ_SENDRECV, 0, \
                            rid, c->id, plx_mpi_world_rank(c, source), rtag,               \
                            plx_mpi_bytes(rcount, rtype), posted_);                        \
            plx_mpi_req_sent(*req, t, 0, sent_);                                           \
        })

PLX_MPI_EXPORT int MPI_Isendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest,
                                 int stag, void *rbuf, int rcount, MPI_Datatype rtype, int source,
                                 int rtag, MPI_Comm comm, MPI_Request *req)
{
    ISENDRECV("MPI_Isendrecv",
              PMPI_Isendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag,
                             comm, req),
              dest, stag, scount, stype, source, rtag, rcount, rtype);
}

PLX_MPI_EXPORT int MPI_Isendrecv_replace(void *buf, int count, MPI_Datatype type, int dest,
                                         int stag, int source, int rtag, MPI_Comm comm,
                                         MPI_Request *req)
{
    ISENDRECV("MPI_Isendrecv_replace",
              PMPI_Isendrecv_replace(buf, count, type, dest, stag, source, rtag, comm, req), dest,
              stag, count, type, source, rtag, count, type);
}
#endif

/* Matched probes: the message keeps its communicator until MPI_Mrecv or MPI_Imrecv receives it
 * (the receive is recorded as MPI_Recv's and MPI_Irecv's are; MPI_MESSAGE_NO_PROC's status
 * names MPI_PROC_NULL, no message). */
static void matched(MPI_Comm comm, int rc, const MPI_Message *m)
{
    const struct plx_comm *c = rc == MPI_SUCCESS ? plx_mpi_comm(comm) : NULL;
    if (c && *m != MPI_MESSAGE_NULL && *m != MPI_MESSAGE_NO_PROC)
        plx_mpi_msg_add(*m, c->id);
}

PLX_MPI_EXPORT int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *m,
                              MPI_Status *status)
{
    PLX_MPI_WRAP("MPI_Mprobe", PMPI_Mprobe(source, tag, comm, m, status), , matched(comm, rc_, m));
}

PLX_MPI_EXPORT int MPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *m,
                               MPI_Status *status)
{
    PLX_MPI_WRAP("MPI_Improbe", PMPI_Improbe(source, tag, comm, flag, m, status), ,
                 if (rc_ == MPI_SUCCESS && *flag) matched(comm, rc_, m));
}

PLX_MPI_EXPORT int MPI_Mrecv(void *buf, int count, MPI_Datatype type, MPI_Message *m,
                             MPI_Status *status)
{
    STATUS(status);
    MPI_Message saved = *m;
    PLX_MPI_WRAP("MPI_Mrecv", PMPI_Mrecv(buf, count, type, m, st_), ,
                 uint32_t id = saved == MPI_MESSAGE_NO_PROC ? PLX_NO_PEER : plx_mpi_msg_take(saved);
                 if (rc_ == MPI_SUCCESS && id != PLX_NO_PEER)
                     plx_mpi_received(t, rid, plx_mpi_comm_by_id(id), st_, 0));
}

PLX_MPI_EXPORT int MPI_Imrecv(void *buf, int count, MPI_Datatype type, MPI_Message *m,
                              MPI_Request *req)
{
    MPI_Message saved = *m;
    PLX_MPI_WRAP("MPI_Imrecv", PMPI_Imrecv(buf, count, type, m, req), ,
                 uint32_t id = saved == MPI_MESSAGE_NO_PROC ? PLX_NO_PEER : plx_mpi_msg_take(saved);
                 if (rc_ == MPI_SUCCESS && id != PLX_NO_PEER)
                     plx_mpi_req_add(*req, PLX_REQ_RECV, 0, rid, id, PLX_NO_PEER, 0, 0,
                                     plx_ext_last_ticks(t)));
}

/* A persistent send leaves when started; a persistent receive is posted then (the start's
 * entry, the thread's latest event). */
static void started(struct plx_thread *t, MPI_Request req)
{
    struct plx_req *e = plx_mpi_req_find(req);
    if (e && e->kind == PLX_REQ_RECV)
        e->posted = plx_ext_last_ticks(t);
    if (e && e->kind == PLX_REQ_SEND)
        plx_mpi_req_sent(req, t, e->mode,
                         plx_mpi_sent(t, e->region, plx_mpi_comm_by_id(e->comm), e->peer, e->tag,
                                      e->bytes));
}

PLX_MPI_EXPORT int MPI_Start(MPI_Request *req)
{
    PLX_MPI_WRAP("MPI_Start", PMPI_Start(req), started(t, *req), );
}

PLX_MPI_EXPORT int MPI_Startall(int n, MPI_Request reqs[])
{
    PLX_MPI_WRAP("MPI_Startall", PMPI_Startall(n, reqs), for (int i = 0; i < n; i++)
                     started(t, reqs[i]), );
}

PLX_MPI_EXPORT int MPI_Request_free(MPI_Request *req)
{
    PLX_MPI_WRAP("MPI_Request_free", PMPI_Request_free(req), struct plx_req *e = plx_mpi_req_find(*req);
                 if (e) plx_mpi_req_remove(e), );
}

PLX_MPI_EXPORT int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    PLX_MPI_WRAP("MPI_Probe", PMPI_Probe(source, tag, comm, status), , );
}

PLX_MPI_EXPORT int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    PLX_MPI_WRAP("MPI_Iprobe", PMPI_Iprobe(source, tag, comm, flag, status), , );
}
