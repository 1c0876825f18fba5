/* A wait caused by computation nobody instrumented: built plain (gcc -O2 -g, no hooks), what
 * made the late side late is known only to call-stack sampling (plx waits --samples).
 *   waits_sampled mpi S    2 ranks: both spin S seconds of CPU in `early` and meet in an
 *                          MPI_Barrier; then both spin S/2 in `common`, and rank 1 S more in
 *                          `heavy` before it MPI_Sends to rank 0, which waits in MPI_Recv (a
 *                          late sender of about S caused by rank 1's `heavy`: its `common` is
 *                          no excess over rank 0's, its `early` came before the last
 *                          synchronisation)
 *   waits_sampled lock S   a thread spins S in `early`, takes a mutex and spins S in `heavy`
 *                          holding it; main, once the thread holds it, waits to take it (lock
 *                          contention of about S caused by the holder's `heavy`)
 *   waits_sampled omp S    (-fopenmp) two parallel regions of 2 threads: in the first thread 1
 *                          spins S in `heavy` and thread 0 waits at the region's closing
 *                          barrier, in the second thread 0 spins S in `heavy` and thread 1 waits
 *                          (each an omp_barrier of about S caused by the other thread's `heavy`
 *                          in the region; whichever thread enters a region first) */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#ifdef MPI
#include <mpi.h>
#endif

#define NOINLINE __attribute__((noinline))

static double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static volatile double sink;

NOINLINE static void spin(double seconds)
{
    double t0 = cpu_now(), x = 0;
    while (cpu_now() - t0 < seconds)
        for (int i = 0; i < 20000; i++)
            x += i * 0.5;
    sink = x;
}

/* (not tail calls: each keeps its frame) */
NOINLINE void early(double s) { spin(s); sink += 1; }
NOINLINE void heavy(double s) { spin(s); sink += 1; }
NOINLINE void common(double s) { spin(s); sink += 1; }

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t held_m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t held_c = PTHREAD_COND_INITIALIZER;
static int held;
static double seconds;

static void *holder(void *arg)
{
    (void)arg;
    early(seconds);
    pthread_mutex_lock(&lock);
    pthread_mutex_lock(&held_m);
    held = 1;
    pthread_cond_signal(&held_c);
    pthread_mutex_unlock(&held_m);
    heavy(seconds);
    pthread_mutex_unlock(&lock);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s mpi|lock|omp SECONDS\n", argv[0]);
        return 2;
    }
    seconds = atof(argv[2]);
    if (strcmp(argv[1], "lock") == 0) {
        pthread_t t;
        pthread_create(&t, NULL, holder, NULL);
        pthread_mutex_lock(&held_m);
        while (!held)
            pthread_cond_wait(&held_c, &held_m);
        pthread_mutex_unlock(&held_m);
        pthread_mutex_lock(&lock);
        pthread_mutex_unlock(&lock);
        pthread_join(t, NULL);
        return 0;
    }
#ifdef _OPENMP
    if (strcmp(argv[1], "omp") == 0) {
        for (int late = 1; late >= 0; late--) {
#pragma omp parallel num_threads(2)
            if (omp_get_thread_num() == late)
                heavy(seconds);
        }
        return 0;
    }
#endif
#ifdef MPI
    int rank, x = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    early(seconds);
    MPI_Barrier(MPI_COMM_WORLD);
    common(seconds / 2);
    if (rank == 1) {
        heavy(seconds);
        MPI_Send(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
    } else if (rank == 0) {
        MPI_Recv(&x, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Finalize();
#endif
    return 0;
}
