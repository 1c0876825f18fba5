/* Golden experiment "counters": a counted function with two sets switched every 2 calls, and a
 * reload of the counters rules (SIGUSR1) after 3 calls: the next counted call records epoch 1. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
int step(int i)
{
    char *p = malloc(4096);
    memset(p, i, 4096);
    int r = p[i % 4096];
    free(p);
    return r;
}
int main(void)
{
    int s = 0;
    for (int i = 0; i < 6; i++) {
        if (i == 3) { /* the runtime's reload thread reads the file again meanwhile */
            raise(SIGUSR1);
            nanosleep(&(struct timespec){0, 200000000}, 0);
        }
        s += step(i);
    }
    return s == -1;
}
