// Sample for t_dwarf_line / dwarf_line_check.sh: functions in this file and template
// instantiations from dwarf_sample/tmpl.h. Build e.g. g++ -g -O0 t_dwarf_sample.cpp (DWARF 5)
// and with -gdwarf-4; the checks compare every function symbol with addr2line.
#include "dwarf_sample/tmpl.h"

#include <cstdio>
#include <vector>

namespace {

int local_helper(int x)
{
    return x + 7;
}

}  // namespace

static double scale(double v)
{
    return v * 1.5;
}

int sample_sum(int n)
{
    std::vector<int> v;
    for (int i = 0; i < n; i++)
        v.push_back(local_helper(i));
    return plx_sample::accumulate(v.data(), (int)v.size());
}

int main(int argc, char **argv)
{
    (void)argv;
    double d[3] = {1.0, 2.0, scale(argc)};
    plx_sample::Box<long> b(argc);
    std::printf("%d %g %ld %d\n", sample_sum(argc + 3), plx_sample::accumulate(d, 3), b.twice(),
                plx_sample::header_inline(argc));
    return 0;
}
