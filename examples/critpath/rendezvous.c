/* Critical path example: a synchronous send completed in MPI_Wait waits for a late receiver.
 *
 * Rank 0 posts MPI_Issend to rank 1 and waits for it in MPI_Wait; rank 1 busy-computes SLOW
 * seconds of wall time in compute_late before it posts the receive (MPI_Irecv, then MPI_Wait);
 * rank 0 then computes FAST seconds in compute_after, the other ranks FAST seconds in
 * compute_other; all meet in MPI_Barrier. The critical path runs through rank 1's compute_late
 * into rank 0's MPI_Wait (the send completes when the receive is posted) and on through rank
 * 0's compute_after: rank 0's time in MPI_Wait is waiting, not on the path.
 *
 *   mpicc -O1 -finstrument-functions rendezvous.c -o rendezvous
 *   mpirun -np 4 plx run --trace -o exp -- ./rendezvous [SLOW=0.5 [FAST=0.1]]
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

__attribute__((noinline)) static void compute_late(double s) { BUSY(s); }
__attribute__((noinline)) static void compute_after(double s) { BUSY(s); }
__attribute__((noinline)) static void compute_other(double s) { BUSY(s); }

int main(int argc, char **argv)
{
    int rank, v = 0;
    double slow = argc > 1 ? atof(argv[1]) : 0.5;
    double fast = argc > 2 ? atof(argv[2]) : 0.1;
    MPI_Request req;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);
    if (plx_phase_begin)
        plx_phase_begin("work");
    if (rank == 0) {
        MPI_Issend(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        compute_after(fast);
    } else if (rank == 1) {
        compute_late(slow);
        MPI_Irecv(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else {
        compute_other(fast);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (plx_phase_end)
        plx_phase_end("work");
    MPI_Finalize();
    return 0;
}
