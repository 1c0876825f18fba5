/* Heat diffusion on a 2-D plate, rows split among worker threads that meet at a barrier after
 * every sweep. The bundled multi-threaded example of `make demo`.
 *
 *   heat [THREADS] [SIZE] [STEPS]        defaults: 4 threads, 128x128, 300 steps */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <plx.h>

static int n = 128, steps = 300, nthreads = 4;
static double *grid, *next;
static double residuals[64];
static pthread_barrier_t barrier;

static double stencil(const double *g, int i, int j)
{
    return 0.25 * (g[(i - 1) * n + j] + g[(i + 1) * n + j] + g[i * n + j - 1] + g[i * n + j + 1]);
}

static double sweep_rows(int lo, int hi)
{
    double res = 0;
    for (int i = lo; i < hi; i++)
        for (int j = 1; j < n - 1; j++) {
            double v = stencil(grid, i, j);
            double d = v - grid[i * n + j];
            res += d * d;
            next[i * n + j] = v;
        }
    return res;
}

static void swap_grids(void)
{
    double *t = grid;
    grid = next;
    next = t;
}

static double total_residual(void)
{
    double r = 0;
    for (int k = 0; k < nthreads; k++)
        r += residuals[k];
    return r;
}

static void *worker(void *arg)
{
    int id = (int)(long)arg;
    int rows = (n - 2) / nthreads;
    int lo = 1 + id * rows, hi = id == nthreads - 1 ? n - 1 : lo + rows;
    for (int s = 0; s < steps; s++) {
        residuals[id] = sweep_rows(lo, hi);
        plx_region_begin("barrier");
        if (pthread_barrier_wait(&barrier) == PTHREAD_BARRIER_SERIAL_THREAD) {
            swap_grids();
            if (s % 50 == 0)
                plx_event("residual", total_residual());
        }
        pthread_barrier_wait(&barrier);
        plx_region_end("barrier");
    }
    return NULL;
}

static void init_plate(void)
{
    grid = calloc((size_t)n * n, sizeof *grid);
    next = calloc((size_t)n * n, sizeof *next);
    for (int j = 0; j < n; j++)
        grid[j] = next[j] = 100.0; /* the hot edge */
}

int main(int argc, char **argv)
{
    if (argc > 1)
        nthreads = atoi(argv[1]);
    if (argc > 2)
        n = atoi(argv[2]);
    if (argc > 3)
        steps = atoi(argv[3]);
    if (nthreads < 1 || nthreads > 64 || n < 8 || steps < 1) {
        fprintf(stderr, "usage: heat [THREADS 1-64] [SIZE >= 8] [STEPS >= 1]\n");
        return 2;
    }
    plx_phase_begin("setup");
    init_plate();
    pthread_barrier_init(&barrier, NULL, (unsigned)nthreads);
    plx_phase_end("setup");

    plx_phase_begin("solve");
    pthread_t th[64];
    for (long k = 0; k < nthreads; k++)
        pthread_create(&th[k], NULL, worker, (void *)k);
    for (int k = 0; k < nthreads; k++)
        pthread_join(th[k], NULL);
    plx_phase_end("solve");

    printf("heat: %d threads, %dx%d, %d steps, centre %.4f\n", nthreads, n, n, steps,
           grid[(n / 2) * n + n / 2]);
    free(grid);
    free(next);
    return 0;
}
