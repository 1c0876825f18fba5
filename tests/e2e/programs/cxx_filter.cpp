// C++ names against filter globs: std:: templates whose demangled names begin with their return
// type (void std::vector<int>::_M_realloc_insert<...>), a function template (int twice<int>(int)),
// and objects destroyed by `delete` (GCC's deleting destructor D0 calls the complete one, D1).
#include <cstdio>
#include <vector>

template <typename T> T twice(T x) { return x + x; }

struct Node {
    int v;
    explicit Node(int x) : v(x) {}
    virtual ~Node() {}
};
struct Leaf : Node {
    explicit Leaf(int x) : Node(x) {}
    ~Leaf() override {}
};

int main()
{
    std::vector<int> v;
    for (int i = 0; i < 100; i++)
        v.push_back(twice<int>(i));
    long sum = 0;
    for (int x : v)
        sum += x;
    for (int i = 0; i < 4; i++) {
        Node *n = new Leaf(i);
        sum += n->v;
        delete n;
    }
    {
        Leaf local(1);
        sum += local.v;
    }
    std::printf("%ld\n", sum);
    return 0;
}
