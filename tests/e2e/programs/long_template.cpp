/* One function template instantiated with a deeply nested type: its demangled name runs to
 * hundreds of characters. main calls it 3 times. */
#include <map>
#include <string>
#include <utility>
#include <vector>

template <class T> struct Box {
    T value;
};

using Inner = std::map<std::string, std::vector<std::pair<std::string, Box<std::vector<int>>>>>;
using Outer = std::map<std::string, std::vector<Box<Inner>>>;

template <class T> __attribute__((noinline)) long weigh(const T &t)
{
    return (long)t.size();
}

int main()
{
    Outer o;
    o["a"].push_back(Box<Inner>{});
    long sum = 0;
    for (int i = 0; i < 3; i++)
        sum += weigh(o);
    return sum == 3 ? 0 : 1;
}
