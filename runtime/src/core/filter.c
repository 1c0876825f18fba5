/* Selective instrumentation: the rules of the filter file (grammar: filter_parse.c,
 * docs/formats/filter.md) and the questions asked of them. The last matching include/exclude
 * rule decides; with no match a function is measured, unless the first include/exclude rule is
 * an include, in which case only what is included is measured. */
#include "counters.h"
#include "filter_parse.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rule {
    int kind; /* PLX_FILTER_EXCLUDE, _INCLUDE or _CPUTIME */
    int by_file;
    char *glob;
    int by_class; /* Java class prefixes, '/'-separated, in glob (decides classes only) */
};

static struct rule *rules;
static int nrules, cap_rules;
static int default_exclude;
static int saw_measure_rule; /* an include/exclude rule came before */
static char *text;           /* the file as read, for the Filter record */

int plx_glob_match(const char *pat, const char *s)
{
    return fnmatch(pat, s, 0) == 0;
}

static void add_rule(void *ctx, const struct plx_filter_rule *r)
{
    (void)ctx;
    if (r->kind == PLX_FILTER_COUNTERS) {
        plx_counters_add_rule(r);
        return;
    }
    if (r->kind == PLX_FILTER_THROTTLE) {
        plx_throttle_calls = r->calls;
        plx_throttle_ticks = (uint64_t)(r->usec * 1e-6 * plx_clock_rate());
        return;
    }
    if (nrules == cap_rules) {
        int cap = cap_rules ? 2 * cap_rules : 64;
        struct rule *more = realloc(rules, (size_t)cap * sizeof *rules);
        if (!more) {
            plx_warn("out of memory for filter rules; line %u and after ignored", r->line);
            return;
        }
        rules = more;
        cap_rules = cap;
    }
    char *glob = strdup(r->glob);
    if (!glob)
        return;
    if (r->by_class) { /* classes only: no include-list default for functions */
        for (char *c = glob; *c; c++)
            if (*c == '.')
                *c = '/';
        rules[nrules++] = (struct rule){r->kind, 0, glob, 1};
        return;
    }
    if (r->kind == PLX_FILTER_INCLUDE && !saw_measure_rule)
        default_exclude = 1;
    if (r->kind != PLX_FILTER_CPUTIME)
        saw_measure_rule = 1;
    if (r->by_file)
        plx_symbols_want_files = 1;
    rules[nrules++] = (struct rule){r->kind, r->by_file, glob, 0};
}

static void report(void *ctx, const char *message)
{
    (void)ctx;
    plx_warn("%s", message);
}

/* Returns the number of bad lines (each reported); rules from good lines are kept. */
int plx_filter_load(const char *path)
{
    size_t len;
    if (plx_read_regular(path, PLX_FILTER_MAX_BYTES, &text, &len) != 0) {
        plx_warn("%s: cannot read filter file: %s; nothing is filtered", path,
                 plx_read_error(errno));
        text = NULL;
        return 1;
    }
    const struct plx_filter_sink sink = {add_rule, report, NULL};
    plx_counters_begin();
    int bad = plx_filter_parse(path, text, len, &sink);
    plx_counters_commit(path, bad);
    return bad;
}

static void add_counters_rule(void *ctx, const struct plx_filter_rule *r)
{
    (void)ctx;
    if (r->kind == PLX_FILTER_COUNTERS)
        plx_counters_add_rule(r);
}

/* A reload (counters.c's thread): the file read again, only its `counters` rules kept. */
int plx_filter_reload_counters(const char *path)
{
    char *again;
    size_t len;
    if (plx_read_regular(path, PLX_FILTER_MAX_BYTES, &again, &len) != 0) {
        plx_warn("%s: cannot read filter file: %s; the counters stay as they were", path,
                 plx_read_error(errno));
        return 1;
    }
    const struct plx_filter_sink sink = {add_counters_rule, report, NULL};
    plx_counters_begin();
    int bad = plx_filter_parse(path, again, len, &sink);
    plx_counters_commit(path, bad);
    free(again);
    return bad;
}

const char *plx_filter_text(void)
{
    return text;
}

static int matches(const struct rule *r, const char *name, const char *file)
{
    if (r->by_class)
        return 0;
    const char *subject = r->by_file ? file : name;
    return subject && plx_glob_match(r->glob, subject);
}

int plx_filter_excludes(const char *name, const char *file)
{
    int excluded = default_exclude;
    for (int i = 0; i < nrules; i++)
        if (rules[i].kind != PLX_FILTER_CPUTIME && matches(&rules[i], name, file))
            excluded = rules[i].kind == PLX_FILTER_EXCLUDE;
    return excluded;
}

int plx_filter_cputime(const char *name, const char *file)
{
    for (int i = 0; i < nrules; i++)
        if (rules[i].kind == PLX_FILTER_CPUTIME && matches(&rules[i], name, file))
            return 1;
    return 0;
}

/* A Java class (internal name a/b/C) against the class rules: 1 included, 0 excluded, -1 when no
 * rule names it; the last rule naming it decides. A prefix matches at a package or class
 * boundary (java/lang matches java/lang/String and java/lang/ref/Cleaner, not java/language). */
int plx_filter_class(const char *internal_name)
{
    int decision = -1;
    for (int i = 0; i < nrules; i++) {
        if (!rules[i].by_class)
            continue;
        for (const char *p = rules[i].glob; *p;) {
            size_t n = strcspn(p, ",");
            if (n && strncmp(internal_name, p, n) == 0 &&
                (p[n - 1] == '/' || internal_name[n] == 0 || internal_name[n] == '/' ||
                 internal_name[n] == '$'))
                decision = rules[i].kind == PLX_FILTER_INCLUDE;
            p += n + (p[n] == ',');
        }
    }
    return decision;
}
