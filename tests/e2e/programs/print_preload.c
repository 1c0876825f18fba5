/* Prints the LD_PRELOAD it was started with (plx run must not give MPI wrappers to a program
 * that does not use MPI). */
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    const char *p = getenv("LD_PRELOAD");
    printf("LD_PRELOAD=%s\n", p ? p : "(unset)");
    return 0;
}
