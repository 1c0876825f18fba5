/* Addresses to function names: ELF symbol tables of the executable and every loaded library,
 * read lazily on first sight of an address in a module (never on the hot path). Source files
 * are not read here: the filter's file rules get them from the list `plx run` wrote from the
 * debug information (PLX_SOURCE_FILES, docs/formats/source-files.md); every other source
 * location is resolved by the engine after the run. */
#include "plx_internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sched.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_MODULES 4096

struct sym {
    uint64_t value, size;
    const char *name;
    int ifunc; /* STT_GNU_IFUNC: value is the resolver, the function is what it returns */
};

struct module {
    char path[512];
    uintptr_t base, lo, hi;  /* load bias and the address range of its PT_LOAD segments */
    char build_id[129];      /* GNU build-id in hex (at most 64 bytes), empty if none */
    int loaded;              /* symbols read (or found absent) */
    struct sym *syms;
    size_t nsyms;
    const struct source_module *files; /* its functions named by file rules, once looked up */
    int files_tried;
    int gone; /* unloaded (dlclose): no address is its until a load of the same file revives it */
};

/* One module of the PLX_SOURCE_FILES list: its functions' offsets, ascending, and files. */
struct source_fn {
    uint64_t offset;
    const char *file;
};
struct source_module {
    const char *path; /* canonical, as plx run resolved it */
    struct source_fn *fns;
    size_t nfns;
};
static struct source_module *source_modules;
static size_t nsource_modules;
static int source_tried;

int plx_symbols_want_files;

static struct module modules_table[MAX_MODULES]; /* static: leak checkers see what it holds */
static struct module *modules;
static uint32_t nmodules;
static atomic_flag lock = ATOMIC_FLAG_INIT;
/* This thread holds `lock`: what the code under it reaches again gets nothing rather than wait
 * for itself (the runtime's own dlclose; an mmap reading a symbol table that a library hooks,
 * as UCX does, and whose hook takes a measured lock). */
static PLX_TLS int holding;

/* Takes `lock`; 0 when this thread holds it already. */
static int take(void)
{
    if (holding)
        return 0;
    while (atomic_flag_test_and_set_explicit(&lock, memory_order_acquire))
        sched_yield();
    holding = 1;
    return 1;
}

static void give(void)
{
    holding = 0;
    atomic_flag_clear_explicit(&lock, memory_order_release);
}
static unsigned long long subs_seen; /* dl_iterate_phdr's count of unloads, last looked at */
typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);

static void write_module(uint32_t id)
{
    struct plx_rec rec;
    plx_rec_init(&rec);
    plx_enc_module(&rec, id, modules[id].base, modules[id].path, modules[id].build_id);
    plx_rec_write(&rec, 0);
}

/* The GNU build-id note of a loaded module, read from its PT_NOTE segments in memory (only
 * those inside [lo, hi), which the loader mapped), as hex into out (empty if none). */
static void note_build_id(const struct dl_phdr_info *di, uintptr_t lo, uintptr_t hi, char *out, size_t cap)
{
    out[0] = 0;
    for (int i = 0; i < di->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &di->dlpi_phdr[i];
        uintptr_t p = di->dlpi_addr + ph->p_vaddr, end = p + ph->p_memsz;
        if (ph->p_type != PT_NOTE || p < lo || end > hi || end < p)
            continue;
        while (end - p >= sizeof(ElfW(Nhdr))) {
            const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
            uintptr_t name = p + sizeof *n, desc = name + ((n->n_namesz + 3u) & ~3u);
            uintptr_t next = desc + ((n->n_descsz + 3u) & ~3u);
            if (next > end || next <= p)
                break;
            if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && memcmp((const void *)name, "GNU", 4) == 0 &&
                n->n_descsz > 0 && 2 * (size_t)n->n_descsz < cap) {
                static const char hex[] = "0123456789abcdef";
                const unsigned char *d = (const unsigned char *)desc;
                for (uint32_t k = 0; k < n->n_descsz; k++) {
                    out[2 * k] = hex[d[k] >> 4];
                    out[2 * k + 1] = hex[d[k] & 15];
                }
                out[2 * n->n_descsz] = 0;
                return;
            }
            p = next;
        }
    }
}

/* The address range [*lo, *hi) of di's PT_LOAD segments (*hi 0 when it has none). */
static void load_range(const struct dl_phdr_info *di, uintptr_t *lo, uintptr_t *hi)
{
    *lo = UINTPTR_MAX;
    *hi = 0;
    for (int i = 0; i < di->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &di->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uintptr_t a = di->dlpi_addr + ph->p_vaddr;
        if (a < *lo)
            *lo = a;
        if (a + ph->p_memsz > *hi)
            *hi = a + ph->p_memsz;
    }
}

static int add_module(struct dl_phdr_info *di, size_t size, void *data)
{
    (void)size;
    (void)data;
    uintptr_t lo, hi;
    load_range(di, &lo, &hi);
    if (hi == 0)
        return 0;
    for (uint32_t i = 0; i < nmodules; i++)
        if (modules[i].lo == lo && modules[i].base == di->dlpi_addr && !modules[i].gone)
            return 0;
    if (nmodules >= MAX_MODULES)
        return 1;
    struct module *m = &modules[nmodules];
    memset(m, 0, sizeof *m);
    const char *name = di->dlpi_name;
    if (!name || !*name) {
        ssize_t n = readlink("/proc/self/exe", m->path, sizeof m->path - 1);
        m->path[n > 0 ? n : 0] = 0;
    } else {
        strncpy(m->path, name, sizeof m->path - 1);
    }
    if (strstr(m->path, "linux-vdso") || !m->path[0])
        m->loaded = 1; /* no file to read */
    m->base = di->dlpi_addr;
    m->lo = lo;
    m->hi = hi;
    note_build_id(di, lo, hi, m->build_id, sizeof m->build_id);
    /* the same file (by build-id) loaded again where it was: the module it was, its regions
     * revived (plx_region_of_address_slow) */
    for (uint32_t i = 0; i < nmodules; i++) {
        struct module *o = &modules[i];
        if (o->gone && o->lo == lo && o->hi == hi && o->base == m->base && m->build_id[0] &&
            strcmp(o->build_id, m->build_id) == 0 && strcmp(o->path, m->path) == 0) {
            __atomic_store_n(&o->gone, 0, __ATOMIC_RELEASE);
            return 0;
        }
    }
    write_module(nmodules);
    /* published whole, its Module record written: plx_module_known reads without the lock */
    __atomic_store_n(&nmodules, nmodules + 1, __ATOMIC_RELEASE);
    return 0;
}

PLX_TLS volatile int plx_in_phdr;

/* dl_iterate_phdr's count of unloads (the same in every entry). */
static int read_subs(struct dl_phdr_info *di, size_t size, void *data)
{
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof di->dlpi_subs)
        *(unsigned long long *)data = di->dlpi_subs;
    return 1;
}

/* Every loaded module through add_module, flagged for the sampler (plx_in_phdr). */
static void walk_modules(void)
{
    plx_in_phdr++;
    dl_iterate_phdr(add_module, NULL);
    plx_in_phdr--;
}

static int cmp_sym(const void *a, const void *b)
{
    const struct sym *x = a, *y = b;
    return x->value < y->value ? -1 : x->value > y->value;
}

/* Reads the function symbols of m: .symtab when present, else .dynsym. The file stays mapped:
 * names point into it. */
static void load_symbols(struct module *m)
{
    m->loaded = 1;
    int fd = open(m->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    struct stat st;
    if (fstat(fd, &st) != 0 || (size_t)st.st_size < sizeof(ElfW(Ehdr))) {
        plx_sys_close(fd);
        return;
    }
    const unsigned char *img = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    plx_sys_close(fd);
    if (img == MAP_FAILED)
        return;
    size_t fsize = (size_t)st.st_size;
    const ElfW(Ehdr) *eh = (const void *)img;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
        eh->e_shoff == 0 || eh->e_shoff + (size_t)eh->e_shnum * sizeof(ElfW(Shdr)) > fsize)
        return;
    const ElfW(Shdr) *sh = (const void *)(img + eh->e_shoff);
    const ElfW(Shdr) *tab = NULL;
    for (int pass = 0; pass < 2 && !tab; pass++)
        for (int i = 0; i < eh->e_shnum; i++)
            if (sh[i].sh_type == (pass == 0 ? SHT_SYMTAB : SHT_DYNSYM) && sh[i].sh_size > 0) {
                tab = &sh[i];
                break;
            }
    if (!tab || tab->sh_link >= eh->e_shnum || tab->sh_offset + tab->sh_size > fsize)
        return;
    const ElfW(Shdr) *strs = &sh[tab->sh_link];
    if (strs->sh_offset + strs->sh_size > fsize)
        return;
    const ElfW(Sym) *s = (const void *)(img + tab->sh_offset);
    size_t n = tab->sh_size / sizeof(ElfW(Sym));
    struct sym *out = plx_arena_alloc(n * sizeof *out);
    if (!out)
        return;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        int type = ELF64_ST_TYPE(s[i].st_info);
        if ((type != STT_FUNC && type != STT_GNU_IFUNC) || s[i].st_value == 0 ||
            s[i].st_name >= strs->sh_size)
            continue;
        out[k].value = s[i].st_value;
        out[k].size = s[i].st_size;
        out[k].name = (const char *)img + strs->sh_offset + s[i].st_name;
        out[k].ifunc = type == STT_GNU_IFUNC;
        k++;
    }
    qsort(out, k, sizeof *out, cmp_sym);
    m->syms = out;
    m->nsyms = k;
}

static const struct sym *find_sym(const struct module *m, uint64_t off)
{
    size_t lo = 0, hi = m->nsyms;
    while (lo < hi) { /* first symbol with value > off */
        size_t mid = (lo + hi) / 2;
        if (m->syms[mid].value <= off)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return NULL;
    const struct sym *s = &m->syms[lo - 1];
    if (s->value != off && s->size && off >= s->value + s->size)
        return NULL;
    return s;
}

static int cmp_source_fn(const void *a, const void *b)
{
    const struct source_fn *x = a, *y = b;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* Reads the PLX_SOURCE_FILES list, whose format is: a line "plx-source-files 1", then for each
 * module a line "module PATH" followed by its functions, "OFFSET_HEX FILE" one a line. The
 * text stays allocated: paths and files point into it. */
static void load_source_files(void)
{
    source_tried = 1;
    if (!plx_cfg.source_files[0]) {
        plx_warn("the filter's file rules match no function: PLX_SOURCE_FILES is unset "
                 "(plx run sets it when the filter has file rules)");
        return;
    }
    char *text;
    size_t len;
    if (plx_read_regular(plx_cfg.source_files, PLX_SOURCE_FILES_MAX_BYTES, &text, &len) != 0) {
        plx_warn("%s: cannot read the source-file list: %s; the filter's file rules match no "
                 "function", plx_cfg.source_files, plx_read_error(errno));
        return;
    }
    size_t lines = 1, nmods = 0;
    for (size_t i = 0; i < len; i++)
        lines += text[i] == '\n';
    for (char *p = strstr(text, "\nmodule "); p; p = strstr(p + 1, "\nmodule "))
        nmods++;
    struct source_module *mods = calloc(nmods ? nmods : 1, sizeof *mods);
    struct source_fn *fns = calloc(lines, sizeof *fns);
    if (!mods || !fns || strncmp(text, "plx-source-files 1\n", 19) != 0) {
        if (mods && fns)
            plx_warn("%s: not a source-file list of this version", plx_cfg.source_files);
        free(mods);
        free(fns);
        free(text);
        return;
    }
    struct source_module *cur = NULL;
    size_t nfns = 0, lineno = 1;
    for (char *line = text + 19, *next; *line; line = next, lineno++) {
        next = strchr(line, '\n');
        if (next)
            *next++ = 0;
        else
            next = line + strlen(line);
        if (strncmp(line, "module ", 7) == 0) {
            cur = &mods[nsource_modules++];
            cur->path = line + 7;
            cur->fns = &fns[nfns];
            continue;
        }
        char *end;
        unsigned long long off = strtoull(line, &end, 16);
        if (!cur || end == line || *end != ' ' || !end[1]) {
            plx_warn("%s:%zu: not 'OFFSET FILE' under a 'module PATH' line; skipped",
                     plx_cfg.source_files, lineno + 1);
            continue;
        }
        fns[nfns++] = (struct source_fn){off, end + 1};
        cur->nfns++;
    }
    for (size_t i = 0; i < nsource_modules; i++)
        qsort(mods[i].fns, mods[i].nfns, sizeof *mods[i].fns, cmp_source_fn);
    source_modules = mods;
}

/* The source file of the function at `offset` in m, when a file rule names it. */
static const char *source_file_of(struct module *m, uint64_t offset)
{
    if (!source_tried)
        load_source_files();
    if (!m->files_tried) {
        m->files_tried = 1;
        char real[PATH_MAX];
        const char *path = realpath(m->path, real) ? real : m->path;
        for (size_t i = 0; i < nsource_modules; i++)
            if (strcmp(source_modules[i].path, path) == 0)
                m->files = &source_modules[i];
    }
    const struct source_module *s = m->files;
    if (!s)
        return NULL;
    size_t lo = 0, hi = s->nfns;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (s->fns[mid].offset < offset)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < s->nfns && s->fns[lo].offset == offset ? s->fns[lo].file : NULL;
}

static struct module *module_of(uintptr_t addr)
{
    for (uint32_t i = 0; i < nmodules; i++)
        if (addr >= modules[i].lo && addr < modules[i].hi && !modules[i].gone)
            return &modules[i];
    return NULL;
}

/* The executable's symbols are read here, before the program runs: its functions are the
 * ones the compiler hooks meet first, and their first sight then costs a table search. */
void plx_symbols_init(void)
{
    modules = modules_table;
    walk_modules();
    if (nmodules && !modules[0].loaded)
        load_symbols(&modules[0]);
}

static const char *demangle(const char *name)
{
    static demangle_fn fn;
    if (name[0] != '_' || name[1] != 'Z')
        return name;
    if (!fn)
        fn = (demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle");
    if (!fn)
        return name; /* no C++ runtime loaded: the reader demangles */
    int status = 0;
    char *d = fn(name, NULL, NULL, &status);
    if (status != 0 || !d)
        return name;
    char *kept = plx_arena_strdup(d);
    free(d);
    return kept ? kept : name;
}

int plx_symbol_lookup(uintptr_t addr, struct plx_symbol *out)
{
    if (!modules || !take())
        return -1;
    struct module *m = module_of(addr);
    if (!m) { /* loaded by dlopen since we last looked */
        walk_modules();
        m = module_of(addr);
    }
    int rc = -1;
    if (m) {
        if (!m->loaded)
            load_symbols(m);
        out->module_id = (uint32_t)(m - modules);
        out->offset = addr - m->base;
        const struct sym *s = find_sym(m, addr - m->base);
        out->deleting_dtor = s && plx_name_is_deleting_dtor(s->name);
        if (s) {
            out->name = demangle(s->name);
            rc = 0;
        }
        if (plx_symbols_want_files)
            out->file = source_file_of(m, addr - m->base);
    }
    give();
    return rc;
}

uint32_t plx_module_of(uintptr_t addr)
{
    if (!modules || !take())
        return PLX_NO_INDEX;
    struct module *m = module_of(addr);
    if (!m) { /* loaded by dlopen since we last looked: its Module record is written now */
        walk_modules();
        m = module_of(addr);
    }
    give();
    return m ? (uint32_t)(m - modules) : PLX_NO_INDEX;
}

void plx_modules_list(void)
{
    if (!modules || !take())
        return;
    walk_modules();
    give();
}

/* Async-signal-safe (no lock, no lookup of new modules): the module holding addr among those
 * already recorded and loaded, PLX_NO_INDEX if none. Entries are never changed once published
 * but for their `gone` flag. */
uint32_t plx_module_known(uintptr_t addr)
{
    const struct module *m = modules;
    uint32_t n = __atomic_load_n(&nmodules, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; m && i < n; i++)
        if (addr >= m[i].lo && addr < m[i].hi && !__atomic_load_n(&m[i].gone, __ATOMIC_ACQUIRE))
            return i;
    return PLX_NO_INDEX;
}

int plx_module_gone(uint32_t id)
{
    return id < __atomic_load_n(&nmodules, __ATOMIC_ACQUIRE) &&
           __atomic_load_n(&modules[id].gone, __ATOMIC_ACQUIRE);
}

void plx_symbols_each_function(void (*fn)(const struct plx_function_symbol *, void *), void *arg)
{
    if (!modules || !take())
        return;
    walk_modules();
    for (uint32_t i = 0; i < nmodules; i++) {
        struct module *m = &modules[i];
        if (m->gone)
            continue;
        if (!m->loaded)
            load_symbols(m);
        void *handle = NULL;
        for (size_t k = 0; k < m->nsyms; k++) {
            struct plx_function_symbol s = {m->path, i, m->base + m->syms[k].value,
                                            m->syms[k].size, m->syms[k].name, 0};
            if (m->syms[k].ifunc) { /* the implementation the loader chose, under this name */
                if (!handle && i > 0)
                    handle = dlopen(m->path, RTLD_LAZY | RTLD_NOLOAD);
                void *impl = handle ? dlsym(handle, m->syms[k].name) : NULL;
                const struct sym *is = impl ? find_sym(m, (uintptr_t)impl - m->base) : NULL;
                if (!impl)
                    continue;
                s.address = (uintptr_t)impl;
                s.size = is && is->value + m->base == (uintptr_t)impl ? is->size : 0;
                s.unsized = s.size == 0;
            }
            fn(&s, arg);
        }
        if (handle)
            dlclose(handle);
    }
    give();
}

void plx_modules_rewrite(void)
{
    holding = 0;
    atomic_flag_clear(&lock);
    for (uint32_t i = 0; i < nmodules; i++)
        write_module(i);
}


/* Marks in `seen` the recorded module that di is (as add_module matches them). */
static int mark_loaded(struct dl_phdr_info *di, size_t size, void *seen)
{
    (void)size;
    uintptr_t lo, hi;
    load_range(di, &lo, &hi);
    for (uint32_t i = 0; i < nmodules; i++)
        if (modules[i].lo == lo && modules[i].base == di->dlpi_addr && !modules[i].gone)
            ((unsigned char *)seen)[i] = 1;
    return 0;
}

uint32_t plx_symbols_unloaded(uint32_t *ids, uint32_t cap)
{
    if (!modules || holding)
        return 0;
    unsigned long long subs = 0;
    plx_in_phdr++;
    dl_iterate_phdr(read_subs, &subs);
    plx_in_phdr--;
    if (subs == __atomic_load_n(&subs_seen, __ATOMIC_RELAXED) || !take())
        return 0; /* nothing unloaded since the last look */
    static unsigned char seen[MAX_MODULES];
    memset(seen, 0, nmodules);
    plx_in_phdr++;
    dl_iterate_phdr(mark_loaded, seen);
    plx_in_phdr--;
    uint32_t n = 0;
    for (uint32_t i = 0; i < nmodules && n < cap; i++) {
        if (seen[i] || modules[i].gone)
            continue;
        __atomic_store_n(&modules[i].gone, 1, __ATOMIC_RELEASE);
        ids[n++] = i;
    }
    if (n < cap) /* all of them told: the next look starts from this count */
        __atomic_store_n(&subs_seen, subs, __ATOMIC_RELAXED);
    give();
    return n;
}
