/* Completion wrappers (Wait and Test families): the handles are saved before PMPI frees them,
 * statuses substituted when the caller ignores them, and each completed receive is recorded
 * in the routine that completed it. */
#include "mpi_internal.h"

#include <string.h>

#define ONE_STATUS(st) MPI_Status own_status_, *st_ = (st) == MPI_STATUS_IGNORE ? &own_status_ : (st)

PLX_MPI_EXPORT int MPI_Wait(MPI_Request *req, MPI_Status *status)
{
    ONE_STATUS(status);
    MPI_Request saved = *req;
    PLX_MPI_WRAP("MPI_Wait", PMPI_Wait(req, st_), ,
                 if (rc_ == MPI_SUCCESS && saved != MPI_REQUEST_NULL) plx_mpi_completed(t, saved, st_));
}

PLX_MPI_EXPORT int MPI_Test(MPI_Request *req, int *flag, MPI_Status *status)
{
    ONE_STATUS(status);
    MPI_Request saved = *req;
    PLX_MPI_WRAP("MPI_Test", PMPI_Test(req, flag, st_), ,
                 if (rc_ == MPI_SUCCESS && *flag && saved != MPI_REQUEST_NULL)
                     plx_mpi_completed(t, saved, st_));
}

/* Saves n handles and picks the statuses PMPI writes; NULL saved when out of memory. */
#define MANY(n, reqs, statuses)                                                               \
    MPI_Request *saved = plx_mpi_scratch_requests(t, n);                                   \
    MPI_Status *sts = statuses == MPI_STATUSES_IGNORE ? plx_mpi_scratch_statuses(t, n) : statuses; \
    if (saved)                                                                             \
        memcpy(saved, reqs, sizeof(MPI_Request) * (size_t)(n));                            \
    if (!sts)                                                                              \
        sts = statuses

static void completed_at(struct plx_thread *t, const MPI_Request *saved, const MPI_Status *sts,
                         int i, int k)
{
    if (saved && saved[i] != MPI_REQUEST_NULL)
        plx_mpi_completed(t, saved[i], sts && sts != MPI_STATUSES_IGNORE ? &sts[k] : NULL);
}

/* The wrappers below are written out: PLX_MPI_WRAP's unmeasured path must not touch scratch. */
PLX_MPI_EXPORT int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status *statuses)
{
    struct plx_thread *t = plx_ext_acquire();
    if (!t)
        return PMPI_Waitall(n, reqs, statuses);
    uint32_t rid = PLX_MPI_REGION("MPI_Waitall");
    plx_ext_enter(t, rid);
    MANY(n, reqs, statuses);
    int rc = PMPI_Waitall(n, reqs, sts);
    for (int i = 0; rc == MPI_SUCCESS && i < n; i++)
        completed_at(t, saved, sts, i, i);
    plx_ext_leave(t, rid);
    plx_ext_release(t);
    return rc;
}

PLX_MPI_EXPORT int MPI_Testall(int n, MPI_Request reqs[], int *flag, MPI_Status *statuses)
{
    struct plx_thread *t = plx_ext_acquire();
    if (!t)
        return PMPI_Testall(n, reqs, flag, statuses);
    uint32_t rid = PLX_MPI_REGION("MPI_Testall");
    plx_ext_enter(t, rid);
    MANY(n, reqs, statuses);
    int rc = PMPI_Testall(n, reqs, flag, sts);
    for (int i = 0; rc == MPI_SUCCESS && *flag && i < n; i++)
        completed_at(t, saved, sts, i, i);
    plx_ext_leave(t, rid);
    plx_ext_release(t);
    return rc;
}

PLX_MPI_EXPORT int MPI_Waitany(int n, MPI_Request reqs[], int *index, MPI_Status *status)
{
    struct plx_thread *t = plx_ext_acquire();
    if (!t)
        return PMPI_Waitany(n, reqs, index, status);
    uint32_t rid = PLX_MPI_REGION("MPI_Waitany");
    plx_ext_enter(t, rid);
    ONE_STATUS(status);
    MPI_Request *saved = plx_mpi_scratch_requests(t, n);
    if (saved)
        memcpy(saved, reqs, sizeof(MPI_Request) * (size_t)n);
    int rc = PMPI_Waitany(n, reqs, index, st_);
    if (rc == MPI_SUCCESS && *index != MPI_UNDEFINED)
        completed_at(t, saved, st_, *index, 0);
    plx_ext_leave(t, rid);
    plx_ext_release(t);
    return rc;
}

PLX_MPI_EXPORT int MPI_Testany(int n, MPI_Request reqs[], int *index, int *flag, MPI_Status *status)
{
    struct plx_thread *t = plx_ext_acquire();
    if (!t)
        return PMPI_Testany(n, reqs, index, flag, status);
    uint32_t rid = PLX_MPI_REGION("MPI_Testany");
    plx_ext_enter(t, rid);
    ONE_STATUS(status);
    MPI_Request *saved = plx_mpi_scratch_requests(t, n);
    if (saved)
        memcpy(saved, reqs, sizeof(MPI_Request) * (size_t)n);
    int rc = PMPI_Testany(n, reqs, index, flag, st_);
    if (rc == MPI_SUCCESS && *flag && *index != MPI_UNDEFINED)
        completed_at(t, saved, st_, *index, 0);
    plx_ext_leave(t, rid);
    plx_ext_release(t);
    return rc;
}

#define SOME(NAME)                                                                            \
    PLX_MPI_EXPORT int NAME(int n, MPI_Request reqs[], int *outcount, int indices[],        \
                            MPI_Status *statuses)                                          \
    {                                                                                      \
        struct plx_thread *t = plx_ext_acquire();                                          \
        if (!t)                                                                            \
            return P##NAME(n, reqs, outcount, indices, statuses);                          \
        uint32_t rid = PLX_MPI_REGION(#NAME);                                              \
        plx_ext_enter(t, rid);                                                             \
        MANY(n, reqs, statuses);                                                           \
        int rc = P##NAME(n, reqs, outcount, indices, sts);                                 \
        for (int k = 0; rc == MPI_SUCCESS && *outcount != MPI_UNDEFINED && k < *outcount; k++) \
            completed_at(t, saved, sts, indices[k], k);                                    \
        plx_ext_leave(t, rid);                                                             \
        plx_ext_release(t);                                                                \
        return rc;                                                                         \
    }

SOME(MPI_Waitsome)
SOME(MPI_Testsome)
