/* Recursion 100 deep (more than a PLX_MAX_DEPTH of 16), then leaf() once more at the top. */
#include <stdio.h>

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

int main(void)
{
    int d = down(99);
    leaf();
    printf("%d %u\n", d, sink);
    return 0;
}
