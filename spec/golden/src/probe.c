/* The probe golden experiment: built with plain cc -O2, run with --probe 'twice,tiny': twice is
 * probed (ProbeSite, ProbeChange, its calls measured), tiny (3 bytes) skipped with its reason. */
#include <stdio.h>

__attribute__((noinline)) long twice(long x)
{
    __asm__ volatile("" ::: "memory");
    return x * 2 + (x >> 3);
}

__attribute__((noinline)) int tiny(int x)
{
    return x;
}

int main(void)
{
    long s = 0;
    for (int i = 0; i < 3; i++)
        s += twice(i) + tiny(i);
    printf("%ld\n", s);
    return 0;
}
