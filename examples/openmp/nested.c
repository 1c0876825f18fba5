/* Nested parallelism: an outer team of 2 threads, each starting an inner team of 2 that calls
 * leaf() once per thread: 4 calls of leaf, on 4 threads (2 of them in both teams). */
#include <omp.h>

void leaf(void)
{
}

int main(void)
{
    omp_set_max_active_levels(2);
#pragma omp parallel num_threads(2) /* OUTER */
    {
#pragma omp parallel num_threads(2) /* INNER */
        leaf();
    }
    return 0;
}
