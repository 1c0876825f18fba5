// C++ functions for --probe by qualified name, built with a plain g++ or clang++ -O2: main calls
// ns::Solver::step N times (argv[1]) and twice<int> 2N times; step calls twice<long> once.
#include <cstdio>
#include <cstdlib>

template <typename T> __attribute__((noinline)) T twice(T x)
{
    T r = 0;
    for (int i = 0; i < 2; i++) { // long enough to probe: more than the 5 bytes of a jump
        asm volatile("" : "+r"(r));
        r += x;
    }
    return r;
}

namespace ns {
struct Solver {
    long total = 0;
    __attribute__((noinline)) void step(int i);
};

void Solver::step(int i)
{
    asm volatile("" ::: "memory");
    total += twice<long>(i);
}
} // namespace ns

int main(int argc, char **argv)
{
    int n = argc > 1 ? std::atoi(argv[1]) : 10;
    ns::Solver s;
    int acc = 0;
    for (int i = 0; i < n; i++) {
        s.step(i);
        acc += twice<int>(i) + twice<int>(1);
    }
    std::printf("%ld %d\n", s.total, acc);
    return 0;
}
