/* Golden experiment mpi-nonblocking: rank 0 MPI_Issends to rank 1 and completes it in MPI_Wait
 * (the send_done subtype); rank 1 receives it with MPI_Recv. */
#include <mpi.h>

int main(int argc, char **argv)
{
    int rank, v = 7;
    MPI_Request req;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        MPI_Issend(&v, 1, MPI_INT, 1, 3, MPI_COMM_WORLD, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
        MPI_Recv(&v, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Finalize();
    return 0;
}
