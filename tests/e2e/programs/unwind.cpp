// Frames left without their exit hook: THROWS exceptions thrown through DEPTH frames (or the
// first argument's number) of a recursive function, caught two levels up, then ordinary calls
// that must be children of the function that made them.
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

enum { THROWS = 6, DEPTH = 4 };
static int depth = DEPTH;

void dive(int k)
{
    if (k == 0)
        throw std::runtime_error("bottom");
    dive(k - 1);
}

int after(int x) { return x + 1; }

int catcher()
{
    int caught = 0;
    for (int i = 0; i < THROWS; i++) {
        try {
            dive(depth - 1);
        } catch (const std::exception &) {
            caught++;
        }
        caught = after(caught);
    }
    return caught;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        depth = std::atoi(argv[1]);
    int n = catcher();
    n = after(n);
    std::printf("%d\n", n);
    return n == 2 * THROWS + 1 ? 0 : 1;
}
