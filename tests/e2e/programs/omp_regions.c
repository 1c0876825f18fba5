/* Three parallel regions of 3 threads on lines of their own (REGION_A, REGION_B, REGION_C),
 * all called from main: A twice, B and C once. A holds a schedule(static) loop of 6
 * iterations, B a single that creates 4 tasks. The TAU export test counts each region's
 * calls per thread against plx report's. */
#include <omp.h>
#include <stdio.h>

static volatile double sink;

void work(int i)
{
    double x = i;
    for (int k = 0; k < 1000; k++)
        x = x * 0.999 + 1.0;
    sink = x;
}

int main(void)
{
    for (int r = 0; r < 2; r++) {
#pragma omp parallel num_threads(3) /* REGION_A */
        {
#pragma omp for schedule(static)
            for (int i = 0; i < 6; i++)
                work(i);
        }
    }
#pragma omp parallel num_threads(3) /* REGION_B */
    {
#pragma omp single
        {
            for (int t = 0; t < 4; t++) {
#pragma omp task
                work(t);
            }
#pragma omp taskwait
        }
    }
#pragma omp parallel num_threads(3) /* REGION_C */
    work(omp_get_thread_num());
    printf("done\n");
    return 0;
}
