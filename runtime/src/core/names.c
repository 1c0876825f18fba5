/* What a filter glob is matched against: a function's qualified name, without the return type
 * that a demangled function template's name begins with ("int twice<int>(int)" is matched as
 * "twice<int>(int)"), and whether a symbol is a deleting destructor. */
#include "names.h"

#include <string.h>

static int starts_word(const char *start, const char *p, const char *word)
{
    size_t n = strlen(word);
    return strncmp(p, word, n) == 0 && (p == start || p[-1] == ':' || p[-1] == ' ') &&
           !(p[n] == '_' || (p[n] >= 'a' && p[n] <= 'z') || (p[n] >= 'A' && p[n] <= 'Z') ||
             (p[n] >= '0' && p[n] <= '9'));
}

/* The operator's symbol after "operator" ("()", "[]", "<<=", "->*"), skipped whole so that its
 * brackets do not count as nesting. */
static const char *skip_operator(const char *p)
{
    p += strlen("operator");
    if (strncmp(p, "()", 2) == 0 || strncmp(p, "[]", 2) == 0)
        return p + 2;
    while (*p && strchr("+-*/%^&|~!=<>,", *p))
        p++;
    return p;
}

/* Nesting is counted over <>, (), [] and {} ("{lambda(int)#1}"); "(anonymous namespace)" and
 * "decltype (...)" are nested groups, not the parameter list. The parameter list is the first
 * '(' at depth 0; the last space at depth 0 before it, outside an operator's name ("operator
 * new", "operator unsigned long"), ends the return type. */
const char *plx_name_qualified(const char *name)
{
    const char *cut = name;
    int depth = 0, in_operator = 0;
    for (const char *p = name; *p; p++) {
        if (depth == 0 && starts_word(name, p, "operator")) {
            in_operator = 1;
            p = skip_operator(p) - 1;
            continue;
        }
        switch (*p) {
        case '(':
            if (depth == 0 && strncmp(p, "(anonymous namespace)", 21) != 0 &&
                !(p - name >= 8 && strncmp(p - 8, "decltype", 8) == 0) &&
                !(p - name >= 9 && strncmp(p - 9, "decltype ", 9) == 0))
                return cut;
            depth++;
            break;
        case '<':
        case '[':
        case '{':
            depth++;
            break;
        case ')':
        case '>':
        case ']':
        case '}':
            depth -= depth > 0;
            break;
        case ' ':
            if (depth == 0 && !in_operator && p[1])
                cut = p + 1;
            break;
        default:
            break;
        }
    }
    return cut;
}

/* An Itanium deleting destructor (D0: "_ZN3FooD0Ev", maybe with a clone suffix ".cold"). It
 * calls the complete-object destructor (D1) of the same name and then operator delete, so it is
 * not measured as a call of its own: one `delete p` is one call of the class's destructor. */
int plx_name_is_deleting_dtor(const char *mangled)
{
    if (!mangled || mangled[0] != '_' || mangled[1] != 'Z')
        return 0;
    for (const char *p = strstr(mangled, "D0Ev"); p; p = strstr(p + 1, "D0Ev"))
        if (p[4] == 0 || p[4] == '.')
            return 1;
    return 0;
}
