/* Calls work() 5 times (10000 times for "kill"), then ends the way argv[1] says:
 * segv, abort, exit (exit(3)), kill (raise(SIGKILL)). */
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static volatile unsigned sink;

void work(void)
{
    for (int i = 0; i < 100; i++)
        sink += i;
}

int main(int argc, char **argv)
{
    const char *how = argc > 1 ? argv[1] : "segv";
    int calls = strcmp(how, "kill") == 0 ? 10000 : 5;
    for (int i = 0; i < calls; i++)
        work();
    if (strcmp(how, "segv") == 0) {
        volatile int *p = (volatile int *)(uintptr_t)16;
        return *p;
    }
    if (strcmp(how, "abort") == 0)
        abort();
    if (strcmp(how, "exit") == 0)
        exit(3);
    if (strcmp(how, "kill") == 0)
        raise(SIGKILL);
    return 0;
}
