/* Communicator management: new communicators are defined at once (every member does so in
 * the same order), freed ones forgotten. */
#include "mpi_internal.h"

static void created(MPI_Comm c)
{
    if (c != MPI_COMM_NULL)
        plx_mpi_comm(c);
}

PLX_MPI_EXPORT int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *out)
{
    PLX_MPI_WRAP("MPI_Comm_dup", PMPI_Comm_dup(comm, out), , if (rc_ == MPI_SUCCESS) created(*out));
}

PLX_MPI_EXPORT int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *out)
{
    PLX_MPI_WRAP("MPI_Comm_split", PMPI_Comm_split(comm, color, key, out), ,
                 if (rc_ == MPI_SUCCESS) created(*out));
}

PLX_MPI_EXPORT int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *out)
{
    PLX_MPI_WRAP("MPI_Comm_create", PMPI_Comm_create(comm, group, out), ,
                 if (rc_ == MPI_SUCCESS) created(*out));
}

PLX_MPI_EXPORT int MPI_Comm_free(MPI_Comm *comm)
{
    PLX_MPI_WRAP("MPI_Comm_free", PMPI_Comm_free(comm), plx_mpi_comm_forget(*comm), );
}
