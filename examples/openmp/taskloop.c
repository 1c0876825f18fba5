/* Two taskloops run by one thread of a team of 2 (inside a single): 100 iterations in
 * num_tasks(5) tasks of 20, then a downward loop of 30 iterations (90, 87, ..., 3) with
 * grainsize(10): 3 tasks of 10. Each iteration calls body() once: 130 calls, 8 tasks. */
#include <omp.h>
#include <stdio.h>

static int hits;

__attribute__((noinline)) void body(int i)
{
    (void)i;
#pragma omp atomic
    hits++;
}

int main(void)
{
#pragma omp parallel num_threads(2)
#pragma omp single
    {
#pragma omp taskloop num_tasks(5) /* UP */
        for (int i = 0; i < 100; i++)
            body(i);
#pragma omp taskloop grainsize(10) /* DOWN */
        for (unsigned long long i = 90; i > 0; i -= 3)
            body((int)i);
    }
    printf("body calls %d (expected 130)\n", hits);
    return hits != 130;
}
