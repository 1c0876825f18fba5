/* fib(20) makes 21891 calls of fib: 1 from main, 21890 recursive. */
#include <stdio.h>

int fib(int n){return n<2?n:fib(n-1)+fib(n-2);}

int main(void)
{
    printf("fib(20) = %d\n", fib(20));
    return 0;
}
