/* Conway's Game of Life on a torus, the TAU paper's application at small scale: the grid's rows
 * are split across MPI ranks, each step exchanges halo rows with the neighbours above and below
 * (MPI_Irecv/MPI_Isend/MPI_Waitall) and counts the population (MPI_Allreduce), and each rank's
 * rows are updated by worker threads that meet at a barrier.
 *
 *   mpirun -np 4 life [STEPS] [SIZE] [THREADS]      defaults: 50 steps, 64x64, 2 threads
 *
 * Per step each rank sends one row of SIZE bytes to each neighbour: with P ranks and k steps,
 * rank r sends k messages to r-1 and k to r+1 (mod P), 2k messages if P = 2. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int size = 64, steps = 50, nthreads = 2;
static int rank, nranks, rows;          /* rows owned by this rank */
static unsigned char *cur, *nxt;        /* (rows + 2) x size, rows 0 and rows+1 are halos */
static pthread_barrier_t step_start, step_done;
static volatile int finished;

static int neighbours(const unsigned char *g, int i, int j)
{
    int n = 0;
    for (int di = -1; di <= 1; di++)
        for (int dj = -1; dj <= 1; dj++)
            if (di || dj)
                n += g[(i + di) * size + (j + dj + size) % size];
    return n;
}

static void update_rows(int lo, int hi)
{
    for (int i = lo; i < hi; i++)
        for (int j = 0; j < size; j++) {
            int n = neighbours(cur, i, j), alive = cur[i * size + j];
            nxt[i * size + j] = n == 3 || (alive && n == 2);
        }
}

static void *life_worker(void *arg)
{
    int id = (int)(long)arg;
    int per = rows / nthreads, lo = 1 + id * per, hi = id == nthreads - 1 ? rows + 1 : lo + per;
    for (;;) {
        pthread_barrier_wait(&step_start);
        if (finished)
            return NULL;
        update_rows(lo, hi);
        pthread_barrier_wait(&step_done);
    }
}

static void exchange_halos(void)
{
    int up = (rank - 1 + nranks) % nranks, down = (rank + 1) % nranks;
    MPI_Request req[4];
    MPI_Irecv(cur, size, MPI_UNSIGNED_CHAR, up, 1, MPI_COMM_WORLD, &req[0]);
    MPI_Irecv(cur + (rows + 1) * size, size, MPI_UNSIGNED_CHAR, down, 0, MPI_COMM_WORLD, &req[1]);
    MPI_Isend(cur + size, size, MPI_UNSIGNED_CHAR, up, 0, MPI_COMM_WORLD, &req[2]);
    MPI_Isend(cur + rows * size, size, MPI_UNSIGNED_CHAR, down, 1, MPI_COMM_WORLD, &req[3]);
    MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
}

static long population(void)
{
    long mine = 0, all = 0;
    for (int i = 1; i <= rows; i++)
        for (int j = 0; j < size; j++)
            mine += cur[i * size + j];
    MPI_Allreduce(&mine, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    return all;
}

static void seed(void)
{
    /* a glider per 16x16 block and an R-pentomino in the middle, the same on any rank count */
    for (int i = 1; i <= rows; i++) {
        int gi = rank * (size / nranks) + i - 1;
        for (int j = 0; j < size; j++) {
            int bi = gi % 16, bj = j % 16;
            int glider = (bi == 1 && bj == 2) || (bi == 2 && bj == 3) || (bi == 3 && bj >= 1 && bj <= 3);
            cur[i * size + j] = (unsigned char)glider;
        }
    }
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (argc > 1)
        steps = atoi(argv[1]);
    if (argc > 2)
        size = atoi(argv[2]);
    if (argc > 3)
        nthreads = atoi(argv[3]);
    if (steps < 1 || size < 4 || size % nranks || nthreads < 1 || size / nranks < nthreads) {
        if (rank == 0)
            fprintf(stderr, "usage: mpirun -np P life [STEPS] [SIZE, a multiple of P] [THREADS]\n");
        MPI_Finalize();
        return 2;
    }
    rows = size / nranks;
    cur = calloc((size_t)(rows + 2) * size, 1);
    nxt = calloc((size_t)(rows + 2) * size, 1);
    seed();
    pthread_barrier_init(&step_start, NULL, (unsigned)nthreads + 1);
    pthread_barrier_init(&step_done, NULL, (unsigned)nthreads + 1);
    pthread_t th[64];
    for (long k = 0; k < nthreads && k < 64; k++)
        pthread_create(&th[k], NULL, life_worker, (void *)k);
    long pop = 0;
    for (int s = 0; s < steps; s++) {
        exchange_halos();
        pthread_barrier_wait(&step_start);
        pthread_barrier_wait(&step_done);
        unsigned char *t = cur;
        cur = nxt;
        nxt = t;
        pop = population();
    }
    finished = 1;
    pthread_barrier_wait(&step_start);
    for (int k = 0; k < nthreads && k < 64; k++)
        pthread_join(th[k], NULL);
    if (rank == 0)
        printf("life: %d ranks x %d threads, %dx%d, %d steps, population %ld\n", nranks, nthreads,
               size, size, steps, pop);
    free(cur);
    free(nxt);
    MPI_Finalize();
    return 0;
}
