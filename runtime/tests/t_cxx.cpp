/* C++: templates, virtual functions, namespaces, constructors, exceptions through measured frames. */
#include <stdexcept>
#include <vector>
#include <cstdio>
template <typename T> T twice(T x) { return x + x; }
struct Shape { virtual ~Shape() {} virtual double area() const = 0; };
struct Square : Shape { double s; explicit Square(double v) : s(v) {} double area() const override { return s * s; } };
namespace geo { double total(const std::vector<Shape *> &v) { double a = 0; for (auto *s : v) a += s->area(); return a; } }
void thrower(int i) { if (i % 2) throw std::runtime_error("odd"); }
int catcher(int n) { int caught = 0; for (int i = 0; i < n; i++) { try { thrower(i); } catch (const std::exception &) { caught++; } } return caught; }
int main() {
  int a = 0; double b = 0;
  for (int i = 0; i < 7; i++) a += twice<int>(i);
  for (int i = 0; i < 3; i++) b += twice<double>(i);
  std::vector<Shape *> v{new Square(1), new Square(2)};
  double t = geo::total(v);
  for (auto *s : v) delete s;
  int c = catcher(10);
  std::printf("%d %g %g %d\n", a, b, t, c);
  return 0;
}
