/* libexchange.so: the only MPI user; the program linking it never names MPI itself.
 * Rank 0 sends one int to rank 1. */
#include <mpi.h>

int exchange(void)
{
    int rank, value = 42;
    MPI_Init(NULL, NULL);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        MPI_Send(&value, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
    else if (rank == 1)
        MPI_Recv(&value, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return value;
}
