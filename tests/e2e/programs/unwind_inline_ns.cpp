// Exceptions through inlined C++ members in a namespace: Box<int>::get (and boom, which may be
// inlined too) thrown through and caught by driver, which they are inlined into; Box<int>::safe
// (inlined into driver) catches what get throws through. The compilers put such functions in
// namespace and class entries of the debug information.
#include <cstdio>
#include <stdexcept>

namespace ns {
static int g;
void boom(int i)
{
    g++;
    if (i % 2 == 0)
        throw std::out_of_range("x");
}
template <typename T> struct Box {
    T v;
    inline T get(int i)
    {
        g++;
        boom(i);
        return v;
    }
    inline T safe(int i)
    {
        try {
            return get(i);
        } catch (const std::out_of_range &) {
            note(i);
            return T();
        }
    }
    void note(int i);
};
template <typename T> void Box<T>::note(int i)
{
    g += i;
}
} // namespace ns

int driver(int n)
{
    ns::Box<int> b{1};
    int s = 0;
    for (int i = 0; i < n; i++) {
        try {
            s += b.get(i);
        } catch (const std::exception &) {
            ns::boom(1);
        }
        s += b.safe(i);
    }
    return s + ns::g;
}
int main()
{
    std::printf("%d\n", driver(8));
    return 0;
}
