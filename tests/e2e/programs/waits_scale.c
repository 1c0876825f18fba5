/* Wait states of known size at 64 ranks (plx waits --parallel, tests/e2e/test_waits_parallel.py).
 * Each scenario is a function of its own, called from main between barriers; a named delay_*
 * function sleeps D seconds (argv[1]) on one chosen rank:
 *   scenario_p2p        rank 5 sleeps, then MPI_Sends to rank 40 (waiting in MPI_Recv: a late
 *                       sender); rank 50 sleeps, then MPI_Recvs what rank 20 MPI_Ssends it
 *                       (a late receiver)
 *   scenario_barrier    rank 63 sleeps, then MPI_Barrier
 *   scenario_allreduce  rank 17 sleeps, then MPI_Allreduce
 *   scenario_bcast      the root, rank 33, sleeps, then MPI_Bcast
 * The partners sit in different blocks of any analysis of 2 to 8 processes. */
#include <mpi.h>
#include <stdlib.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))

static double D;
static int rank;

static void nap(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

NOINLINE static void delay_send(void) { nap(D); }
NOINLINE static void delay_recv(void) { nap(D); }
NOINLINE static void delay_barrier(void) { nap(D); }
NOINLINE static void delay_allreduce(void) { nap(D); }
NOINLINE static void delay_bcast(void) { nap(D); }

NOINLINE static void scenario_p2p(void)
{
    int v = rank;
    if (rank == 5) {
        delay_send();
        MPI_Send(&v, 1, MPI_INT, 40, 1, MPI_COMM_WORLD);
    } else if (rank == 40) {
        MPI_Recv(&v, 1, MPI_INT, 5, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank == 20) {
        MPI_Ssend(&v, 1, MPI_INT, 50, 2, MPI_COMM_WORLD);
    } else if (rank == 50) {
        delay_recv();
        MPI_Recv(&v, 1, MPI_INT, 20, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
}

NOINLINE static void scenario_barrier(void)
{
    if (rank == 63)
        delay_barrier();
    MPI_Barrier(MPI_COMM_WORLD);
}

NOINLINE static void scenario_allreduce(void)
{
    int v = rank, sum = 0;
    if (rank == 17)
        delay_allreduce();
    MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
}

NOINLINE static void scenario_bcast(void)
{
    int v = rank;
    if (rank == 33)
        delay_bcast();
    MPI_Bcast(&v, 1, MPI_INT, 33, MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    D = argc > 1 ? atof(argv[1]) : 0.3;
    MPI_Barrier(MPI_COMM_WORLD);
    scenario_p2p();
    MPI_Barrier(MPI_COMM_WORLD);
    scenario_barrier();
    MPI_Barrier(MPI_COMM_WORLD);
    scenario_allreduce();
    MPI_Barrier(MPI_COMM_WORLD);
    scenario_bcast();
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
