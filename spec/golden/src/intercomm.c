/* Golden program for InterCommDef (2 ranks): MPI_COMM_WORLD split into {0} and {1}, joined by
 * MPI_Intercomm_create; rank 0 sends one int to the remote rank 0 (world 1). */
#include <mpi.h>

int main(int argc, char **argv)
{
    int rank, v = 7;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm half, inter;
    MPI_Comm_split(MPI_COMM_WORLD, rank, 0, &half);
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - rank, 5, &inter);
    if (rank == 0)
        MPI_Send(&v, 1, MPI_INT, 0, 3, inter);
    else
        MPI_Recv(&v, 1, MPI_INT, 0, 3, inter, MPI_STATUS_IGNORE);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
    MPI_Finalize();
    return 0;
}
