/* MPI ping-pong between rank 0 and rank 1 (other ranks idle): for each message size, N round
 * trips. The jmpi paper's latency/bandwidth benchmark; `plx comm --fit` recovers both.
 *
 *   mpirun -np 2 pingpong [ITERATIONS] [SIZE...]     defaults: 100 iterations, 8 and 1 MiB */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static void exchange(char *buf, int size, int iterations, int rank)
{
    for (int i = 0; i < iterations; i++) {
        if (rank == 0) {
            MPI_Send(buf, size, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
            MPI_Recv(buf, size, MPI_CHAR, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(buf, size, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, size, MPI_CHAR, 0, 2, MPI_COMM_WORLD);
        }
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    int iterations = argc > 1 ? atoi(argv[1]) : 100;
    int default_sizes[] = {8, 1 << 20};
    int nsizes = argc > 2 ? argc - 2 : 2;
    if (nranks < 2 || iterations < 1) {
        if (rank == 0)
            fprintf(stderr, "usage: mpirun -np 2 pingpong [ITERATIONS] [SIZE...]\n");
        MPI_Finalize();
        return 2;
    }
    int max = 0;
    for (int k = 0; k < nsizes; k++) {
        int s = argc > 2 ? atoi(argv[2 + k]) : default_sizes[k];
        if (s > max)
            max = s;
    }
    char *buf = calloc((size_t)max + 1, 1);
    for (int k = 0; k < nsizes; k++) {
        int size = argc > 2 ? atoi(argv[2 + k]) : default_sizes[k];
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        exchange(buf, size, iterations, rank);
        double t1 = MPI_Wtime();
        if (rank == 0)
            printf("%9d bytes: %10.3f us per round trip\n", size, (t1 - t0) * 1e6 / iterations);
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
