/* Critical path example: blocking sends that wait for a late receiver.
 *
 * Two phases. In "ssend", rank 0 sends one int with MPI_Ssend to rank 1, which busy-computes
 * SLOW seconds of wall time in compute_late_ssend before its MPI_Recv; in "send", rank 0 sends
 * BYTES (4 MiB: more than any eager limit, so the send goes rendezvous) with a plain MPI_Send
 * to rank 1, which computes SLOW seconds in compute_late_send before it posts the receive with
 * MPI_Irecv and waits in MPI_Wait. After each send rank 0 computes FAST seconds
 * (compute_after_ssend, compute_after_send), the other ranks FAST seconds in compute_other;
 * all meet in MPI_Barrier. In each phase the critical path runs through rank 1's late compute
 * into the end of rank 0's send (it returns when the receive is posted) and on through rank
 * 0's compute after it: rank 0's time in MPI_Ssend or MPI_Send is waiting, not on the path.
 *
 *   mpicc -O1 -finstrument-functions ssend.c -o ssend
 *   mpirun -np 4 plx run --trace -o exp -- ./ssend [SLOW=0.5 [FAST=0.1]]
 *   plx critical-path exp --phase ssend
 *   plx critical-path exp --phase send
 */
#include <mpi.h>
#include <stdlib.h>
#include <time.h>

#define BYTES (4 << 20)

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

__attribute__((noinline)) static void compute_late_ssend(double s) { BUSY(s); }
__attribute__((noinline)) static void compute_after_ssend(double s) { BUSY(s); }
__attribute__((noinline)) static void compute_late_send(double s) { BUSY(s); }
__attribute__((noinline)) static void compute_after_send(double s) { BUSY(s); }
__attribute__((noinline)) static void compute_other(double s) { BUSY(s); }

/* A macro, not a function: a phase region opened inside an instrumented function would end
 * with it. */
#define PHASE(which, name)                                                                  \
    do {                                                                                    \
        if (plx_phase_##which)                                                              \
            plx_phase_##which(name);                                                        \
    } while (0)

int main(int argc, char **argv)
{
    int rank, v = 0;
    double slow = argc > 1 ? atof(argv[1]) : 0.5;
    double fast = argc > 2 ? atof(argv[2]) : 0.1;
    char *buf = calloc(BYTES, 1);
    MPI_Request req;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);

    MPI_Barrier(MPI_COMM_WORLD);
    PHASE(begin, "ssend");
    if (rank == 0) {
        MPI_Ssend(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
        compute_after_ssend(fast);
    } else if (rank == 1) {
        compute_late_ssend(slow);
        MPI_Recv(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        compute_other(fast);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    PHASE(end, "ssend");

    MPI_Barrier(MPI_COMM_WORLD);
    PHASE(begin, "send");
    if (rank == 0) {
        MPI_Send(buf, BYTES, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
        compute_after_send(fast);
    } else if (rank == 1) {
        compute_late_send(slow);
        MPI_Irecv(buf, BYTES, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else {
        compute_other(fast);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    PHASE(end, "send");

    MPI_Finalize();
    free(buf);
    return 0;
}
