/* A small psim: the IPS-2 paper's interconnection-network simulator, cut down. Each rank owns a
 * share of the simulated devices (processors, switches, memories) of a k-ary n-cube; every
 * simulated clock cycle it computes the next state of its devices, then all ranks meet at a
 * barrier before the next cycle. Packets fill the network at the start and drain at the end,
 * so the work per cycle grows and shrinks, and the barrier wait with it.
 *
 *   mpirun -np 2 psim [CYCLES] [WORK]        defaults: 400 cycles, 20000 units of work
 *
 * With PSIM_COSCHED=PATH set, each rank registers with the co-scheduler listening on the Unix
 * socket PATH (cosched.c) under its application's id (PSIM_APP, default "psim"), so that all
 * ranks of one copy run together. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static volatile double sink;

/* One device's next state: a few floating-point operations per unit of work. */
__attribute__((noinline)) static double device_step(int device, int units)
{
    double x = device * 0.5 + 1.0;
    for (int i = 0; i < units; i++)
        x = x * 1.0000001 + 0.5 / (x + i);
    return x;
}

/* The work of cycle c out of n: packets entering (rising), in flight, draining (falling). */
static int load(int c, int n)
{
    int ramp = n / 4 > 0 ? n / 4 : 1;
    if (c < ramp)
        return 25 + 75 * c / ramp;
    if (c >= n - ramp)
        return 25 + 75 * (n - c) / ramp;
    return 100;
}

__attribute__((noinline)) static void simulate_cycle(int rank, int devices, int c, int n, int work)
{
    int units = work * load(c, n) / 100 / devices;
    double s = 0;
    for (int d = 0; d < devices; d++)
        s += device_step(rank * devices + d, units);
    sink = s;
}

__attribute__((noinline)) static void cycle_barrier(void)
{
    MPI_Barrier(MPI_COMM_WORLD);
}

static void register_with_cosched(void)
{
    const char *path = getenv("PSIM_COSCHED");
    if (!path || !*path)
        return;
    const char *app = getenv("PSIM_APP");
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    strncpy(a.sun_path, path, sizeof a.sun_path - 1);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        perror("psim: co-scheduler");
        exit(1);
    }
    char line[128];
    int n = snprintf(line, sizeof line, "%s %d\n", app && *app ? app : "psim", (int)getpid());
    if (write(fd, line, (size_t)n) != n)
        perror("psim: co-scheduler");
    char ok;
    (void)!read(fd, &ok, 1); /* the co-scheduler answers once it has the process */
    close(fd);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    int cycles = argc > 1 ? atoi(argv[1]) : 400;
    int work = argc > 2 ? atoi(argv[2]) : 20000;
    if (cycles < 1 || work < 1) {
        if (rank == 0)
            fprintf(stderr, "usage: mpirun -np N psim [CYCLES] [WORK]\n");
        MPI_Finalize();
        return 2;
    }
    register_with_cosched();
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int c = 0; c < cycles; c++) {
        simulate_cycle(rank, 8, c, cycles, work);
        cycle_barrier();
    }
    double t1 = MPI_Wtime();
    if (rank == 0)
        printf("psim: %d ranks, %d cycles in %.3f s (%.3f ms per cycle)\n", nranks, cycles,
               t1 - t0, (t1 - t0) * 1e3 / cycles);
    MPI_Finalize();
    return 0;
}
