/* Selective instrumentation: the filter file's include/exclude rules and the throttle.
 *
 * Format (docs/formats/filter.md): one rule a line, '#' starts a comment.
 *   exclude GLOB | include GLOB             by function name (demangled), e.g. exclude std::*
 *   exclude file GLOB | include file GLOB   by source file
 *   throttle CALLS USEC                     stop measuring a function after CALLS calls in one
 *                                           callpath when they averaged under USEC microseconds
 *   cputime GLOB | cputime file GLOB        also measure these functions' CPU time per call
 *   counters GLOB SET [| SET ...] [every N]  read counters at these functions' entry and exit;
 *                                           SET is EVENT[,EVENT...]; several sets rotate every
 *                                           N calls (docs/formats/counters.md)
 * The last matching rule decides; with no match a function is measured, unless the first rule
 * is an include, in which case only what is included is measured. */
#include "counters.h"

#include <ctype.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_RULES 1024

struct rule {
    int include;   /* 1 include, 0 exclude, 2 cputime */
    int by_file;
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

/* `counters GLOB SET [| SET ...] [every N]` after the keyword, in `p`; NULL when good, else
 * what is wrong. Event names point into `p`. */
static const char *parse_counters(char *p, struct plx_counter_rule *r)
{
    memset(r, 0, sizeof *r);
    r->glob = next_word(&p);
    if (!r->glob)
        return "expected 'counters GLOB EVENT[,EVENT...] [| EVENT,... every N]'";
    char *every = strstr(p, "every");
    if (every) {
        char *q = every + 5, *end;
        if (!isspace((unsigned char)*q))
            return "expected 'every N' after the last event set";
        unsigned long n = strtoul(q, &end, 10);
        while (*end && isspace((unsigned char)*end))
            end++;
        if (end == q || *end || n == 0 || n > 1000000000ul)
            return "'every' takes a whole number of calls from 1 (e.g. every 100)";
        r->every = (unsigned)n;
        *every = 0;
    }
    for (char *save = NULL, *set = strtok_r(p, "|", &save); set; set = strtok_r(NULL, "|", &save)) {
        if (r->nsets == PLX_CTR_MAX_SETS)
            return "too many event sets";
        unsigned n = 0;
        for (char *s2 = NULL, *ev = strtok_r(set, ", \t\n", &s2); ev; ev = strtok_r(NULL, ", \t\n", &s2)) {
            if (n == PLX_CTR_MAX_EVENTS)
                return "more than 8 events in one set";
            if (!plx_counter_event_known(ev)) {
                static char msg[160];
                snprintf(msg, sizeof msg, "unknown counter '%.60s' (docs/formats/counters.md lists "
                         "the names)", ev);
                return msg;
            }
            r->events[r->nsets][n++] = ev;
        }
        if (n == 0)
            return "an empty event set";
        r->nevents[r->nsets++] = n;
    }
    if (r->nsets == 0)
        return "expected at least one event after the function glob";
    if (r->nsets > 1 && !r->every)
        return "several event sets need 'every N' (calls between switches)";
    if (r->nsets == 1 && r->every)
        return "'every N' needs several event sets separated by '|'";
    return NULL;
}

/* Reads the file; `counters_only` (a reload) keeps only its `counters` rules. Returns the
 * number of bad lines (each reported); rules from good lines are kept. */
static int parse_file(const char *path, int counters_only)
{
    FILE *f = fopen(path, "re");
    if (!f) {
        plx_warn("cannot read filter file %s", path);
        return 1;
    }
    plx_counters_begin();
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
        if (strcmp(kw, "counters") == 0) {
            struct plx_counter_rule rule;
            const char *err = parse_counters(p, &rule);
            if (err) {
                plx_warn("%s:%d: %s", path, lineno, err);
                bad++;
            } else {
                plx_counters_add_rule(&rule);
            }
            continue;
        }
        if (counters_only)
            continue;
        char *a = next_word(&p), *b = next_word(&p), *extra = next_word(&p);
        if (strcmp(kw, "include") == 0 || strcmp(kw, "exclude") == 0 || strcmp(kw, "cputime") == 0) {
            int by_file = a && strcmp(a, "file") == 0;
            char *glob = by_file ? b : a;
            if (!glob || (by_file ? extra != NULL : b != NULL) || nrules >= MAX_RULES) {
                plx_warn("%s:%d: expected '%s GLOB' or '%s file GLOB'", path, lineno, kw, kw);
                bad++;
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
            plx_warn("%s:%d: unknown rule '%s' (expected include, exclude, cputime, throttle or "
                     "counters)", path, lineno, kw);
            bad++;
        }
    }
    fclose(f);
    plx_counters_commit(path, bad);
    return bad;
}

int plx_filter_load(const char *path)
{
    return parse_file(path, 0);
}

int plx_filter_reload_counters(const char *path)
{
    return parse_file(path, 1);
}

static int matches(const struct rule *r, const char *name, const char *file)
{
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
