// Exceptions thrown from functions inlined into the function that catches them: outer catches
// what leaf throws through in2 and in1 (both inlined into outer by an optimising compiler), and
// catcher_inl (inlined into outer) catches what leaf throws through mid, in1 and in2. After each
// catch, the calls that follow are children of the function that made them.
#include <cstdio>
#include <stdexcept>

static int g;

void leaf(int i)
{
    g++;
    if (i % 3 == 0)
        throw std::runtime_error("x");
}
static inline void in2(int i)
{
    g += 2;
    leaf(i);
    g--;
}
static inline void in1(int i)
{
    in2(i);
    leaf(i + 1);
}
void mid(int i)
{
    in1(i);
    g *= 1;
}
void after(int i) { g += i; }
static inline void catcher_inl(int i)
{
    try {
        mid(i);
    } catch (const std::exception &) {
        after(i);
    }
    after(i);
}
int outer(int n)
{
    for (int i = 0; i < n; i++) {
        try {
            in1(i);
        } catch (const std::exception &) {
            after(-i);
        }
        catcher_inl(i);
        after(i);
    }
    return g;
}
int main()
{
    std::printf("%d\n", outer(9));
    return 0;
}
