/* Known call counts for filter tests: alpha 10, beta 20, gamma_one 30, gamma_two 40,
 * tiny 100000, then after() once. */
#include <stdio.h>

static volatile unsigned sink;

void alpha(void) { sink += 1; }
void beta(void) { sink += 2; }
void gamma_one(void) { sink += 3; }
void gamma_two(void) { sink += 4; }
void tiny(void) { sink += 5; }
void after(void) { sink += 6; }

int main(void)
{
    for (int i = 0; i < 10; i++) alpha();
    for (int i = 0; i < 20; i++) beta();
    for (int i = 0; i < 30; i++) gamma_one();
    for (int i = 0; i < 40; i++) gamma_two();
    for (int i = 0; i < 100000; i++) tiny();
    after();
    printf("%u\n", sink);
    return 0;
}
