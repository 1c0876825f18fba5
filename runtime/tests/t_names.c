/* names.c alone: the qualified name a filter glob is matched against (a function template's
 * return type left out, operators and nested groups kept whole) and the deleting destructor's
 * mangled form. Exit status 0 when every check holds. */
#include "../src/core/plx_internal.h"

#include <stdio.h>
#include <string.h>

static int failures;

static void qualified(const char *name, const char *expected)
{
    const char *got = plx_name_qualified(name);
    if (strcmp(got, expected) != 0) {
        fprintf(stderr, "'%s': got '%s', expected '%s'\n", name, got, expected);
        failures++;
    }
}

static void deleting(const char *mangled, int expected)
{
    if (plx_name_is_deleting_dtor(mangled) != expected) {
        fprintf(stderr, "'%s': deleting destructor should be %d\n", mangled, expected);
        failures++;
    }
}

int main(void)
{
    qualified("main", "main");
    qualified("int twice<int>(int)", "twice<int>(int)");
    qualified("unsigned long twice<unsigned long>(unsigned long)",
              "twice<unsigned long>(unsigned long)");
    qualified("std::vector<int, std::allocator<int> >::push_back(int const&)",
              "std::vector<int, std::allocator<int> >::push_back(int const&)");
    qualified("void std::vector<int, std::allocator<int> >::_M_realloc_insert<int const&>("
              "__gnu_cxx::__normal_iterator<int*, std::vector<int, std::allocator<int> > >, "
              "int const&)",
              "std::vector<int, std::allocator<int> >::_M_realloc_insert<int const&>("
              "__gnu_cxx::__normal_iterator<int*, std::vector<int, std::allocator<int> > >, "
              "int const&)");
    qualified("int* std::__copy_move<false, true>::__copy_m<int>(int const*, int const*, int*)",
              "std::__copy_move<false, true>::__copy_m<int>(int const*, int const*, int*)");
    qualified("std::function<void (int)> make<int>()", "make<int>()");
    qualified("(anonymous namespace)::helper(int)", "(anonymous namespace)::helper(int)");
    qualified("void (anonymous namespace)::helper<int>(int)", "(anonymous namespace)::helper<int>(int)");
    qualified("operator new(unsigned long)", "operator new(unsigned long)");
    qualified("operator delete(void*, unsigned long)", "operator delete(void*, unsigned long)");
    qualified("Meters::operator unsigned long() const", "Meters::operator unsigned long() const");
    qualified("bool operator< <int>(Box<int> const&, Box<int> const&)",
              "operator< <int>(Box<int> const&, Box<int> const&)");
    qualified("Box<int>::operator()(int) const", "Box<int>::operator()(int) const");
    qualified("main::{lambda(int)#1}::operator()(int) const",
              "main::{lambda(int)#1}::operator()(int) const");
    qualified("decltype ((({parm#1}*(2)))) twice<int>(int)", "twice<int>(int)");
    qualified("Square::~Square()", "Square::~Square()");
    qualified("0x401136", "0x401136");

    deleting("_ZN6SquareD0Ev", 1);
    deleting("_ZN3BoxIiED0Ev", 1);
    deleting("_ZN6SquareD0Ev.cold", 1);
    deleting("_ZN6SquareD1Ev", 0);
    deleting("_ZN6SquareD2Ev", 0);
    deleting("main", 0);
    deleting(NULL, 0);
    return failures != 0;
}
