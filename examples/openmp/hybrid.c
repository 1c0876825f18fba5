/* MPI + OpenMP: every rank runs REGIONS parallel regions of 2 threads, each thread calling
 * work() 4 times (schedule(static) over 8 iterations), then the ranks sum their counts with
 * MPI_Allreduce from the master thread.
 *
 *   mpirun -np RANKS hybrid [REGIONS]       default 2 regions */
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

static volatile double sink;

void work(int i)
{
    double x = i;
    for (int k = 0; k < 1000; k++)
        x = x * 0.999 + 1.0;
    sink = x;
}

int main(int argc, char **argv)
{
    int provided, rank, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int regions = argc > 1 ? atoi(argv[1]) : 2;
    long calls = 0, all = 0;
    for (int r = 0; r < regions; r++) {
#pragma omp parallel num_threads(2) reduction(+ : calls)
        {
#pragma omp for schedule(static)
            for (int i = 0; i < 8; i++) {
                work(i);
                calls++;
            }
        }
    }
    MPI_Allreduce(&calls, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("work calls %ld (expected %d)\n", all, size * regions * 8);
    MPI_Finalize();
    return all == (long)size * regions * 8 ? 0 : 1;
}
