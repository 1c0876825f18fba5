/* A hot tiny function: N calls (argv[1]) of a function that does almost nothing, the case where
 * the runtime's own work (flushing a small trace buffer) becomes a large share of the run. */
#include <stdio.h>
#include <stdlib.h>

static volatile long sink;

__attribute__((noinline)) void tiny(long i)
{
    sink += i;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000;
    for (long i = 0; i < n; i++)
        tiny(i);
    printf("%ld\n", sink);
    return 0;
}
