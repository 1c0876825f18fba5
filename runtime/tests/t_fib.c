/* fib(20) makes 21891 calls of fib. */
#include <stdio.h>
#include <stdlib.h>
int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 20;
    printf("fib(%d) = %d\n", n, fib(n));
    return 0;
}
