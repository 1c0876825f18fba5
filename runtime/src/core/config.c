/* The runtime's settings: each PLX_* variable of the table (options.def) read from the
 * environment by its type's grammar (options.c) into plx_cfg. No other file reads PLX_*. */
#include "plx_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct plx_config plx_cfg;
static unsigned char given[PLX_OPT_COUNT];

/* Where each option's value goes in plx_cfg. */
static const size_t field_offset[PLX_OPT_COUNT] = {
#define PLX_OPTION(NAME, FIELD, ...) offsetof(struct plx_config, FIELD),
#include "options.def"
#undef PLX_OPTION
};

static void store(const struct plx_option *o, size_t offset, const char *text, uint64_t v)
{
    char *field = (char *)&plx_cfg + offset;
    switch (o->type) {
    case PLX_TYPE_PATH:
    case PLX_TYPE_TEXT:
        memcpy(field, text, (size_t)v + 1);
        break;
    case PLX_TYPE_BOOL:
    case PLX_TYPE_CHOICE:
        *(int *)field = (int)v;
        break;
    default:
        *(uint64_t *)field = v;
        break;
    }
}

/* Stores the default of option i; a table without a valid default is a bug caught by the
 * plx-cli test that parses every default. */
static void store_default(int i)
{
    const struct plx_option *o = &plx_options[i];
    char err[256];
    uint64_t v = 0;
    if (o->def && plx_option_parse(o, o->def, &v, err, sizeof err) == 0) {
        store(o, field_offset[i], o->def, v);
        return;
    }
    if (o->type == PLX_TYPE_CHOICE)
        store(o, field_offset[i], "", (uint64_t)-1);
    else
        store(o, field_offset[i], "", 0);
}

static void print_settings(void)
{
    char line[8192];
    size_t n = 0;
    for (int i = 0; i < PLX_OPT_COUNT && n < sizeof line; i++) {
        const struct plx_option *o = &plx_options[i];
        const char *field = (const char *)&plx_cfg + field_offset[i];
        char val[PLX_PATH_CAP];
        switch (o->type) {
        case PLX_TYPE_PATH:
        case PLX_TYPE_TEXT:
            snprintf(val, sizeof val, "%s", field);
            break;
        case PLX_TYPE_BOOL:
            snprintf(val, sizeof val, "%d", *(const int *)field);
            break;
        case PLX_TYPE_CHOICE:
            if (*(const int *)field < 0)
                snprintf(val, sizeof val, "(unset)");
            else
                plx_option_format(o, (uint64_t) * (const int *)field, val, sizeof val);
            break;
        default:
            plx_option_format(o, *(const uint64_t *)field, val, sizeof val);
            break;
        }
        n += (size_t)snprintf(line + n, sizeof line - n, " %s=%s", o->name, val);
    }
    plx_warn("settings:%s", line);
}

/* A PLX_* variable of neither list is a typo or a setting of another version: said, not
 * silently ignored. */
static void warn_unknown(void)
{
    extern char **environ;
    for (char **e = environ; e && *e; e++)
        if (strncmp(*e, "PLX_", 4) == 0 && !plx_option_known(*e))
            plx_warn("%.*s is not a setting of this version (see docs/commands/plx-run.md); "
                     "ignored", (int)strcspn(*e, "="), *e);
}

/* The process's LD_PRELOAD, NULL when unset: a launcher started by a script adds its MPI's
 * wrappers to it (process.c). Read here, where every variable the runtime reads is. */
const char *plx_env_preload(void)
{
    return getenv("LD_PRELOAD");
}

/* The settings block of plx_config_load_from, or NULL: the environment. */
static const char *block;

static const char *lookup(const struct plx_option *o)
{
    if (!block)
        return getenv(o->name);
    static char value[PLX_PATH_CAP];
    const char *name = o->name;
    size_t n = strlen(name);
    for (const char *l = block; *l; l += strcspn(l, "\n") + (l[strcspn(l, "\n")] != 0)) {
        if (strncmp(l, name, n) == 0 && l[n] == '=') {
            size_t len = strcspn(l + n + 1, "\n");
            if (len >= sizeof value)
                len = sizeof value - 1;
            memcpy(value, l + n + 1, len);
            value[len] = 0;
            return value;
        }
    }
    return NULL;
}

int plx_config_load_from(const char *settings)
{
    block = settings ? settings : "";
    int rc = plx_config_load();
    block = NULL;
    return rc;
}

int plx_config_load(void)
{
    for (int i = 0; i < PLX_OPT_COUNT; i++) {
        const struct plx_option *o = &plx_options[i];
        const char *s = lookup(o);
        char err[256];
        uint64_t v;
        given[i] = 0;
        store_default(i);
        if (!s || !*s)
            continue;
        if (plx_option_parse(o, s, &v, err, sizeof err) != 0) {
            if (o->def)
                plx_warn("%s=%s: %s; using the default, %s", o->name, s, err, o->def);
            else
                plx_warn("%s=%s: %s; left unset", o->name, s, err);
            continue;
        }
        store(o, field_offset[i], s, v);
        given[i] = 1;
    }
    plx_cfg.buffer_bytes &= ~(uint64_t)7;
    /* a trace's time axis is what the CPU samples are shown against */
    if (!given[PLX_OPT_CPU_SAMPLE])
        plx_cfg.cpu_sample_ms = plx_cfg.trace ? 10 : 0;
    if (plx_cfg.output[0] && !block)
        warn_unknown();
    if (plx_cfg.verbose && plx_cfg.output[0])
        print_settings();
    return plx_cfg.output[0] ? 0 : -1;
}

int plx_config_given(int id)
{
    return id >= 0 && id < PLX_OPT_COUNT && given[id];
}

const struct plx_config *plx_ext_config(void)
{
    return &plx_cfg;
}
