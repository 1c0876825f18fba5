/* Communicator management: new communicators are defined at once (every member does so in
 * the same order), freed ones forgotten. An intercommunicator (MPI_Intercomm_create) is an
 * InterCommDef with both groups; MPI_Intercomm_merge's result is an intracommunicator. */
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

PLX_MPI_EXPORT int MPI_Intercomm_create(MPI_Comm local, int local_leader, MPI_Comm peer,
                                        int remote_leader, int tag, MPI_Comm *out)
{
    PLX_MPI_WRAP("MPI_Intercomm_create",
                 PMPI_Intercomm_create(local, local_leader, peer, remote_leader, tag, out), ,
                 if (rc_ == MPI_SUCCESS) created(*out));
}

PLX_MPI_EXPORT int MPI_Intercomm_merge(MPI_Comm inter, int high, MPI_Comm *out)
{
    PLX_MPI_WRAP("MPI_Intercomm_merge", PMPI_Intercomm_merge(inter, high, out), ,
                 if (rc_ == MPI_SUCCESS) created(*out));
}

PLX_MPI_EXPORT int MPI_Comm_free(MPI_Comm *comm)
{
    PLX_MPI_WRAP("MPI_Comm_free", PMPI_Comm_free(comm), plx_mpi_comm_forget(*comm), );
}
