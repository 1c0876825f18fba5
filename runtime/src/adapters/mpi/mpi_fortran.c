/* Fortran bindings (mpif.h and `use mpi`, gfortran's name_ symbols) of the common routines:
 * Open MPI's own Fortran layer calls PMPI_ directly, so these stand in front of it, convert the
 * handles and call the measured C wrappers. `use mpi_f08` (the _f08 symbols) is not measured.
 * Open MPI only: Fortran's MPI_STATUS_IGNORE, MPI_BOTTOM and MPI_IN_PLACE are its sentinels. */
#include "mpi_internal.h"

#ifdef OPEN_MPI
#include <alloca.h>

#define F_STATUS_SIZE 6 /* MPI_STATUS_SIZE of Open MPI's mpif-config.h */
#define FX PLX_MPI_EXPORT void

extern MPI_Fint mpi_fortran_status_ignore_[], mpi_fortran_statuses_ignore_[];
extern MPI_Fint mpi_fortran_bottom_[], mpi_fortran_in_place_[];

static void *buf_c(void *b)
{
    if (b == (void *)mpi_fortran_bottom_)
        return MPI_BOTTOM;
    if (b == (void *)mpi_fortran_in_place_)
        return MPI_IN_PLACE;
    return b;
}

static void status_f(const MPI_Status *c, MPI_Fint *f)
{
    if (f != mpi_fortran_status_ignore_)
        PMPI_Status_c2f(c, f);
}

#define TYPE(t) PMPI_Type_f2c(*(t))
#define COMM(c) PMPI_Comm_f2c(*(c))

FX mpi_init_(MPI_Fint *ierr) { *ierr = MPI_Init(NULL, NULL); }

FX mpi_init_thread_(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr)
{
    int p = 0;
    *ierr = MPI_Init_thread(NULL, NULL, *required, &p);
    *provided = p;
}

FX mpi_finalize_(MPI_Fint *ierr) { *ierr = MPI_Finalize(); }

#define F_SEND(fname, cname)                                                                  \
    FX fname(void *b, MPI_Fint *n, MPI_Fint *t, MPI_Fint *dest, MPI_Fint *tag, MPI_Fint *c,    \
             MPI_Fint *ierr)                                                               \
    {                                                                                      \
        *ierr = cname(buf_c(b), *n, TYPE(t), *dest, *tag, COMM(c));                        \
    }
F_SEND(mpi_send_, MPI_Send)
F_SEND(mpi_ssend_, MPI_Ssend)
F_SEND(mpi_bsend_, MPI_Bsend)
F_SEND(mpi_rsend_, MPI_Rsend)

FX mpi_recv_(void *b, MPI_Fint *n, MPI_Fint *t, MPI_Fint *src, MPI_Fint *tag, MPI_Fint *c,
             MPI_Fint *status, MPI_Fint *ierr)
{
    MPI_Status st;
    *ierr = MPI_Recv(buf_c(b), *n, TYPE(t), *src, *tag, COMM(c), &st);
    status_f(&st, status);
}

FX mpi_isend_(void *b, MPI_Fint *n, MPI_Fint *t, MPI_Fint *dest, MPI_Fint *tag, MPI_Fint *c,
              MPI_Fint *req, MPI_Fint *ierr)
{
    MPI_Request r;
    *ierr = MPI_Isend(buf_c(b), *n, TYPE(t), *dest, *tag, COMM(c), &r);
    *req = PMPI_Request_c2f(r);
}

FX mpi_irecv_(void *b, MPI_Fint *n, MPI_Fint *t, MPI_Fint *src, MPI_Fint *tag, MPI_Fint *c,
              MPI_Fint *req, MPI_Fint *ierr)
{
    MPI_Request r;
    *ierr = MPI_Irecv(buf_c(b), *n, TYPE(t), *src, *tag, COMM(c), &r);
    *req = PMPI_Request_c2f(r);
}

FX mpi_wait_(MPI_Fint *req, MPI_Fint *status, MPI_Fint *ierr)
{
    MPI_Request r = PMPI_Request_f2c(*req);
    MPI_Status st;
    *ierr = MPI_Wait(&r, &st);
    *req = PMPI_Request_c2f(r);
    status_f(&st, status);
}

FX mpi_waitall_(MPI_Fint *count, MPI_Fint *reqs, MPI_Fint *statuses, MPI_Fint *ierr)
{
    int n = *count > 0 ? *count : 0;
    MPI_Request *r = alloca(sizeof *r * (size_t)(n ? n : 1));
    MPI_Status *st = alloca(sizeof *st * (size_t)(n ? n : 1));
    for (int i = 0; i < n; i++)
        r[i] = PMPI_Request_f2c(reqs[i]);
    *ierr = MPI_Waitall(n, r, st);
    for (int i = 0; i < n; i++) {
        reqs[i] = PMPI_Request_c2f(r[i]);
        if (statuses != mpi_fortran_statuses_ignore_)
            PMPI_Status_c2f(&st[i], statuses + (size_t)i * F_STATUS_SIZE);
    }
}

FX mpi_sendrecv_(void *sb, MPI_Fint *sn, MPI_Fint *st_, MPI_Fint *dest, MPI_Fint *stag, void *rb,
                 MPI_Fint *rn, MPI_Fint *rt, MPI_Fint *src, MPI_Fint *rtag, MPI_Fint *c,
                 MPI_Fint *status, MPI_Fint *ierr)
{
    MPI_Status st;
    *ierr = MPI_Sendrecv(buf_c(sb), *sn, TYPE(st_), *dest, *stag, buf_c(rb), *rn, TYPE(rt), *src,
                         *rtag, COMM(c), &st);
    status_f(&st, status);
}

FX mpi_barrier_(MPI_Fint *c, MPI_Fint *ierr) { *ierr = MPI_Barrier(COMM(c)); }

FX mpi_bcast_(void *b, MPI_Fint *n, MPI_Fint *t, MPI_Fint *root, MPI_Fint *c, MPI_Fint *ierr)
{
    *ierr = MPI_Bcast(buf_c(b), *n, TYPE(t), *root, COMM(c));
}

FX mpi_reduce_(void *s, void *r, MPI_Fint *n, MPI_Fint *t, MPI_Fint *op, MPI_Fint *root,
               MPI_Fint *c, MPI_Fint *ierr)
{
    *ierr = MPI_Reduce(buf_c(s), buf_c(r), *n, TYPE(t), PMPI_Op_f2c(*op), *root, COMM(c));
}

FX mpi_allreduce_(void *s, void *r, MPI_Fint *n, MPI_Fint *t, MPI_Fint *op, MPI_Fint *c,
                  MPI_Fint *ierr)
{
    *ierr = MPI_Allreduce(buf_c(s), buf_c(r), *n, TYPE(t), PMPI_Op_f2c(*op), COMM(c));
}

#endif /* OPEN_MPI */
