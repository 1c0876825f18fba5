// C++: templates, a namespace function, virtual methods, exceptions through measured frames.
#include <cstdio>
#include <stdexcept>

template <typename T> T twice(T x) { return x + x; }

namespace geo {
double area_sum(double a, double b) { return a + b; }
}

struct Shape {
    virtual ~Shape() {}
    virtual double area() const = 0;
};
struct Square : Shape {
    double s;
    explicit Square(double v) : s(v) {}
    double area() const override { return s * s; }
};
struct Circle : Shape {
    double r;
    explicit Circle(double v) : r(v) {}
    double area() const override { return 3.0 * r * r; }
};

void thrower(int i)
{
    if (i % 2)
        throw std::runtime_error("odd");
}

int catcher(int n)
{
    int caught = 0;
    for (int i = 0; i < n; i++) {
        try {
            thrower(i);
        } catch (const std::exception &) {
            caught++;
        }
    }
    return caught;
}

int main()
{
    int a = 0;
    double b = 0;
    for (int i = 0; i < 7; i++)
        a += twice<int>(i);
    for (int i = 0; i < 3; i++)
        b += twice<double>(i);
    Square sq(2);
    Circle ci(1);
    const Shape *shapes[] = {&sq, &ci, &sq, &ci, &ci};
    double total = 0;
    for (const Shape *s : shapes)
        total = geo::area_sum(total, s->area());
    int caught = catcher(10);
    std::printf("%d %g %g %d\n", a, b, total, caught);
    return caught == 5 ? 0 : 1;
}
