/* Critical path example: a chain of messages through the ranks.
 *
 * Rank r waits for a token from rank r - 1 (rank 0 does not), busy-computes (r + 1) × UNIT
 * seconds of wall time in compute_rank<r % 4>, then passes the token to rank r + 1. Every
 * rank's compute is on the critical path, one after the other: the path's length is the sum
 * of the computes plus the message transfers, and equals the elapsed time of the phase "work".
 *
 *   mpicc -O1 -finstrument-functions chain.c -o chain
 *   mpirun -np 4 plx run --trace -o exp -- ./chain [UNIT=0.1]
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

__attribute__((noinline)) static void compute_rank0(double s) { BUSY(s); }
__attribute__((noinline)) static void compute_rank1(double s) { BUSY(s); }
__attribute__((noinline)) static void compute_rank2(double s) { BUSY(s); }
__attribute__((noinline)) static void compute_rank3(double s) { BUSY(s); }

static void (*const computes[4])(double) = {compute_rank0, compute_rank1, compute_rank2,
                                            compute_rank3};

int main(int argc, char **argv)
{
    int rank, size, token = 0;
    double unit = argc > 1 ? atof(argv[1]) : 0.1;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Barrier(MPI_COMM_WORLD);
    if (plx_phase_begin)
        plx_phase_begin("work");
    if (rank > 0)
        MPI_Recv(&token, 1, MPI_INT, rank - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    computes[rank % 4](unit * (rank + 1));
    token++;
    if (rank + 1 < size)
        MPI_Send(&token, 1, MPI_INT, rank + 1, 0, MPI_COMM_WORLD);
    if (plx_phase_end)
        plx_phase_end("work");
    MPI_Finalize();
    return 0;
}
