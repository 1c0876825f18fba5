/* The option table (options.def) and the grammar of each option type. Standalone: compiled into
 * libplx and into the plx command (engine/crates/plx-cli/build.rs), so both read a value alike. */
#ifndef PLX_OPTIONS_H
#define PLX_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

enum plx_option_type {
    PLX_TYPE_PATH = 0,   /* a file name up to PLX_PATH_CAP - 1 bytes (plx run passes it absolute) */
    PLX_TYPE_BOOL = 1,   /* 0 1 yes no true false on off */
    PLX_TYPE_UINT = 2,   /* decimal whole number in [min, max] */
    PLX_TYPE_SIZE = 3,   /* bytes: a whole number, optionally K, M or G (powers of 1024) */
    PLX_TYPE_CHOICE = 4, /* one of the '|'-separated words of `choices` */
    PLX_TYPE_TEXT = 5,   /* any text up to PLX_PATH_CAP - 1 bytes, not a file name */
};

#define PLX_PATH_CAP 4096

struct plx_option {
    const char *name;       /* the environment variable, "PLX_BUFFER" */
    int type;               /* enum plx_option_type */
    const char *def;        /* default in the option's grammar; NULL: none or chosen at run time */
    uint64_t min, max;      /* bounds of UINT and SIZE */
    const char *choices;    /* CHOICE: "tsc|monotonic|coarse" */
    const char *flag;       /* plx run's long flag, "" for none */
    int short_flag;         /* one-letter flag, 0 for none */
    const char *value_name; /* the flag's value in --help */
    const char *doc;        /* one sentence */
};

enum plx_option_id {
#define PLX_OPTION(NAME, ...) PLX_OPT_##NAME,
#include "options.def"
#undef PLX_OPTION
    PLX_OPT_COUNT
};

extern const struct plx_option plx_options[PLX_OPT_COUNT];

/* A PLX_* variable another program of Parallax reads (PLX_ELSEWHERE of options.def). */
struct plx_elsewhere {
    const char *name;   /* "PLX_LIB_DIR" */
    const char *reader; /* "plx run" */
    const char *doc;
};
extern const struct plx_elsewhere plx_elsewhere[];
extern const unsigned plx_elsewhere_count;

/* Whether `name` (up to its '=' or end) is a variable of either list. */
int plx_option_known(const char *name);
extern const unsigned plx_option_count; /* PLX_OPT_COUNT, for readers of the table outside C */

/* Reads `text` by the grammar of `o` into *value (BOOL 0/1, UINT, SIZE bytes, CHOICE index;
 * PATH, TEXT: its length). Returns 0, or -1 with what is wrong in err ("at most 4G"), the one
 * message both the runtime (after "PLX_BUFFER=8G: ") and plx run (after its flag) give. */
int plx_option_parse(const struct plx_option *o, const char *text, uint64_t *value, char *err,
                     size_t cap);

/* `value` written in the grammar of `o`, as plx run passes it on: SIZE and UINT in decimal,
 * BOOL 0 or 1, CHOICE its word. */
void plx_option_format(const struct plx_option *o, uint64_t value, char *buf, size_t cap);

/* A size as people write it: 4K, 1M, 4G when exact, else bytes. */
void plx_size_format(uint64_t bytes, char *buf, size_t cap);

#endif
