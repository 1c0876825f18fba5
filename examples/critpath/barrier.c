/* Critical path example: one slow rank among equals before a barrier.
 *
 * Rank size / 2 busy-computes SLOW seconds of wall time in compute_slow, every other rank
 * FAST seconds in compute_fast; then all meet in MPI_Barrier and leave. The slow rank's
 * compute is the critical path; the others' is not on it (they wait at the barrier).
 *
 *   mpicc -O1 -finstrument-functions barrier.c -o barrier
 *   mpirun -np 4 plx run --trace -o exp -- ./barrier [SLOW=1.0 [FAST=0.1]]
 *   plx critical-path exp --phase work
 */
#include <mpi.h>
#include <stdlib.h>
#include <time.h>

/* Phases of the Parallax runtime when it is preloaded; nothing otherwise. */
void plx_phase_begin(const char *name) __attribute__((weak));
void plx_phase_end(const char *name) __attribute__((weak));

__attribute__((no_instrument_function)) static inline double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Busy for `seconds` of wall time (on a loaded machine too: the clock, not the work, counts). */
#define BUSY(seconds)                                                                       \
    do {                                                                                    \
        double end_ = now() + (seconds);                                                    \
        volatile unsigned long spin_ = 0;                                                   \
        while (now() < end_)                                                                \
            spin_++;                                                                        \
    } while (0)

__attribute__((noinline)) static void compute_slow(double s) { BUSY(s); }
__attribute__((noinline)) static void compute_fast(double s) { BUSY(s); }

int main(int argc, char **argv)
{
    int rank, size;
    double slow = argc > 1 ? atof(argv[1]) : 1.0;
    double fast = argc > 2 ? atof(argv[2]) : 0.1;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Barrier(MPI_COMM_WORLD);
    if (plx_phase_begin)
        plx_phase_begin("work");
    if (rank == size / 2)
        compute_slow(slow);
    else
        compute_fast(fast);
    MPI_Barrier(MPI_COMM_WORLD);
    if (plx_phase_end)
        plx_phase_end("work");
    MPI_Finalize();
    return 0;
}
