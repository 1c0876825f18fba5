/* The filter file's grammar (docs/formats/filter.md), one parser for libplx and the plx command
 * (engine/crates/plx-cli/build.rs compiles filter_parse.c in). Standalone: no runtime state. */
#ifndef PLX_FILTER_PARSE_H
#define PLX_FILTER_PARSE_H

#include <stddef.h>
#include <stdint.h>

enum plx_filter_kind {
    PLX_FILTER_EXCLUDE = 0,
    PLX_FILTER_INCLUDE = 1,
    PLX_FILTER_CPUTIME = 2,
    PLX_FILTER_THROTTLE = 3,
};

/* One rule, valid during the callback only. */
struct plx_filter_rule {
    int kind;         /* enum plx_filter_kind */
    unsigned line;    /* 1-based */
    int by_file;      /* EXCLUDE, INCLUDE, CPUTIME: GLOB matches source files, not names */
    int by_class;     /* EXCLUDE, INCLUDE: GLOB is a comma-separated list of Java class
                         prefixes (java/lang,sun or java.lang), not a glob */
    const char *glob; /* EXCLUDE, INCLUDE, CPUTIME */
    uint64_t calls;   /* THROTTLE */
    double usec;      /* THROTTLE */
};

struct plx_filter_sink {
    void (*rule)(void *ctx, const struct plx_filter_rule *rule);
    /* `message` is "NAME:LINE: what is wrong", the same text wherever the file is checked */
    void (*error)(void *ctx, const char *message);
    void *ctx;
};

/* Parses the `len` bytes of `text`, the filter file `name`, of any size and line length: each
 * good line's rule to sink->rule, each bad line to sink->error. Returns the number of bad
 * lines. */
int plx_filter_parse(const char *name, const char *text, size_t len,
                     const struct plx_filter_sink *sink);

#endif
