/* Golden experiment mpi-irecv: rank 1 posts MPI_Irecv and completes it in MPI_Wait (the
 * recv_posted subtype before its recv); rank 0 MPI_Ssends to it. */
#include <mpi.h>

int main(int argc, char **argv)
{
    int rank, v = 7;
    MPI_Request req;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        MPI_Ssend(&v, 1, MPI_INT, 1, 3, MPI_COMM_WORLD);
    } else if (rank == 1) {
        MPI_Irecv(&v, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
    MPI_Finalize();
    return 0;
}
