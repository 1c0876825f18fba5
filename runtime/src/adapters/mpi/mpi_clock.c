/* Clock offsets to rank 0, measured at MPI_Init and MPI_Finalize: rank 0 answers each rank's
 * pings with its CLOCK_MONOTONIC; the exchange with the shortest round trip gives the offset
 * (Cristian's method). Ranks on rank 0's host share its CLOCK_MONOTONIC: their offset is 0,
 * exactly, without a measurement whose error would only blur it. On a private duplicate of
 * MPI_COMM_WORLD, so no user message can match. Run only when every rank of the job is measured
 * (mpi_job.c): a rank left unmeasured would never join it. */
#include "mpi_internal.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TAG 7

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void exchange(int when)
{
    MPI_Comm comm;
    if (PMPI_Comm_dup(MPI_COMM_WORLD, &comm) != MPI_SUCCESS)
        return;
    int n = (int)plx_ext_config()->mpi_sync_rounds;
    uint64_t best_rtt = UINT64_MAX, local = mono_ns();
    int64_t offset = 0;
    char mine[256] = "", host0[256] = "";
    gethostname(mine, sizeof mine - 1);
    if (plx_mpi_rank == 0)
        memcpy(host0, mine, sizeof host0);
    PMPI_Bcast(host0, sizeof host0, MPI_CHAR, 0, comm);
    int remote = strcmp(mine, host0) != 0;
    int *remotes = plx_mpi_rank == 0 ? calloc((size_t)plx_mpi_size, sizeof(int)) : NULL;
    PMPI_Gather(&remote, 1, MPI_INT, remotes, 1, MPI_INT, 0, comm);
    if (plx_mpi_rank == 0) {
        for (int r = 1; r < plx_mpi_size; r++)
            for (int k = 0; remotes && remotes[r] && k < n; k++) {
                uint64_t ping, now;
                PMPI_Recv(&ping, 1, MPI_UINT64_T, r, TAG, comm, MPI_STATUS_IGNORE);
                now = mono_ns();
                PMPI_Send(&now, 1, MPI_UINT64_T, r, TAG, comm);
            }
        best_rtt = 0;
        free(remotes);
    } else if (!remote) {
        best_rtt = 0;
    } else {
        for (int k = 0; k < n; k++) {
            uint64_t t1 = mono_ns(), t0;
            PMPI_Send(&t1, 1, MPI_UINT64_T, 0, TAG, comm);
            PMPI_Recv(&t0, 1, MPI_UINT64_T, 0, TAG, comm, MPI_STATUS_IGNORE);
            uint64_t t2 = mono_ns();
            if (t2 - t1 < best_rtt) {
                best_rtt = t2 - t1;
                local = t1 + (t2 - t1) / 2;
                offset = (int64_t)t0 - (int64_t)local;
            }
        }
    }
    PMPI_Comm_free(&comm);
    struct plx_rec rec;
    plx_ext_rec_init(&rec);
    plx_enc_clock_offset(&rec, (uint8_t)when, local, offset, best_rtt);
    plx_ext_rec_write(&rec);
}

static int everyone; /* every rank of the job measured: decided at Init, kept for Finalize */

void plx_mpi_clock_init(void)
{
    int marked = plx_mpi_job_marked(plx_mpi_size);
    everyone = marked == plx_mpi_size;
    if (everyone) {
        exchange(0);
        plx_mpi_job_unmark(); /* every rank has counted: the exchange's first collective is done */
        return;
    }
    plx_mpi_job_decided();
    struct plx_rec rec;
    plx_ext_rec_init(&rec);
    plx_enc_clock_sync_skipped(&rec, (uint32_t)marked, (uint32_t)plx_mpi_size);
    plx_ext_rec_write(&rec);
}

void plx_mpi_clock_finalize(void)
{
    if (everyone)
        exchange(1);
}
