/* DWARF line tables: the source file and line of a code address in an ELF image.
 *
 * plx_dwarf_lines_build runs every line-number program of .debug_line (DWARF 2-5) and keeps
 * one row per change of (file, line), plus an end marker per sequence, sorted by address;
 * lookups are a binary search. File names are joined with their directory (and, for DWARF 2-4,
 * the compilation directory from .debug_info), normalized and interned in an arena owned by
 * the index, so the index never points into the image.
 *
 * Everything read from the image is bounds-checked: a malformed unit is dropped (rows of its
 * unfinished sequence included) and parsing moves to the next unit when its length is sane.
 * Compressed sections: zlib (SHF_COMPRESSED with ELFCOMPRESS_ZLIB, and GNU .zdebug_*) through
 * the small inflater of inflate.c; anything else (zstd) is treated as absent. Only ELF64
 * little-endian images on a little-endian host. */
#include "dwarf_line.h"
#include "inflate.h"

#include <elf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define API __attribute__((visibility("hidden")))

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define HOST_LITTLE_ENDIAN 0
#else
#define HOST_LITTLE_ENDIAN 1
#endif

#ifndef SHF_COMPRESSED
#define SHF_COMPRESSED (1u << 11)
#endif
#ifndef ELFCOMPRESS_ZLIB
#define ELFCOMPRESS_ZLIB 1
#endif

#define MAX_ROWS 0x7FFFFFFFu /* row order numbers are 31 bits */

/* ------------------------------------------------------------------------------------------ */
/* Bounded little-endian reader. On any overrun `bad` is set and every later read yields 0.   */

struct rd {
    const unsigned char *p, *end;
    int bad;
};

static void rd_init(struct rd *r, const unsigned char *p, const unsigned char *end)
{
    r->p = p;
    r->end = end;
    r->bad = 0;
}

static int rd_has(const struct rd *r, uint64_t n)
{
    return !r->bad && (uint64_t)(r->end - r->p) >= n;
}

static void rd_fail(struct rd *r)
{
    r->bad = 1;
    r->p = r->end;
}

static uint64_t rd_u(struct rd *r, unsigned n) /* n <= 8 */
{
    if (!rd_has(r, n)) {
        rd_fail(r);
        return 0;
    }
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v |= (uint64_t)r->p[i] << (8 * i);
    r->p += n;
    return v;
}

static void rd_skip(struct rd *r, uint64_t n)
{
    if (!rd_has(r, n)) {
        rd_fail(r);
        return;
    }
    r->p += n;
}

static uint64_t rd_uleb(struct rd *r)
{
    uint64_t v = 0;
    unsigned shift = 0;
    for (;;) {
        if (r->bad || r->p >= r->end) {
            rd_fail(r);
            return 0;
        }
        unsigned char b = *r->p++;
        if (shift < 64)
            v |= (uint64_t)(b & 0x7f) << shift;
        shift += 7;
        if (!(b & 0x80))
            return v;
    }
}

static int64_t rd_sleb(struct rd *r)
{
    uint64_t v = 0;
    unsigned shift = 0;
    unsigned char b;
    do {
        if (r->bad || r->p >= r->end) {
            rd_fail(r);
            return 0;
        }
        b = *r->p++;
        if (shift < 64)
            v |= (uint64_t)(b & 0x7f) << shift;
        shift += 7;
    } while (b & 0x80);
    if (shift < 64 && (b & 0x40))
        v |= ~(uint64_t)0 << shift;
    int64_t s;
    memcpy(&s, &v, sizeof s);
    return s;
}

static const char *rd_str(struct rd *r)
{
    if (r->bad || r->p >= r->end) {
        rd_fail(r);
        return NULL;
    }
    const unsigned char *z = memchr(r->p, 0, (size_t)(r->end - r->p));
    if (!z) {
        rd_fail(r);
        return NULL;
    }
    const char *s = (const char *)r->p;
    r->p = z + 1;
    return s;
}

/* ------------------------------------------------------------------------------------------ */
/* Sections                                                                                   */

struct sec {
    const unsigned char *data;
    size_t size;
    unsigned char *owned; /* decompressed copy, freed after the build */
};

/* NUL-terminated string at `off` in a string section, or NULL. */
static const char *sec_str(const struct sec *s, uint64_t off)
{
    if (!s->data || off >= s->size)
        return NULL;
    if (!memchr(s->data + off, 0, s->size - (size_t)off))
        return NULL;
    return (const char *)s->data + off;
}

/* Decompressed copy of a compressed section's payload; 0 on success. */
static int sec_inflate(struct sec *s, const unsigned char *in, size_t inlen, uint64_t outlen)
{
    /* deflate cannot expand by more than 1032:1; refuse absurd sizes before allocating */
    if (outlen == 0 || outlen > (uint64_t)inlen * 1032 + 64 || outlen > SIZE_MAX / 2)
        return -1;
    unsigned char *out = malloc((size_t)outlen);
    if (!out)
        return -1;
    if (plx_zlib_inflate(out, (size_t)outlen, in, inlen) != 0) {
        free(out);
        return -1;
    }
    s->owned = out;
    s->data = out;
    s->size = (size_t)outlen;
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* ELF                                                                                         */

struct range {
    uint64_t lo, hi;
};

enum { S_LINE, S_LINE_STR, S_STR, S_INFO, S_ABBREV, NSEC };
static const char *const sec_names[NSEC] = {"line", "line_str", "str", "info", "abbrev"};

/* A debug section found in the section headers, loaded (and inflated) on first use. */
struct lazy_sec {
    struct sec s;
    Elf64_Shdr sh;
    int present, gnu_z, tried;
};

struct elf {
    const unsigned char *image;
    size_t size;
    struct lazy_sec sec[NSEC];
    struct range *text; /* executable sections, sorted by start */
    size_t ntext;
    int filter; /* drop sequences that start outside every executable section */
};

static void elf_release(struct elf *e)
{
    for (int i = 0; i < NSEC; i++)
        free(e->sec[i].s.owned);
    free(e->text);
}

static int range_cmp(const void *a, const void *b)
{
    const struct range *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Loads one debug section's contents (decompressing it if needed); leaves it absent on error. */
static void load_sec(struct sec *s, const unsigned char *image, size_t size, const Elf64_Shdr *sh,
                     int gnu_z)
{
    if (sh->sh_type == SHT_NOBITS)
        return;
    if (sh->sh_offset > size || sh->sh_size > size - sh->sh_offset)
        return;
    const unsigned char *p = image + sh->sh_offset;
    size_t n = (size_t)sh->sh_size;
    if (sh->sh_flags & SHF_COMPRESSED) {
        Elf64_Chdr ch;
        if (n < sizeof ch)
            return;
        memcpy(&ch, p, sizeof ch);
        if (ch.ch_type != ELFCOMPRESS_ZLIB)
            return; /* zstd and the rest: not supported */
        sec_inflate(s, p + sizeof ch, n - sizeof ch, ch.ch_size);
    } else if (gnu_z) {
        /* .zdebug_*: "ZLIB", 8-byte big-endian uncompressed size, zlib stream */
        if (n < 12 || memcmp(p, "ZLIB", 4) != 0)
            return;
        uint64_t out = 0;
        for (int i = 4; i < 12; i++)
            out = out << 8 | p[i];
        sec_inflate(s, p + 12, n - 12, out);
    } else {
        s->data = p;
        s->size = n;
    }
}

/* The section's contents; data is NULL when it is absent or unusable. */
static const struct sec *elf_sec(struct elf *e, int which)
{
    struct lazy_sec *l = &e->sec[which];
    if (!l->tried) {
        l->tried = 1;
        if (l->present)
            load_sec(&l->s, e->image, e->size, &l->sh, l->gnu_z);
    }
    return &l->s;
}

static int elf_open(struct elf *e, const unsigned char *image, size_t size)
{
    memset(e, 0, sizeof *e);
    e->image = image;
    e->size = size;
    Elf64_Ehdr eh;
    if (!HOST_LITTLE_ENDIAN || !image || size < sizeof eh)
        return -1;
    memcpy(&eh, image, sizeof eh);
    if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
        eh.e_ident[EI_DATA] != ELFDATA2LSB)
        return -1;
    if (eh.e_shoff == 0 || eh.e_shoff >= size || eh.e_shentsize < sizeof(Elf64_Shdr))
        return -1;
    uint64_t shnum = eh.e_shnum, shstrndx = eh.e_shstrndx;
    uint64_t room = (size - eh.e_shoff) / eh.e_shentsize; /* section headers that fit */
    if (room < 1)
        return -1;
    Elf64_Shdr sh0;
    memcpy(&sh0, image + eh.e_shoff, sizeof sh0);
    if (shnum == 0)
        shnum = sh0.sh_size;
    if (shstrndx == SHN_XINDEX)
        shstrndx = sh0.sh_link;
    if (shnum > room || shstrndx >= shnum)
        return -1;

    Elf64_Shdr strh;
    memcpy(&strh, image + eh.e_shoff + shstrndx * eh.e_shentsize, sizeof strh);
    if (strh.sh_type == SHT_NOBITS || strh.sh_offset > size || strh.sh_size > size - strh.sh_offset)
        return -1;
    struct sec names = {image + strh.sh_offset, (size_t)strh.sh_size, NULL};

    size_t cap = 0;
    for (uint64_t i = 0; i < shnum; i++) {
        Elf64_Shdr sh;
        memcpy(&sh, image + eh.e_shoff + i * eh.e_shentsize, sizeof sh);
        if ((sh.sh_flags & (SHF_ALLOC | SHF_EXECINSTR)) == (SHF_ALLOC | SHF_EXECINSTR) && sh.sh_size &&
            sh.sh_addr + sh.sh_size > sh.sh_addr) {
            if (e->ntext == cap) {
                cap = cap ? 2 * cap : 16;
                struct range *t = realloc(e->text, cap * sizeof *t);
                if (!t)
                    return -1;
                e->text = t;
            }
            e->text[e->ntext++] = (struct range){sh.sh_addr, sh.sh_addr + sh.sh_size};
        }
        const char *name = sec_str(&names, sh.sh_name);
        int gnu_z;
        if (name && !strncmp(name, ".debug_", 7)) {
            name += 7;
            gnu_z = 0;
        } else if (name && !strncmp(name, ".zdebug_", 8)) {
            name += 8;
            gnu_z = 1;
        } else {
            continue;
        }
        for (int k = 0; k < NSEC; k++) {
            if (!strcmp(name, sec_names[k]) && !e->sec[k].present) {
                e->sec[k].present = 1;
                e->sec[k].gnu_z = gnu_z;
                e->sec[k].sh = sh;
            }
        }
    }
    if (e->ntext)
        qsort(e->text, e->ntext, sizeof *e->text, range_cmp);
    e->filter = (eh.e_type == ET_EXEC || eh.e_type == ET_DYN) && e->ntext > 0;
    return elf_sec(e, S_LINE)->data ? 0 : -1;
}

/* Whether a sequence starting at addr describes code that is in the image. */
static int elf_keeps(const struct elf *e, uint64_t addr)
{
    if (!e->filter)
        return 1;
    size_t lo = 0, hi = e->ntext; /* first range with lo > addr */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (e->text[mid].lo <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* ranges may overlap in odd files: look back over every range starting at or before addr */
    for (size_t i = lo; i-- > 0;)
        if (addr < e->text[i].hi)
            return 1;
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* DWARF attribute forms                                                                       */

enum {
    FORM_addr = 0x01, FORM_block2 = 0x03, FORM_block4 = 0x04, FORM_data2 = 0x05, FORM_data4 = 0x06,
    FORM_data8 = 0x07, FORM_string = 0x08, FORM_block = 0x09, FORM_block1 = 0x0a, FORM_data1 = 0x0b,
    FORM_flag = 0x0c, FORM_sdata = 0x0d, FORM_strp = 0x0e, FORM_udata = 0x0f, FORM_ref_addr = 0x10,
    FORM_ref1 = 0x11, FORM_ref2 = 0x12, FORM_ref4 = 0x13, FORM_ref8 = 0x14, FORM_ref_udata = 0x15,
    FORM_indirect = 0x16, FORM_sec_offset = 0x17, FORM_exprloc = 0x18, FORM_flag_present = 0x19,
    FORM_strx = 0x1a, FORM_addrx = 0x1b, FORM_ref_sup4 = 0x1c, FORM_strp_sup = 0x1d,
    FORM_data16 = 0x1e, FORM_line_strp = 0x1f, FORM_ref_sig8 = 0x20, FORM_implicit_const = 0x21,
    FORM_loclistx = 0x22, FORM_rnglistx = 0x23, FORM_ref_sup8 = 0x24, FORM_strx1 = 0x25,
    FORM_strx2 = 0x26, FORM_strx3 = 0x27, FORM_strx4 = 0x28, FORM_addrx1 = 0x29, FORM_addrx2 = 0x2a,
    FORM_addrx3 = 0x2b, FORM_addrx4 = 0x2c, FORM_GNU_addr_index = 0x1f01, FORM_GNU_str_index = 0x1f02,
    FORM_GNU_ref_alt = 0x1f20, FORM_GNU_strp_alt = 0x1f21,
};

struct fctx {
    unsigned osz, asz, version; /* offset size (4/8), address size, unit version */
    struct elf *e;
};

struct fval {
    uint64_t num;
    const char *str; /* for string forms that resolve in this file */
};

/* Reads (or skips) one attribute value; 0 on success, -1 on unknown form or overrun. String
 * forms that need more than this file's .debug_str / .debug_line_str (strx*, strp_sup,
 * GNU_strp_alt) are skipped and leave v->str NULL. */
static int read_form(struct rd *r, uint64_t form, const struct fctx *c, struct fval *v)
{
    v->num = 0;
    v->str = NULL;
    for (int depth = 0; depth < 4; depth++) {
        switch (form) {
        case FORM_addr:
            if (c->asz <= 8)
                v->num = rd_u(r, c->asz);
            else
                rd_skip(r, c->asz);
            break;
        case FORM_data1:
        case FORM_ref1:
        case FORM_flag:
        case FORM_strx1:
        case FORM_addrx1:
            v->num = rd_u(r, 1);
            break;
        case FORM_data2:
        case FORM_ref2:
        case FORM_strx2:
        case FORM_addrx2:
            v->num = rd_u(r, 2);
            break;
        case FORM_strx3:
        case FORM_addrx3:
            v->num = rd_u(r, 3);
            break;
        case FORM_data4:
        case FORM_ref4:
        case FORM_ref_sup4:
        case FORM_strx4:
        case FORM_addrx4:
            v->num = rd_u(r, 4);
            break;
        case FORM_data8:
        case FORM_ref8:
        case FORM_ref_sig8:
        case FORM_ref_sup8:
            v->num = rd_u(r, 8);
            break;
        case FORM_data16:
            rd_skip(r, 16);
            break;
        case FORM_sdata: {
            int64_t sv = rd_sleb(r);
            memcpy(&v->num, &sv, sizeof sv);
            break;
        }
        case FORM_udata:
        case FORM_ref_udata:
        case FORM_strx:
        case FORM_addrx:
        case FORM_loclistx:
        case FORM_rnglistx:
        case FORM_GNU_addr_index:
        case FORM_GNU_str_index:
            v->num = rd_uleb(r);
            break;
        case FORM_string:
            v->str = rd_str(r);
            break;
        case FORM_strp:
            v->num = rd_u(r, c->osz);
            v->str = sec_str(elf_sec(c->e, S_STR), v->num);
            break;
        case FORM_line_strp:
            v->num = rd_u(r, c->osz);
            v->str = sec_str(elf_sec(c->e, S_LINE_STR), v->num);
            break;
        case FORM_sec_offset:
        case FORM_strp_sup:
        case FORM_GNU_ref_alt:
        case FORM_GNU_strp_alt:
            v->num = rd_u(r, c->osz);
            break;
        case FORM_ref_addr:
            v->num = rd_u(r, c->version <= 2 ? c->asz : c->osz);
            break;
        case FORM_block1:
            rd_skip(r, rd_u(r, 1));
            break;
        case FORM_block2:
            rd_skip(r, rd_u(r, 2));
            break;
        case FORM_block4:
            rd_skip(r, rd_u(r, 4));
            break;
        case FORM_block:
        case FORM_exprloc:
            rd_skip(r, rd_uleb(r));
            break;
        case FORM_flag_present:
            v->num = 1;
            break;
        case FORM_implicit_const: /* the value lives in the abbreviation */
            break;
        case FORM_indirect:
            form = rd_uleb(r);
            if (r->bad)
                return -1;
            continue;
        default:
            return -1;
        }
        return r->bad ? -1 : 0;
    }
    return -1;
}

/* ------------------------------------------------------------------------------------------ */
/* Interned strings in an arena owned by the index                                             */

struct chunk {
    struct chunk *next;
    size_t used, cap;
    char data[];
};

struct strtab {
    struct chunk *chunks;
    const char **slots; /* open addressing; build time only */
    size_t cap, n;
};

static uint64_t str_hash(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

static const char *intern(struct strtab *t, const char *s, size_t n)
{
    if (t->n * 2 >= t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 1024;
        const char **slots = calloc(cap, sizeof *slots);
        if (!slots)
            return NULL;
        for (size_t i = 0; i < t->cap; i++) {
            if (!t->slots[i])
                continue;
            size_t j = str_hash(t->slots[i], strlen(t->slots[i])) & (cap - 1);
            while (slots[j])
                j = (j + 1) & (cap - 1);
            slots[j] = t->slots[i];
        }
        free(t->slots);
        t->slots = slots;
        t->cap = cap;
    }
    size_t j = str_hash(s, n) & (t->cap - 1);
    for (; t->slots[j]; j = (j + 1) & (t->cap - 1))
        if (!strncmp(t->slots[j], s, n) && t->slots[j][n] == 0)
            return t->slots[j];
    struct chunk *c = t->chunks;
    if (!c || c->cap - c->used < n + 1) {
        size_t cap = n + 1 > 65000 ? n + 1 : 65000;
        c = malloc(sizeof *c + cap);
        if (!c)
            return NULL;
        c->next = t->chunks;
        c->used = 0;
        c->cap = cap;
        t->chunks = c;
    }
    char *d = c->data + c->used;
    memcpy(d, s, n);
    d[n] = 0;
    c->used += n + 1;
    t->slots[j] = d;
    t->n++;
    return d;
}

static void free_chunks(struct chunk *c)
{
    while (c) {
        struct chunk *next = c->next;
        free(c);
        c = next;
    }
}

/* Lexically normalizes a path in place: drops "." and empty components, folds "dir/..". */
static size_t path_normalize(char *s)
{
    size_t n = strlen(s), i = 0, o = 0;
    int abs = n > 0 && s[0] == '/';
    size_t root = abs ? 1 : 0;
    o = root;
    while (i < n) {
        while (i < n && s[i] == '/')
            i++;
        size_t st = i;
        while (i < n && s[i] != '/')
            i++;
        size_t len = i - st;
        if (len == 0)
            break;
        if (len == 1 && s[st] == '.')
            continue;
        if (len == 2 && s[st] == '.' && s[st + 1] == '.') {
            if (o > root) {
                size_t k = o;
                while (k > root && s[k - 1] != '/')
                    k--;
                if (!(o - k == 2 && s[k] == '.' && s[k + 1] == '.')) {
                    o = k > root ? k - 1 : root;
                    continue;
                }
            } else if (abs) {
                continue; /* "/.." is "/" */
            }
        }
        if (o > root)
            s[o++] = '/';
        memmove(s + o, s + st, len);
        o += len;
    }
    if (o == 0 && n > 0)
        s[o++] = '.';
    s[o] = 0;
    return o;
}

/* ------------------------------------------------------------------------------------------ */
/* Compilation directories of DWARF 2-4 units: DW_AT_comp_dir of each CU by DW_AT_stmt_list   */

struct cdir {
    uint64_t stmt;
    const char *dir;
};

static int cdir_cmp(const void *a, const void *b)
{
    const struct cdir *x = a, *y = b;
    return x->stmt < y->stmt ? -1 : x->stmt > y->stmt;
}

/* Attribute specs of abbreviation `code` in the table at `off`, positioned in *r; 0 if found. */
static int find_abbrev(const struct sec *ab, uint64_t off, uint64_t code, struct rd *r)
{
    if (off >= ab->size)
        return -1;
    rd_init(r, ab->data + off, ab->data + ab->size);
    for (;;) {
        uint64_t c = rd_uleb(r);
        if (r->bad || c == 0)
            return -1;
        rd_uleb(r); /* tag */
        rd_u(r, 1); /* children */
        if (c == code)
            return r->bad ? -1 : 0;
        for (;;) {
            uint64_t at = rd_uleb(r), form = rd_uleb(r);
            if (form == FORM_implicit_const)
                rd_sleb(r);
            if (r->bad)
                return -1;
            if (at == 0 && form == 0)
                break;
        }
    }
}

static struct cdir *read_comp_dirs(struct elf *e, size_t *count)
{
    *count = 0;
    const struct sec *info = elf_sec(e, S_INFO), *abbrev = elf_sec(e, S_ABBREV);
    if (!info->data || !abbrev->data)
        return NULL;
    struct cdir *v = NULL;
    size_t n = 0, cap = 0;
    size_t off = 0;
    while (info->size - off >= 4) {
        struct rd r;
        rd_init(&r, info->data + off, info->data + info->size);
        uint64_t len = rd_u(&r, 4);
        unsigned osz = 4;
        if (len == 0xffffffffu) {
            len = rd_u(&r, 8);
            osz = 8;
        } else if (len >= 0xfffffff0u) {
            break;
        }
        if (r.bad || len > (uint64_t)(r.end - r.p))
            break;
        const unsigned char *uend = r.p + len;
        off = (size_t)(uend - info->data);
        r.end = uend;
        struct fctx c = {.osz = osz, .e = e};
        c.version = (unsigned)rd_u(&r, 2);
        uint64_t abbr_off;
        if (c.version < 2 || c.version > 5)
            continue;
        if (c.version >= 5) {
            unsigned ut = (unsigned)rd_u(&r, 1);
            c.asz = (unsigned)rd_u(&r, 1);
            abbr_off = rd_u(&r, osz);
            if (ut == 4 || ut == 5) /* skeleton, split_compile: dwo_id */
                rd_skip(&r, 8);
            else if (ut != 1 && ut != 3) /* not a compile or partial unit */
                continue;
        } else {
            abbr_off = rd_u(&r, osz);
            c.asz = (unsigned)rd_u(&r, 1);
        }
        uint64_t code = rd_uleb(&r);
        struct rd ar;
        if (r.bad || code == 0 || find_abbrev(abbrev, abbr_off, code, &ar) != 0)
            continue;
        uint64_t stmt = 0;
        int have_stmt = 0;
        const char *dir = NULL;
        for (;;) {
            uint64_t at = rd_uleb(&ar), form = rd_uleb(&ar);
            if (form == FORM_implicit_const)
                rd_sleb(&ar);
            if (ar.bad || (at == 0 && form == 0))
                break;
            struct fval fv;
            if (read_form(&r, form, &c, &fv) != 0)
                break;
            if (at == 0x10) { /* DW_AT_stmt_list */
                stmt = fv.num;
                have_stmt = 1;
            } else if (at == 0x1b) { /* DW_AT_comp_dir */
                dir = fv.str;
            }
            if (have_stmt && dir)
                break;
        }
        if (!have_stmt || !dir)
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            struct cdir *t = realloc(v, cap * sizeof *t);
            if (!t)
                break;
            v = t;
        }
        v[n++] = (struct cdir){stmt, dir};
    }
    if (n)
        qsort(v, n, sizeof *v, cdir_cmp);
    *count = n;
    return v;
}

/* ------------------------------------------------------------------------------------------ */
/* Rows and the index                                                                          */

struct row {
    uint64_t addr;
    const char *file; /* NULL: end of a sequence (or a row naming no valid file) */
    uint32_t line;
    uint32_t ord; /* build: insertion number << 1 | 1 for a row, 0 for an end marker */
};

struct plx_dwarf_lines {
    struct row *rows;
    size_t n;
    struct chunk *strings;
};

struct build {
    struct elf elf;
    struct strtab strs;
    struct row *rows;
    size_t n, cap;
    size_t seq_first; /* first row of the open sequence */
    int oom;
    int cdirs_read;
    struct cdir *cdirs;
    size_t ncdirs;
    char *pathbuf;
    size_t pathcap;
};

static int push_row(struct build *b, uint64_t addr, const char *file, uint32_t line, int is_row)
{
    if (b->n == b->cap) {
        if (b->cap >= MAX_ROWS) {
            b->oom = 1;
            return -1;
        }
        size_t cap = b->cap ? 2 * b->cap : 4096;
        if (cap > MAX_ROWS)
            cap = MAX_ROWS;
        struct row *t = realloc(b->rows, cap * sizeof *t);
        if (!t) {
            b->oom = 1;
            return -1;
        }
        b->rows = t;
        b->cap = cap;
    }
    b->rows[b->n] = (struct row){addr, file, line, (uint32_t)(b->n << 1) | (is_row ? 1u : 0u)};
    b->n++;
    return 0;
}

static void emit_row(struct build *b, uint64_t addr, const char *file, uint32_t line)
{
    if (b->n > b->seq_first) {
        const struct row *last = &b->rows[b->n - 1];
        /* a row repeating the previous file and line adds nothing to lookups */
        if (last->file == file && last->line == line && addr >= last->addr)
            return;
    }
    push_row(b, addr, file, line, 1);
}

static void end_sequence(struct build *b, uint64_t addr)
{
    size_t n = b->n;
    /* rows at or past the end address are empty */
    while (n > b->seq_first && b->rows[n - 1].addr >= addr)
        n--;
    if (n == b->seq_first || !elf_keeps(&b->elf, b->rows[b->seq_first].addr)) {
        b->n = b->seq_first;
        return;
    }
    b->n = n;
    push_row(b, addr, NULL, 0, 0);
    b->seq_first = b->n;
}

static const char *comp_dir_of(struct build *b, uint64_t unit_off)
{
    if (!b->cdirs_read) {
        b->cdirs_read = 1;
        b->cdirs = read_comp_dirs(&b->elf, &b->ncdirs);
    }
    size_t lo = 0, hi = b->ncdirs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (b->cdirs[mid].stmt < unit_off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < b->ncdirs && b->cdirs[lo].stmt == unit_off ? b->cdirs[lo].dir : NULL;
}

/* Interned "base/dir/file" (parts optional, absolute parts restart the path), normalized. */
static const char *join_path(struct build *b, const char *base, const char *dir, const char *file)
{
    const char *parts[3] = {base, dir, file};
    int first = 0;
    for (int i = 0; i < 3; i++)
        if (parts[i] && parts[i][0] == '/')
            first = i;
    size_t need = 1;
    for (int i = first; i < 3; i++)
        if (parts[i])
            need += strlen(parts[i]) + 1;
    if (need > b->pathcap) {
        char *t = realloc(b->pathbuf, need);
        if (!t) {
            b->oom = 1;
            return NULL;
        }
        b->pathbuf = t;
        b->pathcap = need;
    }
    size_t o = 0;
    for (int i = first; i < 3; i++) {
        if (!parts[i] || !parts[i][0])
            continue;
        if (o)
            b->pathbuf[o++] = '/';
        size_t l = strlen(parts[i]);
        memcpy(b->pathbuf + o, parts[i], l);
        o += l;
    }
    b->pathbuf[o] = 0;
    size_t len = path_normalize(b->pathbuf);
    const char *p = intern(&b->strs, b->pathbuf, len);
    if (!p)
        b->oom = 1;
    return p;
}

struct fent {
    const char *name;
    uint64_t dir;
    const char *path; /* resolved, or NULL not yet */
    int resolved;
};

struct unit {
    unsigned version;
    const char *comp_dir; /* DWARF 2-4 */
    const char **dirs;
    size_t ndirs, capdirs;
    struct fent *files;
    size_t nfiles, capfiles;
};

static int add_dir(struct unit *u, const char *d)
{
    if (u->ndirs == u->capdirs) {
        size_t cap = u->capdirs ? 2 * u->capdirs : 16;
        const char **t = realloc(u->dirs, cap * sizeof *t);
        if (!t)
            return -1;
        u->dirs = t;
        u->capdirs = cap;
    }
    u->dirs[u->ndirs++] = d;
    return 0;
}

static int add_file(struct unit *u, const char *name, uint64_t dir)
{
    if (u->nfiles == u->capfiles) {
        size_t cap = u->capfiles ? 2 * u->capfiles : 32;
        struct fent *t = realloc(u->files, cap * sizeof *t);
        if (!t)
            return -1;
        u->files = t;
        u->capfiles = cap;
    }
    u->files[u->nfiles++] = (struct fent){name, dir, NULL, 0};
    return 0;
}

/* Path of file register value `idx` (1-based before DWARF 5, 0-based from 5), or NULL. */
static const char *unit_file(struct build *b, struct unit *u, uint64_t idx)
{
    uint64_t i = u->version >= 5 ? idx : idx - 1;
    if (i >= u->nfiles)
        return NULL;
    struct fent *f = &u->files[i];
    if (f->resolved)
        return f->path;
    f->resolved = 1;
    if (!f->name)
        return NULL;
    const char *base, *dir = NULL;
    if (u->version >= 5) {
        base = u->ndirs ? u->dirs[0] : NULL;
        if (f->dir != 0 && f->dir < u->ndirs)
            dir = u->dirs[f->dir];
    } else {
        base = u->comp_dir;
        if (f->dir != 0 && f->dir <= u->ndirs)
            dir = u->dirs[f->dir - 1];
    }
    f->path = join_path(b, base, dir, f->name);
    return f->path;
}

/* DWARF 5 directory / file name table; 0 on success. */
static int read_v5_entries(struct rd *h, const struct fctx *c, struct unit *u, int files)
{
    uint64_t fmt[255][2];
    unsigned nfmt = (unsigned)rd_u(h, 1);
    for (unsigned i = 0; i < nfmt; i++) {
        fmt[i][0] = rd_uleb(h);
        fmt[i][1] = rd_uleb(h);
    }
    uint64_t count = rd_uleb(h);
    if (h->bad || (count && (nfmt == 0 || count > (uint64_t)(h->end - h->p))))
        return -1;
    for (uint64_t k = 0; k < count; k++) {
        const char *name = NULL;
        uint64_t dir = 0;
        for (unsigned i = 0; i < nfmt; i++) {
            struct fval v;
            if (read_form(h, fmt[i][1], c, &v) != 0)
                return -1;
            if (fmt[i][0] == 1) /* DW_LNCT_path */
                name = v.str;
            else if (fmt[i][0] == 2) /* DW_LNCT_directory_index */
                dir = v.num;
        }
        if (files ? add_file(u, name, dir) : add_dir(u, name))
            return -1;
    }
    return 0;
}

/* Runs one line-number program; `p` is just past unit_length, `uend` the unit's end. */
static void parse_unit(struct build *b, const unsigned char *p, const unsigned char *uend, unsigned osz,
                       uint64_t unit_off)
{
    struct rd r;
    rd_init(&r, p, uend);
    struct unit u = {0};
    struct fctx c = {.osz = osz, .asz = 8, .e = &b->elf};
    c.version = u.version = (unsigned)rd_u(&r, 2);
    if (u.version < 2 || u.version > 5)
        return;
    if (u.version >= 5) {
        c.asz = (unsigned)rd_u(&r, 1);
        rd_u(&r, 1); /* segment_selector_size */
    }
    uint64_t hlen = rd_u(&r, osz);
    if (r.bad || hlen > (uint64_t)(uend - r.p))
        return;
    const unsigned char *prog = r.p + hlen;
    struct rd h;
    rd_init(&h, r.p, prog);
    unsigned min_inst = (unsigned)rd_u(&h, 1);
    unsigned max_ops = u.version >= 4 ? (unsigned)rd_u(&h, 1) : 1;
    rd_u(&h, 1); /* default_is_stmt */
    int line_base = (int)(signed char)rd_u(&h, 1);
    unsigned line_range = (unsigned)rd_u(&h, 1);
    unsigned opcode_base = (unsigned)rd_u(&h, 1);
    const unsigned char *std_len = h.p;
    if (opcode_base > 0)
        rd_skip(&h, opcode_base - 1);
    if (h.bad || line_range == 0 || opcode_base == 0)
        return;
    if (max_ops == 0)
        max_ops = 1;

    if (u.version >= 5) {
        if (read_v5_entries(&h, &c, &u, 0) || read_v5_entries(&h, &c, &u, 1))
            goto out;
    } else {
        u.comp_dir = comp_dir_of(b, unit_off);
        for (;;) {
            const char *d = rd_str(&h);
            if (!d || !*d)
                break;
            if (add_dir(&u, d))
                goto out;
        }
        for (;;) {
            const char *f = rd_str(&h);
            if (!f || !*f)
                break;
            uint64_t dir = rd_uleb(&h);
            rd_uleb(&h); /* mtime */
            rd_uleb(&h); /* length */
            if (h.bad || add_file(&u, f, dir))
                goto out;
        }
        if (h.bad)
            goto out;
    }

    /* the state machine */
    static const unsigned char std_ops[13] = {0, 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1};
    rd_init(&r, prog, uend);
    b->seq_first = b->n;
    uint64_t addr = 0, op_index = 0, file = 1, line = 1;
    const char *fpath = NULL;
    int fvalid = 0;
#define ADVANCE(opadv)                                                                              \
    do {                                                                                           \
        uint64_t adv_ = (opadv);                                                                   \
        if (max_ops == 1) {                                                                        \
            addr += (uint64_t)min_inst * adv_;                                                     \
        } else {                                                                                   \
            addr += (uint64_t)min_inst * ((op_index + adv_) / max_ops);                            \
            op_index = (op_index + adv_) % max_ops;                                                \
        }                                                                                          \
    } while (0)
#define ROW()                                                                                      \
    do {                                                                                           \
        if (!fvalid) {                                                                             \
            fpath = unit_file(b, &u, file);                                                        \
            fvalid = 1;                                                                            \
        }                                                                                          \
        emit_row(b, addr, fpath, (uint32_t)line);                                                  \
    } while (0)
    while (r.p < r.end && !r.bad && !b->oom) {
        unsigned op = *r.p++;
        if (op >= opcode_base) {
            unsigned adj = op - opcode_base;
            ADVANCE(adj / line_range);
            line += (uint64_t)(int64_t)(line_base + (int)(adj % line_range));
            ROW();
            continue;
        }
        if (op == 0) { /* extended */
            uint64_t len = rd_uleb(&r);
            if (r.bad || len > (uint64_t)(r.end - r.p))
                break;
            if (len == 0)
                continue;
            const unsigned char *next = r.p + len;
            struct rd e;
            rd_init(&e, r.p, next);
            unsigned sub = (unsigned)rd_u(&e, 1);
            switch (sub) {
            case 1: /* DW_LNE_end_sequence */
                end_sequence(b, addr);
                addr = 0;
                op_index = 0;
                file = 1;
                line = 1;
                fvalid = 0;
                break;
            case 2: /* DW_LNE_set_address */
                if (len - 1 >= 1 && len - 1 <= 8) {
                    addr = rd_u(&e, (unsigned)(len - 1));
                    op_index = 0;
                }
                break;
            case 3: /* DW_LNE_define_file */
                if (u.version <= 4) {
                    const char *f = rd_str(&e);
                    uint64_t dir = rd_uleb(&e);
                    if (f && !e.bad && add_file(&u, f, dir))
                        goto out;
                }
                break;
            default: /* set_discriminator and the rest: skipped by length */
                break;
            }
            r.p = next;
            continue;
        }
        unsigned nargs = std_len[op - 1];
        if (op < 13 && nargs != std_ops[op]) {
            /* a standard opcode declared with an unexpected operand count: skip it */
            for (unsigned i = 0; i < nargs; i++)
                rd_uleb(&r);
            continue;
        }
        switch (op) {
        case 1: /* DW_LNS_copy */
            ROW();
            break;
        case 2: /* DW_LNS_advance_pc */
            ADVANCE(rd_uleb(&r));
            break;
        case 3: /* DW_LNS_advance_line */
            line += (uint64_t)rd_sleb(&r);
            break;
        case 4: /* DW_LNS_set_file */
            file = rd_uleb(&r);
            fvalid = 0;
            break;
        case 5: /* DW_LNS_set_column */
            rd_uleb(&r);
            break;
        case 6: /* DW_LNS_negate_stmt */
        case 7: /* DW_LNS_set_basic_block */
        case 10: /* DW_LNS_set_prologue_end */
        case 11: /* DW_LNS_set_epilogue_begin */
            break;
        case 8: /* DW_LNS_const_add_pc */
            ADVANCE((255 - opcode_base) / line_range);
            break;
        case 9: /* DW_LNS_fixed_advance_pc */
            addr += rd_u(&r, 2);
            op_index = 0;
            break;
        case 12: /* DW_LNS_set_isa */
            rd_uleb(&r);
            break;
        default: /* unknown standard opcode */
            for (unsigned i = 0; i < nargs; i++)
                rd_uleb(&r);
            break;
        }
    }
#undef ADVANCE
#undef ROW
out:
    b->n = b->seq_first; /* drop an unfinished sequence */
    free(u.dirs);
    free(u.files);
}

static int row_cmp(const void *a, const void *b)
{
    const struct row *x = a, *y = b;
    if (x->addr != y->addr)
        return x->addr < y->addr ? -1 : 1;
    /* at one address: end markers first, then rows in program order (the last one wins) */
    uint32_t kx = x->ord & 1, ky = y->ord & 1;
    if (kx != ky)
        return kx < ky ? -1 : 1;
    return x->ord < y->ord ? -1 : x->ord > y->ord;
}

API struct plx_dwarf_lines *plx_dwarf_lines_build(const unsigned char *image, size_t size)
{
    struct build b;
    memset(&b, 0, sizeof b);
    struct plx_dwarf_lines *d = NULL;
    if (elf_open(&b.elf, image, size) != 0)
        goto done;

    const struct sec *ls = elf_sec(&b.elf, S_LINE);
    size_t off = 0;
    while (ls->size - off >= 4 && !b.oom) {
        struct rd r;
        rd_init(&r, ls->data + off, ls->data + ls->size);
        uint64_t len = rd_u(&r, 4);
        unsigned osz = 4;
        if (len == 0xffffffffu) {
            len = rd_u(&r, 8);
            osz = 8;
        } else if (len >= 0xfffffff0u) {
            break; /* reserved */
        }
        if (r.bad || len > (uint64_t)(r.end - r.p))
            break; /* truncated: the next unit cannot be found */
        parse_unit(&b, r.p, r.p + len, osz, off);
        off = (size_t)(r.p + len - ls->data);
    }
    if (b.oom || b.n == 0)
        goto done;

    qsort(b.rows, b.n, sizeof *b.rows, row_cmp);
    /* keep the last row of each address, then drop rows that repeat their predecessor */
    size_t o = 0;
    for (size_t i = 0; i < b.n; i++) {
        if (i + 1 < b.n && b.rows[i + 1].addr == b.rows[i].addr)
            continue;
        const struct row *cur = &b.rows[i];
        if (o > 0) {
            const struct row *prev = &b.rows[o - 1];
            if (prev->file == cur->file && (!cur->file || prev->line == cur->line))
                continue;
        } else if (!cur->file) {
            continue;
        }
        b.rows[o++] = *cur;
    }
    if (o == 0)
        goto done;
    d = malloc(sizeof *d);
    if (!d)
        goto done;
    struct row *shrunk = realloc(b.rows, o * sizeof *b.rows);
    d->rows = shrunk ? shrunk : b.rows;
    d->n = o;
    d->strings = b.strs.chunks;
    b.rows = NULL;
    b.strs.chunks = NULL;
done:
    free(b.rows);
    free_chunks(b.strs.chunks);
    free(b.strs.slots);
    free(b.cdirs);
    free(b.pathbuf);
    elf_release(&b.elf);
    return d;
}

API const char *plx_dwarf_file_of(const struct plx_dwarf_lines *d, uint64_t file_addr, unsigned *line)
{
    if (!d)
        return NULL;
    size_t lo = 0, hi = d->n; /* first row with addr > file_addr */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (d->rows[mid].addr <= file_addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0 || !d->rows[lo - 1].file)
        return NULL;
    if (line)
        *line = d->rows[lo - 1].line;
    return d->rows[lo - 1].file;
}

API void plx_dwarf_lines_free(struct plx_dwarf_lines *d)
{
    if (!d)
        return;
    free_chunks(d->strings);
    free(d->rows);
    free(d);
}
