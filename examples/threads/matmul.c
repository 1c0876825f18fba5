/* Threaded matrix multiply, Paradyn's Table 3 program at small scale: C = A x B for N x N
 * matrices of doubles, rows split among threads; innerp() is the inner product of a row and a
 * column, the most frequently called function (N*N calls per multiplication).
 *
 *   matmul [THREADS] [N] [REPEATS]      defaults: 4 threads, 200, 2 repeats
 * Measure innerp's CPU time per call with a filter file holding `cputime innerp`. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static int n = 200, nthreads = 4, repeats = 2;
static double *a, *b, *c;

double innerp(const double *row, const double *matrix, int col)
{
    double s = 0;
    for (int k = 0; k < n; k++)
        s += row[k] * matrix[k * n + col];
    return s;
}

static void *multiply_rows(void *arg)
{
    int id = (int)(long)arg;
    for (int i = id; i < n; i += nthreads)
        for (int j = 0; j < n; j++)
            c[i * n + j] = innerp(&a[i * n], b, j);
    return NULL;
}

static void multiply(void)
{
    pthread_t th[64];
    for (long t = 0; t < nthreads; t++)
        pthread_create(&th[t], NULL, multiply_rows, (void *)t);
    for (int t = 0; t < nthreads; t++)
        pthread_join(th[t], NULL);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        nthreads = atoi(argv[1]);
    if (argc > 2)
        n = atoi(argv[2]);
    if (argc > 3)
        repeats = atoi(argv[3]);
    if (nthreads < 1 || nthreads > 64 || n < 1 || repeats < 1) {
        fprintf(stderr, "usage: matmul [THREADS 1-64] [N] [REPEATS]\n");
        return 2;
    }
    a = malloc(sizeof *a * n * n);
    b = malloc(sizeof *b * n * n);
    c = malloc(sizeof *c * n * n);
    for (int i = 0; i < n * n; i++) {
        a[i] = (i % 7) * 0.5;
        b[i] = (i % 5) * 0.25;
    }
    for (int r = 0; r < repeats; r++)
        multiply();
    double trace = 0;
    for (int i = 0; i < n; i++)
        trace += c[i * n + i];
    printf("matmul: %d threads, %dx%d, %d repeats, trace %.3f\n", nthreads, n, n, repeats, trace);
    free(a);
    free(b);
    free(c);
    return 0;
}
