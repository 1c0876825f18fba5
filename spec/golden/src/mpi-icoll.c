/* Golden experiment mpi-icoll: both ranks post an MPI_Iallreduce and complete it in MPI_Wait
 * (the coll_done subtype). */
#include <mpi.h>

int main(int argc, char **argv)
{
    int v = 1, sum = 0;
    MPI_Request req;
    MPI_Init(&argc, &argv);
    MPI_Iallreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return sum == 2 ? 0 : 1;
}
