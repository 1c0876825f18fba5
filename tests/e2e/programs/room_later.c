/* Waits for one byte on standard input (the test frees room on the disk meanwhile), then calls
 * work() CALLS times and prints one line. Usage: room_later CALLS */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((noinline)) void work(long i)
{
    __asm__ volatile("" ::"r"(i));
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    long n = atol(argv[1]);
    char c;
    if (read(0, &c, 1) != 1)
        return 1;
    for (long i = 0; i < n; i++)
        work(i);
    printf("room_later: %ld\n", n);
    return 0;
}
