/* Selective instrumentation: the filter file's include/exclude rules and the throttle.
 *
 * Format (docs/formats/filter.md): one rule a line, '#' starts a comment.
 *   exclude GLOB | include GLOB             by function name (demangled), e.g. exclude std::*
 *   exclude file GLOB | include file GLOB   by source file
 *   exclude class P[,P...] | include class P[,P...]   Java classes by name prefix (java/lang
 *                                           or java.lang), the paper's exclude=java/lang,sun
 *   throttle CALLS USEC                     stop measuring a function after CALLS calls in one
 *                                           callpath when they averaged under USEC microseconds
 *   cputime GLOB | cputime file GLOB        also measure these functions' CPU time per call
 * The last matching rule decides; with no match a function is measured, unless the first rule
 * is an include, in which case only what is included is measured. */
#include "plx_internal.h"

#include <ctype.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_RULES 1024

struct rule {
    int include;   /* 1 include, 0 exclude, 2 cputime */
    int by_file;   /* 1 by source file, 2 Java class prefixes (comma separated in glob) */
    char *glob;
};

static struct rule rules[MAX_RULES];
static int nrules;
static int default_exclude;
static int saw_measure_rule; /* an include/exclude rule came before */

int plx_glob_match(const char *pat, const char *s)
{
    return fnmatch(pat, s, 0) == 0;
}

static char *next_word(char **p)
{
    char *s = *p;
    while (*s && isspace((unsigned char)*s))
        s++;
    if (!*s)
        return NULL;
    char *w = s;
    while (*s && !isspace((unsigned char)*s))
        s++;
    if (*s)
        *s++ = 0;
    *p = s;
    return w;
}

/* Returns the number of bad lines (each reported); rules from good lines are kept. */
int plx_filter_load(const char *path)
{
    FILE *f = fopen(path, "re");
    if (!f) {
        plx_warn("cannot read filter file %s", path);
        return 1;
    }
    char line[4096];
    int lineno = 0, bad = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = 0;
        char *p = line;
        char *kw = next_word(&p);
        if (!kw)
            continue;
        char *a = next_word(&p), *b = next_word(&p), *extra = next_word(&p);
        if (strcmp(kw, "include") == 0 || strcmp(kw, "exclude") == 0 || strcmp(kw, "cputime") == 0) {
            int by_file = a && strcmp(a, "file") == 0 ? 1 : a && strcmp(a, "class") == 0 ? 2 : 0;
            char *glob = by_file ? b : a;
            if (!glob || (by_file ? extra != NULL : b != NULL) || nrules >= MAX_RULES) {
                plx_warn("%s:%d: expected '%s GLOB' or '%s file GLOB'", path, lineno, kw, kw);
                bad++;
                continue;
            }
            if (by_file == 2) { /* class rules decide classes only: no include-list default */
                if (kw[0] == 'c') {
                    plx_warn("%s:%d: expected 'cputime GLOB' or 'cputime file GLOB'", path, lineno);
                    bad++;
                    continue;
                }
                rules[nrules].include = kw[0] == 'i';
                rules[nrules].by_file = 2;
                rules[nrules].glob = strdup(glob);
                for (char *c = rules[nrules].glob; *c; c++)
                    if (*c == '.')
                        *c = '/';
                nrules++;
                continue;
            }
            if (kw[0] == 'i' && !saw_measure_rule)
                default_exclude = 1;
            if (kw[0] != 'c')
                saw_measure_rule = 1;
            rules[nrules].include = kw[0] == 'i' ? 1 : kw[0] == 'e' ? 0 : 2;
            rules[nrules].by_file = by_file;
            if (by_file)
                plx_symbols_want_files = 1;
            rules[nrules].glob = strdup(glob);
            nrules++;
        } else if (strcmp(kw, "throttle") == 0) {
            char *e1 = NULL, *e2 = NULL;
            unsigned long long calls = a ? strtoull(a, &e1, 10) : 0;
            double usec = b ? strtod(b, &e2) : 0;
            if (!a || !b || extra || *e1 || *e2 || calls == 0 || usec <= 0) {
                plx_warn("%s:%d: expected 'throttle CALLS USEC' (e.g. throttle 100000 10)", path,
                         lineno);
                bad++;
                continue;
            }
            plx_throttle_calls = calls;
            plx_throttle_ticks = (uint64_t)(usec * 1e-6 * plx_clock_rate());
        } else {
            plx_warn("%s:%d: unknown rule '%s' (expected include, exclude or throttle)", path,
                     lineno, kw);
            bad++;
        }
    }
    fclose(f);
    return bad;
}

static int matches(const struct rule *r, const char *name, const char *file)
{
    if (r->by_file == 2)
        return 0;
    const char *subject = r->by_file ? file : name;
    return subject && plx_glob_match(r->glob, subject);
}

int plx_filter_excludes(const char *name, const char *file)
{
    int excluded = default_exclude;
    for (int i = 0; i < nrules; i++)
        if (rules[i].include != 2 && matches(&rules[i], name, file))
            excluded = !rules[i].include;
    return excluded;
}

int plx_filter_cputime(const char *name, const char *file)
{
    for (int i = 0; i < nrules; i++)
        if (rules[i].include == 2 && matches(&rules[i], name, file))
            return 1;
    return 0;
}

/* A Java class (internal name a/b/C) against the class rules: 1 included, 0 excluded, -1 when no
 * rule names it. A prefix matches at a package or class boundary (java/lang matches
 * java/lang/String and java/lang/ref/Cleaner, not java/language). */
int plx_filter_class(const char *internal_name)
{
    int decision = -1;
    for (int i = 0; i < nrules; i++) {
        if (rules[i].by_file != 2)
            continue;
        for (const char *p = rules[i].glob; *p;) {
            size_t n = strcspn(p, ",");
            if (n && strncmp(internal_name, p, n) == 0 &&
                (p[n - 1] == '/' || internal_name[n] == 0 || internal_name[n] == '/' ||
                 internal_name[n] == '$'))
                decision = rules[i].include;
            p += n + (p[n] == ',');
        }
    }
    return decision;
}
