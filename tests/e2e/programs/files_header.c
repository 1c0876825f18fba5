/* main and local_fn here, header_fn from files_header.h, other_one/other_two in files_other.c. */
#include <stdio.h>

#include "files_header.h"

void other_one(void);
void other_two(void);

static volatile int sink;

void local_fn(void) { sink += 1; }

int main(void)
{
    for (int i = 0; i < 4; i++) local_fn();
    for (int i = 0; i < 7; i++) sink += header_fn(i);
    for (int i = 0; i < 5; i++) other_one();
    for (int i = 0; i < 6; i++) other_two();
    printf("%d\n", sink);
    return 0;
}
