/* Fills a small file system: main and one worker thread each make ROUNDS nested chains of rec()
 * DEPTH deep (DEPTH call paths per thread in a profile, 2 x DEPTH x ROUNDS events in a trace),
 * then main prints one line and exits with STATUS ("kill": raises SIGKILL instead).
 * Usage: full_disk DEPTH ROUNDS STATUS
 * Built with -DWITH_MPI, each rank does so between MPI_Init_thread and MPI_Finalize and names
 * its rank in the line. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#ifdef WITH_MPI
#include <mpi.h>
#endif

static long depth, rounds;

__attribute__((noinline)) long rec(long d)
{
    return d > 1 ? rec(d - 1) + 1 : 1;
}

void *worker(void *arg)
{
    long sum = 0;
    for (long r = 0; r < rounds; r++)
        sum += rec(depth);
    *(long *)arg = sum;
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 4)
        return 2;
#ifdef WITH_MPI
    int provided, rank;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
#endif
    depth = atol(argv[1]);
    rounds = atol(argv[2]);
    long mine = 0, theirs = 0;
    pthread_t th;
    pthread_create(&th, NULL, worker, &theirs);
    worker(&mine);
    pthread_join(th, NULL);
#ifdef WITH_MPI
    MPI_Barrier(MPI_COMM_WORLD);
    printf("full_disk: rank %d: %ld %ld\n", rank, mine, theirs);
    fflush(stdout);
    MPI_Finalize();
#else
    printf("full_disk: %ld %ld\n", mine, theirs);
#endif
    if (strcmp(argv[3], "kill") == 0) {
        fflush(stdout);
        raise(SIGKILL);
    }
    return atoi(argv[3]);
}
