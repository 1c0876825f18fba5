/* Built with plain mpicc: the target of plx attach to an MPI rank (test_probes.py).
 * mpi_attach_loop DIR N (2 ranks): rank 0 writes DIR/pid, both wait for DIR/go; then rank 0
 * calls compute() and sends 100 ints to rank 1 (tag 7) N times, rank 1 answers each with 10
 * ints (tag 8); each rank writes DIR/done<rank> and waits for DIR/quit. Rank 0 prints its own
 * counts over the window: "sent N received N computed N". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static const char *dir;

__attribute__((noinline)) double compute(int x)
{
    volatile double s = 0;
    for (int i = 0; i < 100; i++)
        s += (double)(i ^ x);
    return s;
}

static void wait_file(const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    while (access(path, F_OK) != 0)
        usleep(1000);
}

/* Written whole, then renamed: a reader never sees it empty. */
static void write_file(const char *name, long value)
{
    char path[4096], tmp[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (f) {
        fprintf(f, "%ld\n", value);
        fclose(f);
        rename(tmp, path);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 3 || size != 2)
        MPI_Abort(MPI_COMM_WORLD, 2);
    dir = argv[1];
    int n = atoi(argv[2]);
    if (rank == 0)
        write_file("pid", (long)getpid());
    wait_file("go");
    int out[100] = {0}, back[10] = {0};
    long sent = 0, received = 0, computed = 0;
    for (int i = 0; i < n; i++) {
        if (rank == 0) {
            out[0] = (int)compute(i);
            computed++;
            MPI_Send(out, 100, MPI_INT, 1, 7, MPI_COMM_WORLD);
            sent++;
            MPI_Recv(back, 10, MPI_INT, 1, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            received++;
        } else {
            MPI_Recv(out, 100, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(back, 10, MPI_INT, 0, 8, MPI_COMM_WORLD);
        }
    }
    write_file(rank == 0 ? "done0" : "done1", 1);
    wait_file("quit");
    if (rank == 0)
        printf("sent %ld received %ld computed %ld\n", sent, received, computed);
    MPI_Finalize();
    return 0;
}
