/* Two source files: main.c defines main and here_one/here_two, other.c other_one/other_two. */
#include <stdio.h>

void other_one(void);
void other_two(void);

static volatile unsigned sink;

void here_one(void) { sink += 1; }
void here_two(void) { sink += 2; }

int main(void)
{
    for (int i = 0; i < 3; i++) here_one();
    for (int i = 0; i < 4; i++) here_two();
    for (int i = 0; i < 5; i++) other_one();
    for (int i = 0; i < 6; i++) other_two();
    printf("%u\n", sink);
    return 0;
}
