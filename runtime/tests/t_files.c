/* Functions from three source files (this one, t_files_other.c, t_files.h) for file filters:
 * local_fn 4 calls, other_fn 5, other_fn2 6, header_fn 7. */
#include "t_files.h"
int other_fn(int);
int other_fn2(int);
int local_fn(int x) { return x + 1; }
int main(void)
{
    int s = 0;
    for (int i = 0; i < 4; i++) s += local_fn(i);
    for (int i = 0; i < 5; i++) s += other_fn(i);
    for (int i = 0; i < 6; i++) s += other_fn2(i);
    for (int i = 0; i < 7; i++) s += header_fn(i);
    return s > 0 ? 0 : 1;
}
