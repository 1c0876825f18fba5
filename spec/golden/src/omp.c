/* Golden OpenMP experiment: one parallel region of 2 threads (libgomp) with a critical section
 * and a barrier: OmpTeams records, the omp_task subtype, region kind 7, sync kinds 7 and 8. */
#include <omp.h>

static int count;

void leaf(void)
{
}

int main(void)
{
#pragma omp parallel num_threads(2)
    {
        leaf();
#pragma omp critical
        count++;
#pragma omp barrier
    }
    return count == 2 ? 0 : 1;
}
