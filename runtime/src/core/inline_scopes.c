/* The functions inlined at an address, from the module's debug information (DWARF
 * DW_TAG_inlined_subroutine): which frames of one physical frame are still open where a catch
 * handler runs (adapters/cxx_catch.c). An inlined function's compiler hooks run at the stack
 * pointer of the function it is inlined into, so the hooks alone cannot tell a frame a throw
 * left from one still live; the scopes around the handler's address can.
 *
 * libdw (elfutils, libdw.so.1) is loaded with dlopen at the first question, RTLD_LOCAL, and only
 * then: most programs never ask. A module's debug information is opened once and kept; each
 * address's answer is kept too (a handler runs again and again). Without libdw, or for a module
 * built without -g, the answer is "unknown" and the caller keeps its own rule. */
#include "plx_internal.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <sched.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef PLX_HAVE_LIBDW
#include <dwarf.h>
#include <elfutils/libdw.h>

#define MAX_MODULES 64
#define ANSWERS 1024 /* addresses kept (open addressing; a full table answers without keeping) */

struct dw_module {
    uintptr_t bias; /* the link map's l_addr: address - bias = the file's address */
    Dwarf *dw;      /* NULL: no debug information */
    int fd;
};

struct answer {
    uintptr_t pc; /* 0: empty */
    int n;        /* names, outermost first; -1: unknown */
    const char **names;
};

static struct {
    Dwarf *(*begin)(int, Dwarf_Cmd);
    int (*end)(Dwarf *);
    Dwarf_Die *(*addrdie)(Dwarf *, Dwarf_Addr, Dwarf_Die *);
    int (*child)(Dwarf_Die *, Dwarf_Die *);
    int (*siblingof)(Dwarf_Die *, Dwarf_Die *);
    int (*tag)(Dwarf_Die *);
    Dwarf_Attribute *(*attr_integrate)(Dwarf_Die *, unsigned int, Dwarf_Attribute *);
    const char *(*formstring)(Dwarf_Attribute *);
    int (*nextcu)(Dwarf *, Dwarf_Off, Dwarf_Off *, size_t *, Dwarf_Off *, uint8_t *, uint8_t *);
    Dwarf_Die *(*offdie)(Dwarf *, Dwarf_Off, Dwarf_Die *);
    int (*haspc)(Dwarf_Die *, Dwarf_Addr);
} dw;
static int loaded; /* 0: not tried, 1: loaded, -1: cannot be */
static struct dw_module modules[MAX_MODULES];
static int nmodules;
static struct answer answers[ANSWERS];
static atomic_flag lock = ATOMIC_FLAG_INIT;

static int load_libdw(void)
{
    void *h = dlopen("libdw.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return -1;
    dw.begin = (Dwarf *(*)(int, Dwarf_Cmd))dlsym(h, "dwarf_begin");
    dw.end = (int (*)(Dwarf *))dlsym(h, "dwarf_end");
    dw.addrdie = (Dwarf_Die * (*)(Dwarf *, Dwarf_Addr, Dwarf_Die *)) dlsym(h, "dwarf_addrdie");
    dw.child = (int (*)(Dwarf_Die *, Dwarf_Die *))dlsym(h, "dwarf_child");
    dw.siblingof = (int (*)(Dwarf_Die *, Dwarf_Die *))dlsym(h, "dwarf_siblingof");
    dw.tag = (int (*)(Dwarf_Die *))dlsym(h, "dwarf_tag");
    dw.attr_integrate =
        (Dwarf_Attribute * (*)(Dwarf_Die *, unsigned int, Dwarf_Attribute *)) dlsym(h, "dwarf_attr_integrate");
    dw.formstring = (const char *(*)(Dwarf_Attribute *))dlsym(h, "dwarf_formstring");
    dw.nextcu = (int (*)(Dwarf *, Dwarf_Off, Dwarf_Off *, size_t *, Dwarf_Off *, uint8_t *,
                         uint8_t *))dlsym(h, "dwarf_nextcu");
    dw.offdie = (Dwarf_Die * (*)(Dwarf *, Dwarf_Off, Dwarf_Die *)) dlsym(h, "dwarf_offdie");
    dw.haspc = (int (*)(Dwarf_Die *, Dwarf_Addr))dlsym(h, "dwarf_haspc");
    return dw.begin && dw.end && dw.addrdie && dw.child && dw.siblingof && dw.tag && dw.attr_integrate && dw.formstring &&
                   dw.nextcu && dw.offdie && dw.haspc
               ? 0
               : -1;
}

/* The debug information of the module holding `pc`, opened once (NULL: none). */
static struct dw_module *module_at(uintptr_t pc)
{
    Dl_info info;
    struct link_map *lm = NULL;
    if (!dladdr1((void *)pc, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm)
        return NULL;
    for (int i = 0; i < nmodules; i++)
        if (modules[i].bias == lm->l_addr)
            return &modules[i];
    if (nmodules == MAX_MODULES)
        return NULL;
    struct dw_module *m = &modules[nmodules++];
    m->bias = lm->l_addr;
    m->dw = NULL;
    m->fd = -1;
    const char *path = lm->l_name && lm->l_name[0] ? lm->l_name : "/proc/self/exe";
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return m;
    /* out of the way of a program that dup2()s onto low descriptors; kept open for libdw */
    int high = fcntl(fd, F_DUPFD_CLOEXEC, 512);
    if (high >= 0) {
        close(fd);
        fd = high;
    }
    m->dw = dw.begin(fd, DWARF_C_READ);
    if (!m->dw)
        close(fd);
    else
        m->fd = fd;
    return m;
}

/* A scope's function name: the linkage name (C++), else the name (C, and GCC's static
 * functions), of the function itself where the scope is an inlined or out-of-line instance. */
static const char *scope_name(Dwarf_Die *d)
{
    Dwarf_Attribute a;
    static const unsigned int names[] = {DW_AT_linkage_name, DW_AT_MIPS_linkage_name, DW_AT_name};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (dw.attr_integrate(d, names[i], &a))
            return dw.formstring(&a);
    return NULL;
}

/* The compilation unit whose ranges hold `a`, searched one by one: Clang writes no
 * .debug_aranges, which dwarf_addrdie reads. */
static Dwarf_Die *cu_holding(Dwarf *d, Dwarf_Addr a, Dwarf_Die *cu)
{
    Dwarf_Off off = 0, next;
    size_t header;
    while (dw.nextcu(d, off, &next, &header, NULL, NULL, NULL) == 0) {
        if (dw.offdie(d, off + header, cu) && dw.haspc(cu, a) > 0)
            return cu;
        off = next;
    }
    return NULL;
}

#define MAX_SCOPES 256

/* The functions around file address `a` in the DIEs under `parent`, appended to found[k..]:
 * the child whose ranges hold `a` (a function, an inlined function, a block), and the ones
 * inside it; namespaces and classes are searched through (GCC puts C++ functions in them).
 * The concrete tree, not dwarf_getscopes': that one continues from an inlined function's
 * abstract origin, leaving out the function it is inlined into. Returns the new count, -1 when
 * a function has no name. */
static int walk(Dwarf_Die *parent, Dwarf_Addr a, const char **found, int k, int depth)
{
    Dwarf_Die child;
    if (depth > MAX_SCOPES || dw.child(parent, &child) != 0)
        return k;
    do {
        int tag = dw.tag(&child);
        switch (tag) {
        case DW_TAG_subprogram:
        case DW_TAG_inlined_subroutine:
        case DW_TAG_lexical_block:
        case DW_TAG_try_block:
        case DW_TAG_catch_block:
            if (dw.haspc(&child, a) <= 0)
                break;
            if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) {
                if (k == MAX_SCOPES)
                    return k;
                if (!(found[k++] = scope_name(&child)))
                    return -1;
            }
            return walk(&child, a, found, k, depth + 1);
        case DW_TAG_namespace:
        case DW_TAG_class_type:
        case DW_TAG_structure_type:
        case DW_TAG_union_type: {
            int n = walk(&child, a, found, k, depth + 1);
            if (n != k)
                return n;
            break;
        }
        default:
            break;
        }
    } while (dw.siblingof(&child, &child) == 0);
    return k;
}

/* The answer for `pc`, computed: -1 when unknown. */
static int compute(uintptr_t pc, const char ***out)
{
    struct dw_module *m = module_at(pc);
    if (!m || !m->dw)
        return -1;
    Dwarf_Addr a = pc - m->bias;
    Dwarf_Die cu;
    if (!dw.addrdie(m->dw, a, &cu) && !cu_holding(m->dw, a, &cu))
        return -1;
    const char *found[MAX_SCOPES];
    int k = walk(&cu, a, found, 0, 0);
    if (k <= 0)
        return -1;
    const char **names = plx_arena_alloc((size_t)k * sizeof *names);
    if (!names)
        return -1;
    for (int i = 0; i < k; i++)
        if (!(names[i] = plx_arena_strdup(found[i])))
            return -1;
    *out = names;
    return k;
}

/* dl_iterate_phdr's count of unloads (the same in every entry). */
static int read_subs(struct dl_phdr_info *di, size_t size, void *data)
{
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof di->dlpi_subs)
        *(unsigned long long *)data = di->dlpi_subs;
    return 1;
}

/* A library unloaded (dlclose) since the last question: another may be at its addresses, so
 * every module and answer kept is dropped. */
static void forget_unloaded(void)
{
    static unsigned long long subs_seen;
    unsigned long long subs = 0;
    dl_iterate_phdr(read_subs, &subs);
    if (subs == subs_seen)
        return;
    subs_seen = subs;
    for (int i = 0; i < nmodules; i++)
        if (modules[i].dw) {
            dw.end(modules[i].dw);
            close(modules[i].fd);
        }
    nmodules = 0;
    memset(answers, 0, sizeof answers);
}

int plx_inline_scopes(uintptr_t pc, const char *const **names)
{
    while (atomic_flag_test_and_set_explicit(&lock, memory_order_acquire))
        sched_yield();
    if (!loaded)
        loaded = load_libdw() == 0 ? 1 : -1;
    if (loaded > 0)
        forget_unloaded();
    int n = -1;
    if (loaded > 0 && pc) {
        size_t slot = (size_t)((pc * 0x9E3779B97F4A7C15ull) >> 54) & (ANSWERS - 1);
        struct answer *e = NULL;
        for (size_t i = 0; i < 8; i++) {
            struct answer *c = &answers[(slot + i) & (ANSWERS - 1)];
            if (c->pc == pc || c->pc == 0) {
                e = c;
                break;
            }
        }
        if (e && e->pc == pc) {
            n = e->n;
            *names = e->names;
        } else {
            const char **got = NULL;
            n = compute(pc, &got);
            *names = got;
            if (e)
                *e = (struct answer){pc, n, got};
        }
    }
    atomic_flag_clear_explicit(&lock, memory_order_release);
    return n;
}

#else

int plx_inline_scopes(uintptr_t pc, const char *const **names)
{
    (void)pc;
    (void)names;
    return -1;
}

#endif
