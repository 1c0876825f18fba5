/* The filter file's grammar: one rule a line, '#' starts a comment, words separated by blanks.
 * A rule is a keyword and its words; each keyword has its parser in `keywords`, so a new rule is
 * a new entry there (and in docs/formats/filter.md). */
#include "filter_parse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_WORDS 8

/* One line cut into words (NUL-terminated copies in `buf`). */
struct line {
    int n;                  /* words, up to MAX_WORDS + 1 (more are not kept) */
    const char *w[MAX_WORDS + 1];
};

typedef int (*rule_parser)(const struct line *l, struct plx_filter_rule *r, char *err,
                           size_t cap);

/* A '[' that opens a character class no ']' closes: fnmatch would match it literally. */
static const char *unclosed_bracket(const char *g)
{
    for (const char *p = g; *p; p++) {
        if (*p == '\\') {
            if (!*++p)
                break;
        } else if (*p == '[') {
            const char *q = p + 1;
            if (*q == '!')
                q++;
            if (*q == ']') /* a ']' first is part of the class */
                q++;
            q = strchr(q, ']');
            if (!q)
                return p;
            p = q;
        }
    }
    return NULL;
}

/* include|exclude|cputime GLOB, or KEYWORD file GLOB, or include|exclude class PREFIX[,...] */
static int parse_select(const struct line *l, struct plx_filter_rule *r, char *err, size_t cap)
{
    const char *kw = l->w[0];
    if (l->n >= 2 && strcmp(l->w[1], "class") == 0 && kw[0] != 'c') {
        if (l->n != 3 || l->w[2][0] == ',') {
            snprintf(err, cap, "expected '%s class PREFIX[,PREFIX...]' (e.g. %s class java/lang,sun)",
                     kw, kw);
            return -1;
        }
        r->by_class = 1;
        r->glob = l->w[2];
        r->kind = kw[0] == 'i' ? PLX_FILTER_INCLUDE : PLX_FILTER_EXCLUDE;
        return 0;
    }
    r->by_file = l->n >= 2 && strcmp(l->w[1], "file") == 0;
    if (l->n != 2 + r->by_file) {
        snprintf(err, cap, "expected '%s GLOB' or '%s file GLOB'", kw, kw);
        return -1;
    }
    r->glob = l->w[l->n - 1];
    if (unclosed_bracket(r->glob)) {
        snprintf(err, cap, "'%s': a '[' is not closed", r->glob);
        return -1;
    }
    r->kind = kw[0] == 'i' ? PLX_FILTER_INCLUDE : kw[0] == 'e' ? PLX_FILTER_EXCLUDE
                                                                : PLX_FILTER_CPUTIME;
    return 0;
}

/* throttle CALLS USEC */
static int parse_throttle(const struct line *l, struct plx_filter_rule *r, char *err, size_t cap)
{
    char *e1 = NULL, *e2 = NULL;
    if (l->n == 3 && l->w[1][0] != '-') {
        r->calls = strtoull(l->w[1], &e1, 10);
        r->usec = strtod(l->w[2], &e2);
    }
    if (l->n != 3 || !e1 || *e1 || !e2 || *e2 || r->calls == 0 || !(r->usec > 0)) {
        snprintf(err, cap, "expected 'throttle CALLS USEC' (e.g. throttle 100000 10)");
        return -1;
    }
    r->kind = PLX_FILTER_THROTTLE;
    return 0;
}

/* Words kept for later versions: an error now, never read as something else. */
static int parse_reserved(const struct line *l, struct plx_filter_rule *r, char *err, size_t cap)
{
    (void)r;
    snprintf(err, cap, "'%s' rules are not supported in this version", l->w[0]);
    return -1;
}

static const struct {
    const char *word;
    rule_parser parse;
    int reserved;
} keywords[] = {
    {"include", parse_select, 0},
    {"exclude", parse_select, 0},
    {"cputime", parse_select, 0},
    {"throttle", parse_throttle, 0},
    {"counters", parse_reserved, 1}, /* per-function counter contexts */
    {"context", parse_reserved, 1},
};
#define NKEYWORDS (sizeof keywords / sizeof keywords[0])

/* "unknown rule 'x' (expected include, exclude, cputime or throttle)" */
static void unknown_rule(const char *word, char *err, size_t cap)
{
    size_t last = 0, n;
    for (size_t k = 0; k < NKEYWORDS; k++)
        if (!keywords[k].reserved)
            last = k;
    n = (size_t)snprintf(err, cap, "unknown rule '%s' (expected ", word);
    for (size_t k = 0; k < NKEYWORDS && n < cap; k++) {
        if (keywords[k].reserved)
            continue;
        const char *sep = k == last ? ")" : "";
        if (k != 0)
            n += (size_t)snprintf(err + n, cap - n, k == last ? " or " : ", ");
        if (n < cap)
            n += (size_t)snprintf(err + n, cap - n, "%s%s", keywords[k].word, sep);
    }
}

static int is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* Cuts [s, end) before any '#' into words copied to buf (at least end - s + 1 bytes). */
static void split(const char *s, const char *end, char *buf, struct line *l)
{
    const char *hash = memchr(s, '#', (size_t)(end - s));
    if (hash)
        end = hash;
    l->n = 0;
    while (s < end) {
        while (s < end && is_blank(*s))
            s++;
        if (s == end)
            break;
        const char *w = s;
        while (s < end && !is_blank(*s))
            s++;
        if (l->n <= MAX_WORDS) {
            memcpy(buf, w, (size_t)(s - w));
            buf[s - w] = 0;
            l->w[l->n] = buf;
            buf += s - w + 1;
        }
        l->n++;
        if (l->n > MAX_WORDS + 1)
            l->n = MAX_WORDS + 1;
    }
}

int plx_filter_parse(const char *name, const char *text, size_t len,
                     const struct plx_filter_sink *sink)
{
    size_t longest = 0;
    for (size_t i = 0, start = 0; i <= len; i++)
        if (i == len || text[i] == '\n') {
            if (i - start > longest)
                longest = i - start;
            start = i + 1;
        }
    char *buf = malloc(longest + MAX_WORDS + 2);
    char err[512], msg[1024];
    int bad = 0;
    if (!buf) {
        snprintf(msg, sizeof msg, "%s: out of memory reading the filter file", name);
        sink->error(sink->ctx, msg);
        return 1;
    }
    unsigned lineno = 0;
    for (const char *s = text, *end = text + len; s < end;) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        const char *eol = nl ? nl : end;
        struct line l;
        lineno++;
        split(s, eol, buf, &l);
        s = nl ? nl + 1 : end;
        if (l.n == 0)
            continue;
        struct plx_filter_rule r;
        memset(&r, 0, sizeof r);
        r.line = lineno;
        int rc = -1;
        size_t k;
        for (k = 0; k < NKEYWORDS; k++)
            if (strcmp(l.w[0], keywords[k].word) == 0)
                break;
        if (k == NKEYWORDS)
            unknown_rule(l.w[0], err, sizeof err);
        else
            rc = keywords[k].parse(&l, &r, err, sizeof err);
        if (rc == 0) {
            sink->rule(sink->ctx, &r);
        } else {
            snprintf(msg, sizeof msg, "%s:%u: %s", name, lineno, err);
            sink->error(sink->ctx, msg);
            bad++;
        }
    }
    free(buf);
    return bad;
}
