/* Collectives, blocking and nonblocking: this rank's bytes sent and received, recorded at the
 * exit of a blocking call and at the post of a nonblocking one. Byte counts follow the buffers
 * the rank passes (root-only arguments only at the root; MPI_IN_PLACE counts what stays). */
#include "mpi_internal.h"

static int my_rank(MPI_Comm comm)
{
    int r = -1;
    PMPI_Comm_rank(comm, &r);
    return r;
}

static uint32_t peers(MPI_Comm comm)
{
    const struct plx_comm *c = plx_mpi_comm(comm);
    return c ? c->size : 0;
}

static uint64_t sum(const int *counts, uint32_t n, MPI_Datatype type)
{
    uint64_t s = 0;
    for (uint32_t i = 0; counts && i < n; i++)
        s += plx_mpi_bytes(counts[i], type);
    return s;
}

static uint64_t sumw(const int *counts, const MPI_Datatype *types, uint32_t n)
{
    uint64_t s = 0;
    for (uint32_t i = 0; counts && types && i < n; i++)
        s += plx_mpi_bytes(counts[i], types[i]);
    return s;
}

/* The rank's bytes by the one rule of core (plx_ext_coll_bytes); ROOT is the root or -1. */
static struct plx_coll_bytes io(enum plx_coll kind, int root, MPI_Comm comm, uint64_t send,
                                uint64_t recv)
{
    return plx_ext_coll_bytes(kind, root >= 0 && my_rank(comm) == root, peers(comm), send, recv);
}

static uint64_t unless_in_place(const void *buf, uint64_t bytes)
{
    return buf == MPI_IN_PLACE ? 0 : bytes;
}

/* One blocking and one nonblocking wrapper share a byte rule; ROOT is the root or -1. A
 * nonblocking one's request (REQ; NULL for a blocking one) is followed to the Wait/Test call
 * that completes it, which records the collective's completion (mpi_record.c). */
#define COLLECTIVE_OF(NAME, PARAMS, ARGS, ROOT, KIND, SEND, RECV, REQ)                         \
    PLX_MPI_EXPORT int NAME PARAMS                                                         \
    {                                                                                      \
        PLX_MPI_WRAP(#NAME, P##NAME ARGS, ,                                                \
                     if (rc_ == MPI_SUCCESS) {                                             \
                         struct plx_coll_bytes x_ = io(KIND, ROOT, comm, SEND, RECV);      \
                         uint64_t n_ = plx_mpi_collective(t, rid, comm, ROOT, x_.sent,     \
                                                          x_.received);                    \
                         if (REQ)                                                          \
                             plx_mpi_coll_posted(REQ, t, rid, n_);                         \
                     });                                                                   \
    }
#define COLLECTIVE(NAME, PARAMS, ARGS, ROOT, KIND, SEND, RECV)                                \
    COLLECTIVE_OF(NAME, PARAMS, ARGS, ROOT, KIND, SEND, RECV, (MPI_Request *)NULL)
#define ICOLLECTIVE(NAME, PARAMS, ARGS, ROOT, KIND, SEND, RECV)                               \
    COLLECTIVE_OF(NAME, PARAMS, ARGS, ROOT, KIND, SEND, RECV, req)

#define R MPI_Request *req
#define B(n, t_) plx_mpi_bytes(n, t_)
COLLECTIVE(MPI_Barrier, (MPI_Comm comm), (comm), -1, PLX_COLL_BARRIER, 0, 0)
ICOLLECTIVE(MPI_Ibarrier, (MPI_Comm comm, R), (comm, req), -1, PLX_COLL_BARRIER, 0, 0)
COLLECTIVE(MPI_Bcast, (void *b, int n, MPI_Datatype t_, int root, MPI_Comm comm), (b, n, t_, root, comm),
           root, PLX_COLL_BCAST, B(n, t_), 0)
ICOLLECTIVE(MPI_Ibcast, (void *b, int n, MPI_Datatype t_, int root, MPI_Comm comm, R),
           (b, n, t_, root, comm, req), root, PLX_COLL_BCAST, B(n, t_), 0)
COLLECTIVE(MPI_Reduce, (const void *s, void *r, int n, MPI_Datatype t_, MPI_Op op, int root, MPI_Comm comm),
           (s, r, n, t_, op, root, comm), root, PLX_COLL_REDUCE, B(n, t_), 0)
ICOLLECTIVE(MPI_Ireduce, (const void *s, void *r, int n, MPI_Datatype t_, MPI_Op op, int root, MPI_Comm comm, R),
           (s, r, n, t_, op, root, comm, req), root, PLX_COLL_REDUCE, B(n, t_), 0)
COLLECTIVE(MPI_Allreduce, (const void *s, void *r, int n, MPI_Datatype t_, MPI_Op op, MPI_Comm comm),
           (s, r, n, t_, op, comm), -1, PLX_COLL_ALLREDUCE, B(n, t_), 0)
ICOLLECTIVE(MPI_Iallreduce, (const void *s, void *r, int n, MPI_Datatype t_, MPI_Op op, MPI_Comm comm, R),
           (s, r, n, t_, op, comm, req), -1, PLX_COLL_ALLREDUCE, B(n, t_), 0)
COLLECTIVE(MPI_Scan, (const void *s, void *r, int n, MPI_Datatype t_, MPI_Op op, MPI_Comm comm),
           (s, r, n, t_, op, comm), -1, PLX_COLL_ALLREDUCE, B(n, t_), 0)
ICOLLECTIVE(MPI_Iscan, (const void *s, void *r, int n, MPI_Datatype t_, MPI_Op op, MPI_Comm comm, R),
           (s, r, n, t_, op, comm, req), -1, PLX_COLL_ALLREDUCE, B(n, t_), 0)
COLLECTIVE(MPI_Exscan, (const void *s, void *r, int n, MPI_Datatype t_, MPI_Op op, MPI_Comm comm),
           (s, r, n, t_, op, comm), -1, PLX_COLL_ALLREDUCE, B(n, t_), 0)
ICOLLECTIVE(MPI_Iexscan, (const void *s, void *r, int n, MPI_Datatype t_, MPI_Op op, MPI_Comm comm, R),
           (s, r, n, t_, op, comm, req), -1, PLX_COLL_ALLREDUCE, B(n, t_), 0)

#define GATHER_P const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt
#define GATHERV_P const void *s, int sn, MPI_Datatype st, void *r, const int *rc, const int *rd, MPI_Datatype rt
#define SEND_PART unless_in_place(s, B(sn, st))
COLLECTIVE(MPI_Gather, (GATHER_P, int root, MPI_Comm comm), (s, sn, st, r, rn, rt, root, comm), root,
           PLX_COLL_GATHER, SEND_PART, B(rn, rt))
ICOLLECTIVE(MPI_Igather, (GATHER_P, int root, MPI_Comm comm, R), (s, sn, st, r, rn, rt, root, comm, req),
           root, PLX_COLL_GATHER, SEND_PART, B(rn, rt))
COLLECTIVE(MPI_Gatherv, (GATHERV_P, int root, MPI_Comm comm), (s, sn, st, r, rc, rd, rt, root, comm),
           root, PLX_COLL_GATHERV, SEND_PART, sum(rc, peers(comm), rt))
ICOLLECTIVE(MPI_Igatherv, (GATHERV_P, int root, MPI_Comm comm, R),
           (s, sn, st, r, rc, rd, rt, root, comm, req), root, PLX_COLL_GATHERV, SEND_PART,
           sum(rc, peers(comm), rt))
COLLECTIVE(MPI_Allgather, (GATHER_P, MPI_Comm comm), (s, sn, st, r, rn, rt, comm), -1,
           PLX_COLL_ALLGATHER, SEND_PART, B(rn, rt))
ICOLLECTIVE(MPI_Iallgather, (GATHER_P, MPI_Comm comm, R), (s, sn, st, r, rn, rt, comm, req), -1,
           PLX_COLL_ALLGATHER, SEND_PART, B(rn, rt))
COLLECTIVE(MPI_Allgatherv, (GATHERV_P, MPI_Comm comm), (s, sn, st, r, rc, rd, rt, comm), -1,
           PLX_COLL_ALLGATHERV, SEND_PART, sum(rc, peers(comm), rt))
ICOLLECTIVE(MPI_Iallgatherv, (GATHERV_P, MPI_Comm comm, R), (s, sn, st, r, rc, rd, rt, comm, req), -1,
           PLX_COLL_ALLGATHERV, SEND_PART, sum(rc, peers(comm), rt))

#define SCATTER_P const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt
#define SCATTERV_P const void *s, const int *sc, const int *sd, MPI_Datatype st, void *r, int rn, MPI_Datatype rt
#define RECV_PART unless_in_place(r, B(rn, rt))
COLLECTIVE(MPI_Scatter, (SCATTER_P, int root, MPI_Comm comm), (s, sn, st, r, rn, rt, root, comm), root,
           PLX_COLL_SCATTER, B(sn, st), RECV_PART)
ICOLLECTIVE(MPI_Iscatter, (SCATTER_P, int root, MPI_Comm comm, R), (s, sn, st, r, rn, rt, root, comm, req),
           root, PLX_COLL_SCATTER, B(sn, st), RECV_PART)
COLLECTIVE(MPI_Scatterv, (SCATTERV_P, int root, MPI_Comm comm), (s, sc, sd, st, r, rn, rt, root, comm),
           root, PLX_COLL_SCATTERV, sum(sc, peers(comm), st), RECV_PART)
ICOLLECTIVE(MPI_Iscatterv, (SCATTERV_P, int root, MPI_Comm comm, R),
           (s, sc, sd, st, r, rn, rt, root, comm, req), root, PLX_COLL_SCATTERV,
           sum(sc, peers(comm), st), RECV_PART)

COLLECTIVE(MPI_Alltoall, (GATHER_P, MPI_Comm comm), (s, sn, st, r, rn, rt, comm), -1, PLX_COLL_ALLTOALL,
           B(sn, st), B(rn, rt))
ICOLLECTIVE(MPI_Ialltoall, (GATHER_P, MPI_Comm comm, R), (s, sn, st, r, rn, rt, comm, req), -1,
           PLX_COLL_ALLTOALL, B(sn, st), B(rn, rt))
#define ALLTOALLV_P const void *s, const int *sc, const int *sd, MPI_Datatype st, void *r, const int *rc, const int *rd, MPI_Datatype rt
COLLECTIVE(MPI_Alltoallv, (ALLTOALLV_P, MPI_Comm comm), (s, sc, sd, st, r, rc, rd, rt, comm), -1,
           PLX_COLL_ALLTOALLV, sum(sc, peers(comm), st), sum(rc, peers(comm), rt))
ICOLLECTIVE(MPI_Ialltoallv, (ALLTOALLV_P, MPI_Comm comm, R), (s, sc, sd, st, r, rc, rd, rt, comm, req), -1,
           PLX_COLL_ALLTOALLV, sum(sc, peers(comm), st), sum(rc, peers(comm), rt))
#define ALLTOALLW_P const void *s, const int *sc, const int *sd, const MPI_Datatype *st, void *r, const int *rc, const int *rd, const MPI_Datatype *rt
COLLECTIVE(MPI_Alltoallw, (ALLTOALLW_P, MPI_Comm comm), (s, sc, sd, st, r, rc, rd, rt, comm), -1,
           PLX_COLL_ALLTOALLV, sumw(sc, st, peers(comm)), sumw(rc, rt, peers(comm)))
ICOLLECTIVE(MPI_Ialltoallw, (ALLTOALLW_P, MPI_Comm comm, R), (s, sc, sd, st, r, rc, rd, rt, comm, req), -1,
           PLX_COLL_ALLTOALLV, sumw(sc, st, peers(comm)), sumw(rc, rt, peers(comm)))

#define OWN_COUNT(rc) ((rc) ? (rc)[my_rank(comm)] : 0)
COLLECTIVE(MPI_Reduce_scatter, (const void *s, void *r, const int *rc, MPI_Datatype t_, MPI_Op op, MPI_Comm comm),
           (s, r, rc, t_, op, comm), -1, PLX_COLL_REDUCE_SCATTER, sum(rc, peers(comm), t_),
           B(OWN_COUNT(rc), t_))
ICOLLECTIVE(MPI_Ireduce_scatter, (const void *s, void *r, const int *rc, MPI_Datatype t_, MPI_Op op, MPI_Comm comm, R),
           (s, r, rc, t_, op, comm, req), -1, PLX_COLL_REDUCE_SCATTER, sum(rc, peers(comm), t_),
           B(OWN_COUNT(rc), t_))
COLLECTIVE(MPI_Reduce_scatter_block, (const void *s, void *r, int n, MPI_Datatype t_, MPI_Op op, MPI_Comm comm),
           (s, r, n, t_, op, comm), -1, PLX_COLL_REDUCE_SCATTER_BLOCK, B(n, t_), B(n, t_))
ICOLLECTIVE(MPI_Ireduce_scatter_block, (const void *s, void *r, int n, MPI_Datatype t_, MPI_Op op, MPI_Comm comm, R),
           (s, r, n, t_, op, comm, req), -1, PLX_COLL_REDUCE_SCATTER_BLOCK, B(n, t_), B(n, t_))
