/* One parallel region started from two call paths: a() starts it twice, b() once, each time a
 * team of 3 whose threads call work() once. The same pool threads serve every team: each of
 * the 3 threads runs work() under main => a => team twice and under main => b => team once. */
#include <omp.h>
#include <stdio.h>

static int calls;

__attribute__((noinline)) void work(void)
{
#pragma omp atomic
    calls++;
}

__attribute__((noinline)) void team(void)
{
#pragma omp parallel num_threads(3) /* TEAM */
    work();
}

__attribute__((noinline)) void a(void)
{
    team();
}

__attribute__((noinline)) void b(void)
{
    team();
}

int main(void)
{
    a();
    b();
    a();
    printf("work calls %d (expected 9)\n", calls);
    return calls != 9;
}
