/* Several functions with loops and recursion, for comparing call counts with callgrind. */
#include <stdio.h>

static volatile unsigned long sink;

void leaf(int i) { sink += (unsigned long)i; }

void a(int n)
{
    for (int i = 0; i < n; i++)
        leaf(i);
}

void b(int n)
{
    for (int i = 0; i < n; i++)
        if (i % 3 == 0)
            a(i % 7);
}

int c(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++) {
        b(i);
        s += i;
    }
    return s;
}

int ack(int m, int n)
{
    if (m == 0)
        return n + 1;
    if (n == 0)
        return ack(m - 1, 1);
    return ack(m - 1, ack(m, n - 1));
}

unsigned long collatz_steps(unsigned long x)
{
    return x == 1 ? 0 : 1 + collatz_steps(x % 2 ? 3 * x + 1 : x / 2);
}

int main(void)
{
    int s = c(40);
    for (int i = 0; i < 13; i++)
        a(i);
    int k = ack(2, 3);
    unsigned long t = 0;
    for (unsigned long x = 1; x <= 30; x++)
        t += collatz_steps(x);
    printf("%d %d %lu %lu\n", s, k, t, sink);
    return 0;
}
