/* The first image calls before_exec() twice and exec()s itself with "second"; the new image
 * (same pid) calls after_exec() three times. */
#include <string.h>
#include <unistd.h>

static volatile unsigned sink;

void before_exec(void) { sink += 1; }
void after_exec(void) { sink += 2; }

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "second") == 0) {
        for (int i = 0; i < 3; i++)
            after_exec();
        return 0;
    }
    for (int i = 0; i < 2; i++)
        before_exec();
    execl("/proc/self/exe", argv[0], "second", (char *)NULL);
    return 9;
}
