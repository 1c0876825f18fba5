/* Communicator management: new communicators are defined at once, by every member in the same
 * order whether or not it uses them (a communicator defined at its first use would take another
 * ordinal on a rank that skipped one), freed ones forgotten. An intercommunicator (MPI_Intercomm_create) is an
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

PLX_MPI_EXPORT int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *out)
{
    PLX_MPI_WRAP("MPI_Comm_dup_with_info", PMPI_Comm_dup_with_info(comm, info, out), ,
                 if (rc_ == MPI_SUCCESS) created(*out));
}

/* The new handle is there when the call returns, its communicator usable once the request
 * completes: defined now, as a copy of `comm`, in the order of the calls. */
PLX_MPI_EXPORT int MPI_Comm_idup(MPI_Comm comm, MPI_Comm *out, MPI_Request *req)
{
    PLX_MPI_WRAP("MPI_Comm_idup", PMPI_Comm_idup(comm, out, req), ,
                 if (rc_ == MPI_SUCCESS && *out != MPI_COMM_NULL) plx_mpi_comm_copy(*out, comm));
}

#if MPI_VERSION >= 4
PLX_MPI_EXPORT int MPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *out,
                                           MPI_Request *req)
{
    PLX_MPI_WRAP("MPI_Comm_idup_with_info", PMPI_Comm_idup_with_info(comm, info, out, req), ,
                 if (rc_ == MPI_SUCCESS && *out != MPI_COMM_NULL) plx_mpi_comm_copy(*out, comm));
}
#endif

PLX_MPI_EXPORT int MPI_Comm_split_type(MPI_Comm comm, int type, int key, MPI_Info info,
                                       MPI_Comm *out)
{
    PLX_MPI_WRAP("MPI_Comm_split_type", PMPI_Comm_split_type(comm, type, key, info, out), ,
                 if (rc_ == MPI_SUCCESS) created(*out));
}

/* Called by the group's members only: the members of the communicator it makes. */
PLX_MPI_EXPORT int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *out)
{
    PLX_MPI_WRAP("MPI_Comm_create_group", PMPI_Comm_create_group(comm, group, tag, out), ,
                 if (rc_ == MPI_SUCCESS) created(*out));
}

PLX_MPI_EXPORT int MPI_Cart_create(MPI_Comm comm, int ndims, const int dims[],
                                   const int periods[], int reorder, MPI_Comm *out)
{
    PLX_MPI_WRAP("MPI_Cart_create", PMPI_Cart_create(comm, ndims, dims, periods, reorder, out), ,
                 if (rc_ == MPI_SUCCESS) created(*out));
}

PLX_MPI_EXPORT int MPI_Cart_sub(MPI_Comm comm, const int remain[], MPI_Comm *out)
{
    PLX_MPI_WRAP("MPI_Cart_sub", PMPI_Cart_sub(comm, remain, out), ,
                 if (rc_ == MPI_SUCCESS) created(*out));
}

PLX_MPI_EXPORT int MPI_Graph_create(MPI_Comm comm, int nnodes, const int index[],
                                    const int edges[], int reorder, MPI_Comm *out)
{
    PLX_MPI_WRAP("MPI_Graph_create", PMPI_Graph_create(comm, nnodes, index, edges, reorder, out), ,
                 if (rc_ == MPI_SUCCESS) created(*out));
}

PLX_MPI_EXPORT int MPI_Dist_graph_create(MPI_Comm comm, int n, const int sources[],
                                         const int degrees[], const int dests[],
                                         const int weights[], MPI_Info info, int reorder,
                                         MPI_Comm *out)
{
    PLX_MPI_WRAP("MPI_Dist_graph_create",
                 PMPI_Dist_graph_create(comm, n, sources, degrees, dests, weights, info, reorder,
                                        out), ,
                 if (rc_ == MPI_SUCCESS) created(*out));
}

PLX_MPI_EXPORT int MPI_Dist_graph_create_adjacent(MPI_Comm comm, int indegree,
                                                  const int sources[], const int sourceweights[],
                                                  int outdegree, const int dests[],
                                                  const int destweights[], MPI_Info info,
                                                  int reorder, MPI_Comm *out)
{
    PLX_MPI_WRAP("MPI_Dist_graph_create_adjacent",
                 PMPI_Dist_graph_create_adjacent(comm, indegree, sources, sourceweights, outdegree,
                                                 dests, destweights, info, reorder, out), ,
                 if (rc_ == MPI_SUCCESS) created(*out));
}

PLX_MPI_EXPORT int MPI_Comm_free(MPI_Comm *comm)
{
    PLX_MPI_WRAP("MPI_Comm_free", PMPI_Comm_free(comm), plx_mpi_comm_forget(*comm), );
}
