// plx::Region and plx::Phase scope guards end on every way out of a scope, exceptions included.
#include <plx.h>
#include <cstdio>
#include <stdexcept>

void inner(int i)
{
    if (i % 2)
        throw std::runtime_error("odd");
}

void guarded(int i)
{
    plx::Region r("guarded");
    inner(i);
}

void after() {}

int main()
{
    int caught = 0;
    {
        plx::Phase p("work");
        for (int i = 0; i < 6; i++) {
            try {
                guarded(i);
            } catch (const std::exception &) {
                caught++;
            }
        }
    }
    after();
    std::printf("%d\n", caught);
    return caught == 3 ? 0 : 1;
}
