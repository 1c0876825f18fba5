/* Events of several MPI ranks with messages, for bench/python_tables.py: each rank calls a small
 * instrumented function N times and, every K calls, passes an int around the ring
 * (MPI_Sendrecv), so the trace has 2 N enter/exit events and 2 N / K messages per rank.
 *   plx-mpicc -O2 bench/mpi_ring.c -o /tmp/mpi_ring   (or mpicc -finstrument-functions)
 *   plx run --trace -o /tmp/ring -- mpirun -np 4 /tmp/mpi_ring 1250000 1000 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static long work(long x)
{
    return x * 7 + 3;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1250000, k = argc > 2 ? atol(argv[2]) : 1000, acc = 0;
    int rank, size, token = 0, got = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (long i = 0; i < n; i++) {
        acc = work(acc);
        if (k > 0 && i % k == 0)
            MPI_Sendrecv(&token, 1, MPI_INT, (rank + 1) % size, 1, &got, 1, MPI_INT,
                         (rank + size - 1) % size, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    if (rank == 0)
        printf("%ld\n", acc);
    MPI_Finalize();
    return 0;
}
