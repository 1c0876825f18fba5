/* Critical path example: a receive that waits in a blocking probe for a late sender.
 *
 * Two phases. In "mprobe", rank 1 busy-computes SLOW seconds of wall time in
 * compute_late_mprobe, then sends one int with MPI_Send to rank 0, which waits for it in
 * MPI_Mprobe and receives it with MPI_Mrecv; in "probe", the same with compute_late_probe and
 * MPI_Probe + MPI_Recv. After its receive rank 0 computes FAST seconds (compute_after_mprobe,
 * compute_after_probe), the other ranks FAST seconds in compute_other; all meet in
 * MPI_Barrier. In each phase the critical path runs through rank 1's late compute, the message
 * into the return of rank 0's probe, and on through rank 0's compute after it: rank 0's time in
 * the probe is waiting, not on the path.
 *
 *   mpicc -O1 -finstrument-functions probe.c -o probe
 *   mpirun -np 4 plx run --trace -o exp -- ./probe [SLOW=0.5 [FAST=0.1]]
 *   plx critical-path exp --phase mprobe
 *   plx critical-path exp --phase probe
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

__attribute__((noinline)) static void compute_late_mprobe(double s) { BUSY(s); }
__attribute__((noinline)) static void compute_after_mprobe(double s) { BUSY(s); }
__attribute__((noinline)) static void compute_late_probe(double s) { BUSY(s); }
__attribute__((noinline)) static void compute_after_probe(double s) { BUSY(s); }
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
    MPI_Message m;
    MPI_Status st;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);

    MPI_Barrier(MPI_COMM_WORLD);
    PHASE(begin, "mprobe");
    if (rank == 0) {
        MPI_Mprobe(1, 0, MPI_COMM_WORLD, &m, MPI_STATUS_IGNORE);
        MPI_Mrecv(&v, 1, MPI_INT, &m, MPI_STATUS_IGNORE);
        compute_after_mprobe(fast);
    } else if (rank == 1) {
        compute_late_mprobe(slow);
        MPI_Send(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
    } else {
        compute_other(fast);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    PHASE(end, "mprobe");

    PHASE(begin, "probe");
    if (rank == 0) {
        MPI_Probe(MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &st);
        MPI_Recv(&v, 1, MPI_INT, st.MPI_SOURCE, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        compute_after_probe(fast);
    } else if (rank == 1) {
        compute_late_probe(slow);
        MPI_Send(&v, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
    } else {
        compute_other(fast);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    PHASE(end, "probe");

    MPI_Finalize();
    return 0;
}
