/* libplx-mpi on the Irecv path, one rank: MPI_Irecv from itself, MPI_Send to itself, MPI_Wait (the
 * recv_posted event and the post kept with the request); ns per iteration, best of 5 passes.
 *   mpicc -O2 bench/mpi_irecv.c -o /tmp/mpi_irecv
 *   PLX_OUTPUT=/tmp/e PLX_TRACE=1 LD_PRELOAD="build/lib/libplx.so:build/lib/libplx-mpi.so" \
 *     mpirun -np 1 /tmp/mpi_irecv 100000 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 200000, v = 0, w = 1;
    MPI_Request r;
    MPI_Init(&argc, &argv);
    double best = 1e9;
    for (int pass = 0; pass < 5; pass++) {
        double t0 = MPI_Wtime();
        for (int i = 0; i < n; i++) {
            MPI_Irecv(&v, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, &r);
            MPI_Send(&w, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        }
        double t = (MPI_Wtime() - t0) / n * 1e9;
        if (t < best)
            best = t;
    }
    printf("ns_per_iter: %.1f\n", best);
    MPI_Finalize();
    return 0;
}
