/* A call chain as deep as argv[1] says: main, down() nested N deep, leaf() at the bottom. */
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned sink;

void leaf(void) { sink += 1; }

int down(int depth)
{
    if (depth == 0) {
        leaf();
        return 0;
    }
    return 1 + down(depth - 1);
}

int main(int argc, char **argv)
{
    int d = down(argc > 1 ? atoi(argv[1]) : 10);
    printf("%d %u\n", d, sink);
    return 0;
}
