/* The option table, built from options.def, and one grammar per option type. */
#include "options.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

const unsigned plx_option_count = PLX_OPT_COUNT;
const struct plx_option plx_options[PLX_OPT_COUNT] = {
#define PLX_OPTION(NAME, FIELD, TYPE, DEF, MIN, MAX, CHOICES, FLAG, SHORT, VALUE_NAME, DOC) \
    {"PLX_" #NAME, PLX_TYPE_##TYPE, DEF, MIN, MAX, CHOICES, FLAG, SHORT, VALUE_NAME, DOC},
#include "options.def"
#undef PLX_OPTION
};

const struct plx_elsewhere plx_elsewhere[] = {
#define PLX_ELSEWHERE(NAME, READER, DOC) {"PLX_" #NAME, READER, DOC},
#include "options.def"
#undef PLX_ELSEWHERE
};
const unsigned plx_elsewhere_count = sizeof plx_elsewhere / sizeof plx_elsewhere[0];

int plx_option_known(const char *name)
{
    size_t len = strcspn(name, "=");
    for (unsigned i = 0; i < PLX_OPT_COUNT; i++)
        if (strlen(plx_options[i].name) == len && strncmp(plx_options[i].name, name, len) == 0)
            return 1;
    for (unsigned i = 0; i < plx_elsewhere_count; i++) {
        const char *e = plx_elsewhere[i].name;
        size_t elen = strlen(e);
        if (e[elen - 1] == '*' ? len >= elen - 1 && strncmp(e, name, elen - 1) == 0
                               : elen == len && strncmp(e, name, len) == 0)
            return 1;
    }
    return 0;
}

void plx_size_format(uint64_t bytes, char *buf, size_t cap)
{
    static const char units[] = "GMK";
    for (int i = 0; i < 3; i++) {
        uint64_t unit = 1ull << (10 * (3 - i));
        if (bytes >= unit && bytes % unit == 0) {
            snprintf(buf, cap, "%llu%c", (unsigned long long)(bytes / unit), units[i]);
            return;
        }
    }
    snprintf(buf, cap, "%llu", (unsigned long long)bytes);
}

/* The leading decimal digits of s into *v; returns how many, or -1 on overflow. */
static int digits(const char *s, uint64_t *v)
{
    int n = 0;
    *v = 0;
    for (; isdigit((unsigned char)s[n]); n++) {
        unsigned d = (unsigned)(s[n] - '0');
        if (*v > (UINT64_MAX - d) / 10)
            return -1;
        *v = *v * 10 + d;
    }
    return n;
}

static int word_eq(const char *a, size_t alen, const char *b)
{
    return strlen(b) == alen && strncasecmp(a, b, alen) == 0;
}

static int parse_size(const struct plx_option *o, const char *s, size_t len, uint64_t *out,
                      char *err, size_t cap)
{
    uint64_t v;
    char lim[32];
    int n = digits(s, &v);
    if (n < 0) {
        snprintf(err, cap, "too large");
        return -1;
    }
    if (n == 0) {
        snprintf(err, cap, "not a size: expected bytes or a number with K, M or G");
        return -1;
    }
    const char *unit = s + n;
    size_t ulen = len - (size_t)n;
    int shift;
    if (ulen == 0 || word_eq(unit, ulen, "B"))
        shift = 0;
    else if (word_eq(unit, ulen, "K") || word_eq(unit, ulen, "KB") || word_eq(unit, ulen, "KiB"))
        shift = 10;
    else if (word_eq(unit, ulen, "M") || word_eq(unit, ulen, "MB") || word_eq(unit, ulen, "MiB"))
        shift = 20;
    else if (word_eq(unit, ulen, "G") || word_eq(unit, ulen, "GB") || word_eq(unit, ulen, "GiB"))
        shift = 30;
    else if (unit[0] == '.' || unit[0] == ',') {
        snprintf(err, cap, "not a whole number of bytes, K, M or G");
        return -1;
    } else {
        snprintf(err, cap, "unknown unit '%.*s' (use K, M or G)", (int)ulen, unit);
        return -1;
    }
    if (v > (UINT64_MAX >> shift)) {
        snprintf(err, cap, "too large");
        return -1;
    }
    v <<= shift;
    if (v < o->min) {
        plx_size_format(o->min, lim, sizeof lim);
        snprintf(err, cap, "at least %s", lim);
        return -1;
    }
    if (v > o->max) {
        plx_size_format(o->max, lim, sizeof lim);
        snprintf(err, cap, "at most %s", lim);
        return -1;
    }
    *out = v;
    return 0;
}

static int parse_uint(const struct plx_option *o, const char *s, size_t len, uint64_t *out,
                      char *err, size_t cap)
{
    uint64_t v;
    int n = digits(s, &v);
    if (n <= 0 || (size_t)n != len || v < o->min || v > o->max) {
        snprintf(err, cap, "expected a whole number from %llu to %llu",
                 (unsigned long long)o->min, (unsigned long long)o->max);
        return -1;
    }
    *out = v;
    return 0;
}

static int parse_bool(const char *s, size_t len, uint64_t *out, char *err, size_t cap)
{
    static const char *const yes[] = {"1", "yes", "true", "on"}, *const no[] = {"0", "no", "false", "off"};
    for (int i = 0; i < 4; i++) {
        if (word_eq(s, len, yes[i])) {
            *out = 1;
            return 0;
        }
        if (word_eq(s, len, no[i])) {
            *out = 0;
            return 0;
        }
    }
    snprintf(err, cap, "expected 1 or 0 (yes/no, true/false, on/off)");
    return -1;
}

static int parse_choice(const struct plx_option *o, const char *s, size_t len, uint64_t *out,
                        char *err, size_t cap)
{
    const char *c = o->choices;
    for (uint64_t i = 0;; i++) {
        size_t wlen = strcspn(c, "|");
        if (wlen == len && strncmp(c, s, len) == 0) {
            *out = i;
            return 0;
        }
        if (!c[wlen])
            break;
        c += wlen + 1;
    }
    /* "expected tsc, monotonic or coarse" */
    int n = snprintf(err, cap, "expected ");
    for (c = o->choices; n >= 0 && (size_t)n < cap;) {
        size_t wlen = strcspn(c, "|");
        const char *sep = !c[wlen] ? "" : strchr(c + wlen + 1, '|') ? ", " : " or ";
        n += snprintf(err + n, cap - (size_t)n, "%.*s%s", (int)wlen, c, sep);
        if (!c[wlen])
            break;
        c += wlen + 1;
    }
    return -1;
}

int plx_option_parse(const struct plx_option *o, const char *text, uint64_t *value, char *err,
                     size_t cap)
{
    const char *s = text;
    size_t len = strlen(text);
    if (o->type == PLX_TYPE_PATH || o->type == PLX_TYPE_TEXT) {
        if (len >= PLX_PATH_CAP) {
            snprintf(err, cap, "longer than %d bytes", PLX_PATH_CAP - 1);
            return -1;
        }
        *value = len;
        return 0;
    }
    while (len && isspace((unsigned char)s[len - 1]))
        len--;
    while (len && isspace((unsigned char)*s))
        s++, len--;
    switch (o->type) {
    case PLX_TYPE_BOOL:
        return parse_bool(s, len, value, err, cap);
    case PLX_TYPE_UINT:
        return parse_uint(o, s, len, value, err, cap);
    case PLX_TYPE_SIZE:
        return parse_size(o, s, len, value, err, cap);
    case PLX_TYPE_CHOICE:
        return parse_choice(o, s, len, value, err, cap);
    }
    snprintf(err, cap, "unknown option type %d", o->type);
    return -1;
}

void plx_option_format(const struct plx_option *o, uint64_t value, char *buf, size_t cap)
{
    if (o->type == PLX_TYPE_CHOICE) {
        const char *c = o->choices;
        for (uint64_t i = 0; i < value && strchr(c, '|'); i++)
            c = strchr(c, '|') + 1;
        snprintf(buf, cap, "%.*s", (int)strcspn(c, "|"), c);
        return;
    }
    snprintf(buf, cap, "%llu", (unsigned long long)value);
}
