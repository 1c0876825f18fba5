// Exceptions through probed functions (plx run --probe on a plain build): step throws for
// i % 3 == 0, through solve_inner (and through each frame between when deep), caught by
// solve_outer, whose first instructions hold its call of solve_inner at -O2. After each catch
// the calls go on as children of the function that made them (after). The program prints its
// own counts. With a directory as second argument (plx attach), the rounds wait for DIR/go,
// then DIR/done is made and the program waits for DIR/quit before it prints.
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <unistd.h>

int n_solve, n_step, n_caught, n_after, n_deep;

__attribute__((noinline)) void step(int i)
{
    n_step++;
    if (i % 3 == 0)
        throw std::runtime_error("step " + std::to_string(i));
}
__attribute__((noinline)) void deep(int d, int i)
{
    n_deep++;
    if (d == 0)
        step(i);
    else
        deep(d - 1, i);
    asm volatile("");
}
__attribute__((noinline)) void after(int i)
{
    n_after += i & 1;
    asm volatile("");
}
__attribute__((noinline)) void solve_inner(int i)
{
    n_solve++;
    step(i);
    deep(4, i + 1);
    asm volatile("");
}
__attribute__((noinline)) void solve_outer(int i)
{
    try {
        solve_inner(i);
    } catch (const std::exception &) {
        n_caught++;
        after(i);
    }
    after(i + 1);
}
static void wait_for(const std::string &path)
{
    while (access(path.c_str(), F_OK) != 0)
        usleep(1000);
}
int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 30;
    std::string dir = argc > 2 ? argv[2] : "";
    if (!dir.empty())
        wait_for(dir + "/go");
    for (int i = 0; i < n; i++)
        solve_outer(i);
    if (!dir.empty()) {
        std::fclose(std::fopen((dir + "/done").c_str(), "w"));
        wait_for(dir + "/quit");
    }
    std::printf("solve %d step %d deep %d caught %d\n", n_solve, n_step, n_deep, n_caught);
    return 0;
}
