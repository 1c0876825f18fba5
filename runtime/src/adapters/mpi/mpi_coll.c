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

static int peers(MPI_Comm comm)
{
    const struct plx_comm *c = plx_mpi_comm(comm);
    return c ? (int)c->size : 0;
}

static uint64_t sum(const int *counts, int n, MPI_Datatype type)
{
    uint64_t s = 0;
    for (int i = 0; counts && i < n; i++)
        s += plx_mpi_bytes(counts[i], type);
    return s;
}

struct io {
    uint64_t sent, received;
};

static struct io bcast(int count, MPI_Datatype t, int root, MPI_Comm comm)
{
    uint64_t b = plx_mpi_bytes(count, t);
    return my_rank(comm) == root ? (struct io){b, 0} : (struct io){0, b};
}

static struct io reduce(int count, MPI_Datatype t, int root, MPI_Comm comm)
{
    uint64_t b = plx_mpi_bytes(count, t);
    return (struct io){b, root < 0 || my_rank(comm) == root ? b : 0};
}

static struct io gather(const void *sbuf, int scount, MPI_Datatype st, uint64_t rbytes, int root,
                        MPI_Comm comm)
{
    int rooted = root < 0 || my_rank(comm) == root;
    uint64_t s = sbuf == MPI_IN_PLACE ? 0 : plx_mpi_bytes(scount, st);
    return (struct io){s, rooted ? rbytes : 0};
}

static struct io scatter(uint64_t sbytes, void *rbuf, int rcount, MPI_Datatype rt, int root,
                         MPI_Comm comm)
{
    uint64_t r = rbuf == MPI_IN_PLACE ? 0 : plx_mpi_bytes(rcount, rt);
    return (struct io){my_rank(comm) == root ? sbytes : 0, r};
}

static struct io alltoallw(const int *sc, const MPI_Datatype *st, const int *rc,
                           const MPI_Datatype *rt, MPI_Comm comm)
{
    struct io x = {0, 0};
    for (int i = 0, n = peers(comm); i < n; i++) {
        x.sent += sc ? plx_mpi_bytes(sc[i], st[i]) : 0;
        x.received += rc ? plx_mpi_bytes(rc[i], rt[i]) : 0;
    }
    return x;
}

/* One blocking and one nonblocking wrapper share a byte rule; ROOT is the root or -1. */
#define COLLECTIVE(NAME, PARAMS, ARGS, ROOT, IO)                                              \
    PLX_MPI_EXPORT int NAME PARAMS                                                         \
    {                                                                                      \
        PLX_MPI_WRAP(#NAME, P##NAME ARGS, ,                                                \
                     if (rc_ == MPI_SUCCESS) {                                             \
                         struct io x_ = IO;                                                \
                         plx_mpi_collective(t, rid, comm, ROOT, x_.sent, x_.received);     \
                     });                                                                   \
    }

#define R MPI_Request *req
COLLECTIVE(MPI_Barrier, (MPI_Comm comm), (comm), -1, ((struct io){0, 0}))
COLLECTIVE(MPI_Ibarrier, (MPI_Comm comm, R), (comm, req), -1, ((struct io){0, 0}))
COLLECTIVE(MPI_Bcast, (void *b, int n, MPI_Datatype t_, int root, MPI_Comm comm), (b, n, t_, root, comm),
           root, bcast(n, t_, root, comm))
COLLECTIVE(MPI_Ibcast, (void *b, int n, MPI_Datatype t_, int root, MPI_Comm comm, R),
           (b, n, t_, root, comm, req), root, bcast(n, t_, root, comm))
COLLECTIVE(MPI_Reduce, (const void *s, void *r, int n, MPI_Datatype t_, MPI_Op op, int root, MPI_Comm comm),
           (s, r, n, t_, op, root, comm), root, reduce(n, t_, root, comm))
COLLECTIVE(MPI_Ireduce, (const void *s, void *r, int n, MPI_Datatype t_, MPI_Op op, int root, MPI_Comm comm, R),
           (s, r, n, t_, op, root, comm, req), root, reduce(n, t_, root, comm))
COLLECTIVE(MPI_Allreduce, (const void *s, void *r, int n, MPI_Datatype t_, MPI_Op op, MPI_Comm comm),
           (s, r, n, t_, op, comm), -1, reduce(n, t_, -1, comm))
COLLECTIVE(MPI_Iallreduce, (const void *s, void *r, int n, MPI_Datatype t_, MPI_Op op, MPI_Comm comm, R),
           (s, r, n, t_, op, comm, req), -1, reduce(n, t_, -1, comm))
COLLECTIVE(MPI_Scan, (const void *s, void *r, int n, MPI_Datatype t_, MPI_Op op, MPI_Comm comm),
           (s, r, n, t_, op, comm), -1, reduce(n, t_, -1, comm))
COLLECTIVE(MPI_Iscan, (const void *s, void *r, int n, MPI_Datatype t_, MPI_Op op, MPI_Comm comm, R),
           (s, r, n, t_, op, comm, req), -1, reduce(n, t_, -1, comm))
COLLECTIVE(MPI_Exscan, (const void *s, void *r, int n, MPI_Datatype t_, MPI_Op op, MPI_Comm comm),
           (s, r, n, t_, op, comm), -1, reduce(n, t_, -1, comm))
COLLECTIVE(MPI_Iexscan, (const void *s, void *r, int n, MPI_Datatype t_, MPI_Op op, MPI_Comm comm, R),
           (s, r, n, t_, op, comm, req), -1, reduce(n, t_, -1, comm))

#define GATHER_P const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt
#define GATHERV_P const void *s, int sn, MPI_Datatype st, void *r, const int *rc, const int *rd, MPI_Datatype rt
COLLECTIVE(MPI_Gather, (GATHER_P, int root, MPI_Comm comm), (s, sn, st, r, rn, rt, root, comm), root,
           gather(s, sn, st, plx_mpi_bytes(rn, rt) * (uint64_t)peers(comm), root, comm))
COLLECTIVE(MPI_Igather, (GATHER_P, int root, MPI_Comm comm, R), (s, sn, st, r, rn, rt, root, comm, req),
           root, gather(s, sn, st, plx_mpi_bytes(rn, rt) * (uint64_t)peers(comm), root, comm))
COLLECTIVE(MPI_Gatherv, (GATHERV_P, int root, MPI_Comm comm), (s, sn, st, r, rc, rd, rt, root, comm),
           root, gather(s, sn, st, sum(rc, peers(comm), rt), root, comm))
COLLECTIVE(MPI_Igatherv, (GATHERV_P, int root, MPI_Comm comm, R),
           (s, sn, st, r, rc, rd, rt, root, comm, req), root, gather(s, sn, st, sum(rc, peers(comm), rt), root, comm))
COLLECTIVE(MPI_Allgather, (GATHER_P, MPI_Comm comm), (s, sn, st, r, rn, rt, comm), -1,
           gather(s, sn, st, plx_mpi_bytes(rn, rt) * (uint64_t)peers(comm), -1, comm))
COLLECTIVE(MPI_Iallgather, (GATHER_P, MPI_Comm comm, R), (s, sn, st, r, rn, rt, comm, req), -1,
           gather(s, sn, st, plx_mpi_bytes(rn, rt) * (uint64_t)peers(comm), -1, comm))
COLLECTIVE(MPI_Allgatherv, (GATHERV_P, MPI_Comm comm), (s, sn, st, r, rc, rd, rt, comm), -1,
           gather(s, sn, st, sum(rc, peers(comm), rt), -1, comm))
COLLECTIVE(MPI_Iallgatherv, (GATHERV_P, MPI_Comm comm, R), (s, sn, st, r, rc, rd, rt, comm, req), -1,
           gather(s, sn, st, sum(rc, peers(comm), rt), -1, comm))

#define SCATTER_P const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt
#define SCATTERV_P const void *s, const int *sc, const int *sd, MPI_Datatype st, void *r, int rn, MPI_Datatype rt
COLLECTIVE(MPI_Scatter, (SCATTER_P, int root, MPI_Comm comm), (s, sn, st, r, rn, rt, root, comm), root,
           scatter(plx_mpi_bytes(sn, st) * (uint64_t)peers(comm), r, rn, rt, root, comm))
COLLECTIVE(MPI_Iscatter, (SCATTER_P, int root, MPI_Comm comm, R), (s, sn, st, r, rn, rt, root, comm, req),
           root, scatter(plx_mpi_bytes(sn, st) * (uint64_t)peers(comm), r, rn, rt, root, comm))
COLLECTIVE(MPI_Scatterv, (SCATTERV_P, int root, MPI_Comm comm), (s, sc, sd, st, r, rn, rt, root, comm),
           root, scatter(sum(sc, peers(comm), st), r, rn, rt, root, comm))
COLLECTIVE(MPI_Iscatterv, (SCATTERV_P, int root, MPI_Comm comm, R),
           (s, sc, sd, st, r, rn, rt, root, comm, req), root, scatter(sum(sc, peers(comm), st), r, rn, rt, root, comm))

#define ALLTOALL_IO(sn, st, rn, rt)                                                           \
    ((struct io){plx_mpi_bytes(sn, st) * (uint64_t)peers(comm), plx_mpi_bytes(rn, rt) * (uint64_t)peers(comm)})
#define ALLTOALLV_IO(sc, st, rc, rt) ((struct io){sum(sc, peers(comm), st), sum(rc, peers(comm), rt)})
COLLECTIVE(MPI_Alltoall, (GATHER_P, MPI_Comm comm), (s, sn, st, r, rn, rt, comm), -1, ALLTOALL_IO(sn, st, rn, rt))
COLLECTIVE(MPI_Ialltoall, (GATHER_P, MPI_Comm comm, R), (s, sn, st, r, rn, rt, comm, req), -1,
           ALLTOALL_IO(sn, st, rn, rt))
#define ALLTOALLV_P const void *s, const int *sc, const int *sd, MPI_Datatype st, void *r, const int *rc, const int *rd, MPI_Datatype rt
COLLECTIVE(MPI_Alltoallv, (ALLTOALLV_P, MPI_Comm comm), (s, sc, sd, st, r, rc, rd, rt, comm), -1,
           ALLTOALLV_IO(sc, st, rc, rt))
COLLECTIVE(MPI_Ialltoallv, (ALLTOALLV_P, MPI_Comm comm, R), (s, sc, sd, st, r, rc, rd, rt, comm, req), -1,
           ALLTOALLV_IO(sc, st, rc, rt))
#define ALLTOALLW_P const void *s, const int *sc, const int *sd, const MPI_Datatype *st, void *r, const int *rc, const int *rd, const MPI_Datatype *rt
COLLECTIVE(MPI_Alltoallw, (ALLTOALLW_P, MPI_Comm comm), (s, sc, sd, st, r, rc, rd, rt, comm), -1,
           alltoallw(sc, st, rc, rt, comm))
COLLECTIVE(MPI_Ialltoallw, (ALLTOALLW_P, MPI_Comm comm, R), (s, sc, sd, st, r, rc, rd, rt, comm, req), -1,
           alltoallw(sc, st, rc, rt, comm))

#define RS_IO(rc, t_) ((struct io){sum(rc, peers(comm), t_), plx_mpi_bytes(rc ? rc[my_rank(comm)] : 0, t_)})
#define RSB_IO(n, t_) ((struct io){plx_mpi_bytes(n, t_) * (uint64_t)peers(comm), plx_mpi_bytes(n, t_)})
COLLECTIVE(MPI_Reduce_scatter, (const void *s, void *r, const int *rc, MPI_Datatype t_, MPI_Op op, MPI_Comm comm),
           (s, r, rc, t_, op, comm), -1, RS_IO(rc, t_))
COLLECTIVE(MPI_Ireduce_scatter, (const void *s, void *r, const int *rc, MPI_Datatype t_, MPI_Op op, MPI_Comm comm, R),
           (s, r, rc, t_, op, comm, req), -1, RS_IO(rc, t_))
COLLECTIVE(MPI_Reduce_scatter_block, (const void *s, void *r, int n, MPI_Datatype t_, MPI_Op op, MPI_Comm comm),
           (s, r, n, t_, op, comm), -1, RSB_IO(n, t_))
COLLECTIVE(MPI_Ireduce_scatter_block, (const void *s, void *r, int n, MPI_Datatype t_, MPI_Op op, MPI_Comm comm, R),
           (s, r, n, t_, op, comm, req), -1, RSB_IO(n, t_))
