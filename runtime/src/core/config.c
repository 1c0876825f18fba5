/* Options of the runtime, each declared once: environment variable, default, meaning. */
#include "plx_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct plx_config plx_cfg;

static int parse_size(const char *s, size_t *out)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s)
        return -1;
    switch (*end) {
    case 'k': case 'K': v <<= 10; end++; break;
    case 'm': case 'M': v <<= 20; end++; break;
    case 'g': case 'G': v <<= 30; end++; break;
    default: break;
    }
    if (*end == 'B' || *end == 'b')
        end++;
    if (*end)
        return -1;
    *out = (size_t)v;
    return 0;
}

static size_t size_option(const char *var, size_t def, size_t min, size_t max)
{
    const char *s = getenv(var);
    size_t v;
    if (!s || !*s)
        return def;
    if (parse_size(s, &v) || v < min || v > max) {
        plx_warn("%s=%s is not a size between %zu and %zu; using %zu", var, s, min, max, def);
        return def;
    }
    return v;
}

/* A whole number of `var` in [min, max]; `def` when unset, empty or invalid (with a warning). */
static uint32_t uint_option(const char *var, uint32_t def, uint32_t min, uint32_t max)
{
    const char *s = getenv(var);
    if (!s || !*s)
        return def;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s || *end || v < min || v > max) {
        plx_warn("%s=%s is not a whole number between %u and %u; using %u", var, s, min, max, def);
        return def;
    }
    return (uint32_t)v;
}

static void string_option(const char *var, char *dst, size_t cap)
{
    const char *s = getenv(var);
    dst[0] = 0;
    if (s && strlen(s) < cap)
        strcpy(dst, s);
}

/* Returns 0 when an experiment is to be written (PLX_OUTPUT set). */
int plx_config_load(void)
{
    string_option("PLX_OUTPUT", plx_cfg.output, sizeof plx_cfg.output);
    string_option("PLX_FILTER", plx_cfg.filter, sizeof plx_cfg.filter);
    string_option("PLX_PROBE", plx_cfg.probe, sizeof plx_cfg.probe);
    const char *tr = getenv("PLX_TRACE");
    plx_cfg.trace = tr && *tr && strcmp(tr, "0") != 0;
    plx_cfg.buffer_bytes = size_option("PLX_BUFFER", 1u << 20, 4096, (size_t)1 << 32) & ~(size_t)7;
    plx_cfg.max_nodes = (uint32_t)size_option("PLX_MAX_NODES", 1u << 20, 16, 1u << 28);
    plx_cfg.max_depth = (uint32_t)size_option("PLX_MAX_DEPTH", 4096, 16, 1u << 20);
    /* CPU sampling period in ms (0: off); on by default when tracing: a trace's time axis is
     * what the samples are shown against */
    plx_cfg.cpu_sample_ms = uint_option("PLX_CPU_SAMPLE", plx_cfg.trace ? 10 : 0, 0, 3600000);
    const char *v = getenv("PLX_VERBOSE");
    plx_cfg.verbose = v && *v && strcmp(v, "0") != 0;
    const char *patch = getenv("PLX_PATCH");
    plx_cfg.patch = !(patch && strcmp(patch, "0") == 0);
    return plx_cfg.output[0] ? 0 : -1;
}
