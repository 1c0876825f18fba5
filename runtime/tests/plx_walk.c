/* Schema-driven record reading and the golden dump (plx_walk.h). */
#define PLX_RECORDS_TABLE
#include "plx_walk.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

static const int scalar_size[] = {
    [PLX_T_U8] = 1, [PLX_T_U16] = 2, [PLX_T_U32] = 4, [PLX_T_U64] = 8,
    [PLX_T_I32] = 4, [PLX_T_I64] = 8, [PLX_T_F64] = 8, [PLX_T_STR] = 4,
};

const struct plx_record_def *plx_walk_def(uint16_t type)
{
    for (int i = 0; i < PLX_RECORD_DEFS; i++)
        if (plx_record_defs[i].id == type)
            return &plx_record_defs[i];
    return NULL;
}

const struct plx_subtype_def *plx_walk_subtype(unsigned id)
{
    for (int i = 0; i < PLX_SUBTYPE_DEFS; i++)
        if (plx_subtype_defs[i].id == id)
            return &plx_subtype_defs[i];
    return NULL;
}

/* One scalar or str at *p, advancing it; -1 past `end`. */
static int take(uint8_t type, const unsigned char **p, const unsigned char *end, struct plx_val *v)
{
    int n = scalar_size[type];
    if (end - *p < n)
        return -1;
    uint64_t u = 0;
    memcpy(&u, *p, (size_t)n);
    if (type == PLX_T_I32)
        u = (uint64_t)(int64_t)(int32_t)(uint32_t)u;
    *p += n;
    v->u = u;
    v->p = NULL;
    v->n = 0;
    if (type == PLX_T_STR) {
        if ((uint64_t)(end - *p) < u)
            return -1;
        v->p = *p;
        v->n = (uint32_t)u;
        *p += u;
    }
    return 0;
}

int plx_walk_record(const struct plx_record_def *d, const unsigned char *p, uint32_t len,
                    struct plx_val *v)
{
    const unsigned char *end = p + len;
    for (int k = 0; k < d->nfields; k++) {
        const struct plx_field_def *f = &d->fields[k];
        if (k >= d->nrequired && p == end) { /* appended in a later version: absent, zero */
            v[k] = (struct plx_val){0, p, 0};
            continue;
        }
        if (f->count < 0) {
            if (take(f->type, &p, end, &v[k]) != 0)
                return -1;
            continue;
        }
        uint64_t n = v[f->count].u;
        v[k] = (struct plx_val){0, p, (uint32_t)n};
        struct plx_val tmp;
        if (f->bulk)
            continue; /* the caller's to bound (trace events) */
        if (f->type == PLX_T_GROUP) {
            for (uint64_t i = 0; i < n; i++)
                for (int j = 0; j < f->nitems; j++)
                    if (take(f->items[j].type, &p, end, &tmp) != 0)
                        return -1;
        } else if (f->type == PLX_T_STR) {
            for (uint64_t i = 0; i < n; i++)
                if (take(f->type, &p, end, &tmp) != 0)
                    return -1;
        } else {
            if ((uint64_t)(end - p) / (uint64_t)scalar_size[f->type] < n)
                return -1;
            p += n * (uint64_t)scalar_size[f->type];
        }
    }
    return 0;
}

uint64_t plx_walk_item(const struct plx_record_def *d, int k, const struct plx_val *v, uint32_t i, int j)
{
    const struct plx_field_def *f = &d->fields[k];
    size_t size = 0, off = 0;
    if (f->type == PLX_T_GROUP) {
        for (int m = 0; m < f->nitems; m++) {
            if (m == j)
                off = size;
            size += (size_t)scalar_size[f->items[m].type];
        }
    } else {
        size = (size_t)scalar_size[f->type];
    }
    uint8_t type = f->type == PLX_T_GROUP ? f->items[j].type : f->type;
    uint64_t u = 0;
    memcpy(&u, v[k].p + (size_t)i * size + off, (size_t)scalar_size[type]);
    if (type == PLX_T_I32)
        u = (uint64_t)(int64_t)(int32_t)(uint32_t)u;
    return u;
}

uint64_t plx_walk_subfield(const struct plx_subtype_def *st, const uint64_t *payload, int k)
{
    const struct plx_subfield_def *f = &st->fields[k];
    unsigned bits = (unsigned)(f->hi - f->lo + 1);
    uint64_t u = payload[f->word] >> f->lo;
    if (bits < 64)
        u &= (1ull << bits) - 1;
    if (f->type == PLX_T_I32)
        u = (uint64_t)(int64_t)(int32_t)(uint32_t)u;
    return u;
}

/* ---- the dump ------------------------------------------------------------------------------ */

/* Shortest decimal that reads back as v, as d.ddde<exp> (Rust's `{:e}`). */
static void put_f64(FILE *out, double v)
{
    if (v != v) {
        fputs("nan", out);
        return;
    }
    if (v - v != 0) {
        fputs(v > 0 ? "inf" : "-inf", out);
        return;
    }
    char b[64];
    for (int prec = 0; prec < 18; prec++) {
        snprintf(b, sizeof b, "%.*e", prec, v);
        if (strtod(b, NULL) == v)
            break;
    }
    char *e = strchr(b, 'e');
    *e = 0;
    fprintf(out, "%se%d", b, atoi(e + 1));
}

static void put_value(FILE *out, uint8_t type, const struct plx_val *v)
{
    switch (type) {
    case PLX_T_F64: {
        double d;
        memcpy(&d, &v->u, 8);
        put_f64(out, d);
        break;
    }
    case PLX_T_I32:
    case PLX_T_I64:
        fprintf(out, "%lld", (long long)v->u);
        break;
    case PLX_T_STR:
        fputc('"', out);
        for (uint32_t i = 0; i < v->n; i++) {
            unsigned char c = v->p[i];
            if (c == '"' || c == '\\')
                fprintf(out, "\\%c", c);
            else if (c >= 0x20 && c <= 0x7e)
                fputc(c, out);
            else
                fprintf(out, "\\x%02x", c);
        }
        fputc('"', out);
        break;
    default:
        fprintf(out, "%llu", (unsigned long long)v->u);
    }
}

/* A record whose fields plx_walk_record accepted. */
static void dump_fields(FILE *out, const struct plx_record_def *d, const struct plx_val *v)
{
    for (int k = 0; k < d->nfields; k++) {
        const struct plx_field_def *f = &d->fields[k];
        if (f->bulk)
            continue;
        fprintf(out, " %s=", f->name);
        if (f->count < 0) {
            put_value(out, f->type, &v[k]);
            continue;
        }
        const unsigned char *p = v[k].p, *end = p + (size_t)-1 / 2;
        struct plx_val x;
        fputc('[', out);
        for (uint32_t i = 0; i < v[k].n; i++) {
            if (i)
                fputs(", ", out);
            if (f->type != PLX_T_GROUP) {
                take(f->type, &p, end, &x);
                put_value(out, f->type, &x);
                continue;
            }
            fputc('{', out);
            for (int j = 0; j < f->nitems; j++) {
                take(f->items[j].type, &p, end, &x);
                fprintf(out, "%s%s=", j ? " " : "", f->items[j].name);
                put_value(out, f->items[j].type, &x);
            }
            fputc('}', out);
        }
        fputc(']', out);
    }
}

static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *p = malloc((size_t)n + 1);
    *len = fread(p, 1, (size_t)n, f);
    fclose(f);
    return p;
}

static void dump_events(FILE *out, const unsigned char *ev, uint32_t count, uint64_t t)
{
    for (uint32_t i = 0; i < count; i++) {
        uint64_t w;
        memcpy(&w, ev + 8 * (size_t)i, 8);
        unsigned kind = (unsigned)(w >> PLX_EV_KIND_SHIFT);
        t += w & PLX_EV_DELTA_MAX;
        if (kind == PLX_EV_ENTER || kind == PLX_EV_EXIT) {
            fprintf(out, "  %s region=%llu ticks=%llu\n", kind == PLX_EV_ENTER ? "enter" : "exit",
                    (unsigned long long)((w >> PLX_EV_REGION_SHIFT) & ((1ull << PLX_EV_REGION_BITS) - 1)),
                    (unsigned long long)t);
            continue;
        }
        if (kind != PLX_EV_EXT) {
            fprintf(out, "  unknown subtype=255 ticks=%llu\n", (unsigned long long)t);
            continue;
        }
        unsigned sub = (unsigned)((w >> PLX_EV_SUBTYPE_SHIFT) & ((1u << PLX_EV_SUBTYPE_BITS) - 1));
        unsigned words = (unsigned)((w >> PLX_EV_WORDS_SHIFT) & ((1u << PLX_EV_WORDS_BITS) - 1));
        if ((uint64_t)i + 1 + words > count)
            return; /* payload past the chunk: decoding stops */
        uint64_t payload[256];
        memcpy(payload, ev + 8 * ((size_t)i + 1), 8 * (size_t)words);
        i += words;
        const struct plx_subtype_def *st = plx_walk_subtype(sub);
        if (!st || words < st->words) {
            fprintf(out, "  unknown subtype=%u ticks=%llu\n", sub, (unsigned long long)t);
            continue;
        }
        fprintf(out, "  %s", st->name);
        for (int k = 0; k < st->nfields; k++) {
            struct plx_val v = {plx_walk_subfield(st, payload, k), NULL, 0};
            if (strcmp(st->fields[k].name, "ticks") == 0) {
                t = v.u; /* a time reset */
                continue;
            }
            fprintf(out, " %s=", st->fields[k].name);
            put_value(out, st->fields[k].type, &v);
        }
        fprintf(out, " ticks=%llu\n", (unsigned long long)t);
    }
}

static void dump_file(FILE *out, const char *path, int trace)
{
    size_t len;
    unsigned char *b = slurp(path, &len);
    if (!b)
        return;
    struct plx_val v[64];
    for (size_t off = PLX_FILE_HEADER_SIZE; off + PLX_RECORD_HEADER_SIZE <= len;) {
        uint16_t type;
        uint32_t plen;
        memcpy(&type, b + off, 2);
        memcpy(&plen, b + off + 4, 4);
        if (off + PLX_RECORD_HEADER_SIZE + plen > len) {
            fprintf(out, "truncated record %u\n", type);
            break;
        }
        const unsigned char *p = b + off + PLX_RECORD_HEADER_SIZE;
        const struct plx_record_def *d = plx_walk_def(type);
        if (!d || (type == PLX_REC_TRACE_CHUNK) != trace)
            fprintf(out, "unknown record %u (%u bytes)\n", type, plen);
        else if (plx_walk_record(d, p, plen, v) != 0)
            fprintf(out, "bad record %u\n", type);
        else if (type == PLX_REC_TRACE_CHUNK) {
            fputs("chunk", out);
            dump_fields(out, d, v);
            fputc('\n', out);
            uint32_t n = v[PLX_F_TRACE_CHUNK_EVENT_COUNT].u;
            if ((uint64_t)n * 8 > plen - PLX_TRACE_CHUNK_FIXED_SIZE)
                n = (plen - PLX_TRACE_CHUNK_FIXED_SIZE) / 8;
            dump_events(out, p + PLX_TRACE_CHUNK_FIXED_SIZE, n, v[PLX_F_TRACE_CHUNK_BASE_TICKS].u);
        } else {
            fputs(d->name, out);
            dump_fields(out, d, v);
            fputc('\n', out);
        }
        off += PLX_RECORD_HEADER_SIZE + plen;
    }
    free(b);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void plx_walk_dump(const char *experiment, FILE *out)
{
    DIR *d = opendir(experiment);
    if (!d)
        return;
    char *names[4096];
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < 4096)
        if (e->d_name[0] != '.')
            names[n++] = strdup(e->d_name);
    closedir(d);
    qsort(names, (size_t)n, sizeof *names, by_name);
    for (int i = 0; i < n; i++) {
        char path[8192];
        size_t len = strlen(names[i]);
        if (strncmp(names[i], "metrics.", 8) == 0 && len >= 12 && strcmp(names[i] + len - 4, ".plx") == 0) {
            fprintf(out, "metrics %s\n", names[i]);
            snprintf(path, sizeof path, "%s/%s", experiment, names[i]);
            dump_file(out, path, 0);
            free(names[i]);
            continue;
        }
        fprintf(out, "process %s\n", names[i]);
        snprintf(path, sizeof path, "%s/%s/process.plx", experiment, names[i]);
        dump_file(out, path, 0);
        snprintf(path, sizeof path, "%s/%s/trace.plx", experiment, names[i]);
        dump_file(out, path, 1);
        free(names[i]);
    }
}
