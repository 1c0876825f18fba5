/* Templates and inline functions defined in a header in a subdirectory: their code belongs to
 * this file in the line table, not to the .cpp that instantiates them (t_dwarf_line). */
#ifndef PLX_DWARF_SAMPLE_TMPL_H
#define PLX_DWARF_SAMPLE_TMPL_H

namespace plx_sample {

template <typename T>
T accumulate(const T *v, int n)
{
    T s = T();
    for (int i = 0; i < n; i++)
        s += v[i];
    return s;
}

template <typename T>
struct Box {
    T value;
    explicit Box(T v) : value(v) {}
    T twice() const
    {
        return value + value;
    }
};

inline int header_inline(int x)
{
    return x * 3 + 1;
}

}  // namespace plx_sample

#endif
