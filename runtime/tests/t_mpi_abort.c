/* Every rank sends 2 messages around a ring, then rank 2 calls MPI_Abort(7) while the others
 * wait in MPI_Recv for a message that never comes: every rank's data must survive. */
#include <mpi.h>
int main(int argc, char **argv)
{
    int rank, n, v = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    for (int i = 0; i < 2; i++)
        MPI_Sendrecv(&v, 1, MPI_INT, (rank + 1) % n, 1, &v, 1, MPI_INT, (rank + n - 1) % n, 1,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 2)
        MPI_Abort(MPI_COMM_WORLD, 7);
    MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}
