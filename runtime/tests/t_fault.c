/* Calls work() 5 times (10000 for kill), then dies the way argv[1] says: segv, abort, kill (SIGKILL), term,
 * exit (exit(3)), _exit. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <unistd.h>
static volatile unsigned sink;
void work(void) { for (int i = 0; i < 1000; i++) sink += i; }
int main(int argc, char **argv)
{
    const char *how = argc > 1 ? argv[1] : "segv";
    int calls = strcmp(how, "kill") == 0 ? 10000 : 5; /* kill: enough to fill trace chunks */
    for (int i = 0; i < calls; i++)
        work();
    if (strcmp(how, "segv") == 0) {
        volatile int *p = (int *)(uintptr_t)16;
        return *p;
    }
    if (strcmp(how, "abort") == 0)
        abort();
    if (strcmp(how, "kill") == 0)
        raise(SIGKILL);
    if (strcmp(how, "term") == 0)
        raise(SIGTERM);
    if (strcmp(how, "exit") == 0)
        exit(3);
    if (strcmp(how, "_exit") == 0)
        _exit(4);
    return 0;
}
