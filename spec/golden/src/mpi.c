/* Golden program for the MPI records and subtypes (2 ranks): a send and its receive, a
 * collective on MPI_COMM_WORLD and a barrier on a communicator of its own (a CommDef). */
#include <mpi.h>

int main(int argc, char **argv)
{
    int rank, v, sum;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    v = rank + 1;
    if (rank == 0)
        MPI_Send(&v, 1, MPI_INT, 1, 7, MPI_COMM_WORLD);
    else if (rank == 1)
        MPI_Recv(&v, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Comm pair;
    MPI_Comm_split(MPI_COMM_WORLD, 0, -rank, &pair);
    MPI_Barrier(pair);
    MPI_Comm_free(&pair);
    MPI_Finalize();
    return 0;
}
