/* MPI's lifetime: Init (identity, communicators, clock offsets), Finalize, Abort. */
#include "mpi_internal.h"

#include <string.h>

int plx_mpi_rank = -1, plx_mpi_size = 0;
int plx_mpi_ready;
/* Loaded by plx attach into a running rank: the other ranks are not measured, so no clock
 * synchronisation (a collective of every rank) is ever run. Otherwise it runs when every rank
 * marked itself measured before MPI_Init (mpi_job.c). */
static int attached;

__attribute__((constructor)) static void plx_mpi_load(void)
{
    plx_ext_on_thread_end(plx_mpi_thread_end);
    plx_mpi_fortran_load();
}

/* After Init: who this process is. Runs with the thread acquired (nothing recorded inside). */
static void started(int provided)
{
    PMPI_Comm_rank(MPI_COMM_WORLD, &plx_mpi_rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &plx_mpi_size);
    char lib[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    int len = 0;
    PMPI_Get_library_version(lib, &len);
    char *nl = strchr(lib, '\n');
    if (nl)
        *nl = 0;
    uint32_t rank = (uint32_t)plx_mpi_rank, size = (uint32_t)plx_mpi_size;
    uint32_t level = provided == MPI_THREAD_MULTIPLE     ? 3
                     : provided == MPI_THREAD_SERIALIZED ? 2
                     : provided == MPI_THREAD_FUNNELED   ? 1
                                                         : 0;
    struct plx_rec rec;
    plx_ext_rec_init(&rec);
    plx_enc_mpi_init(&rec, rank, size, level, plx_ext_ticks(), lib);
    plx_ext_rec_write(&rec);
    plx_mpi_comms_init();
    if (!attached)
        plx_mpi_clock_init();
    plx_mpi_ready = 1;
}

/* plx attach, after this library was loaded into a running rank and its MPI routines redirected
 * to these wrappers: who the rank is, when MPI is initialised already (else MPI_Init's wrapper
 * says it later). */
PLX_MPI_EXPORT void plx_attach_mpi(void)
{
    attached = 1;
    int init = 0, fini = 0, provided = MPI_THREAD_SINGLE;
    if (PMPI_Initialized(&init) != MPI_SUCCESS || !init || PMPI_Finalized(&fini) != MPI_SUCCESS ||
        fini)
        return;
    PMPI_Query_thread(&provided);
    struct plx_thread *t = plx_ext_acquire();
    started(provided);
    if (t)
        plx_ext_release(t);
}

PLX_MPI_EXPORT int MPI_Init(int *argc, char ***argv)
{
    PLX_MPI_WRAP("MPI_Init", PMPI_Init(argc, argv), plx_mpi_job_mark(),
                 if (rc_ == MPI_SUCCESS) started(MPI_THREAD_SINGLE));
}

PLX_MPI_EXPORT int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    PLX_MPI_WRAP("MPI_Init_thread", PMPI_Init_thread(argc, argv, required, provided),
                 plx_mpi_job_mark(),
                 if (rc_ == MPI_SUCCESS) started(*provided));
}

PLX_MPI_EXPORT int MPI_Finalize(void)
{
    PLX_MPI_WRAP("MPI_Finalize", PMPI_Finalize(), if (plx_mpi_ready && !attached) plx_mpi_clock_finalize();
                 plx_mpi_ready = 0, );
}

/* The other ranks are killed by the MPI runtime (SIGTERM, which the runtime handles). */
PLX_MPI_EXPORT int MPI_Abort(MPI_Comm comm, int code)
{
    struct plx_thread *t = plx_ext_acquire();
    if (t) { /* a region left open: the experiment closes it when it is written */
        plx_ext_enter(t, PLX_MPI_REGION("MPI_Abort"));
        plx_ext_release(t);
    }
    plx_ext_end_process(3, code);
    return PMPI_Abort(comm, code);
}
