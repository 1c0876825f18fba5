/* An MPI program printing, per rank, the LD_PRELOAD it was started with: under plx run it must
 * hold both libplx.so and libplx-mpi.so. Run on 2 ranks; rank 0 sends rank 1 one message. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank, v = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const char *p = getenv("LD_PRELOAD");
    printf("rank %d LD_PRELOAD=%s\n", rank, p ? p : "(unset)");
    fflush(stdout);
    if (rank == 0)
        MPI_Send(&v, 1, MPI_INT, 1, 5, MPI_COMM_WORLD);
    else if (rank == 1)
        MPI_Recv(&v, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}
