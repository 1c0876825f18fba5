/* plx attach to an MPI rank: the MPI routines it calls from now on measured by the same PMPI
 * wrappers as under plx run (libplx-mpi).
 *
 * The program's calls are bound to the MPI library already, so loading the wrappers is not
 * enough: the entry of each MPI_X of the MPI library that libplx-mpi wraps becomes a jump to
 * the wrapper (the probe engine's relocation, plx_probes_redirect). The wrapper calls PMPI_X;
 * in Open MPI, MPI_X is a weak alias of PMPI_X (one address), which now jumps back to the
 * wrapper: so every slot of libplx-mpi's GOT whose symbol is at a redirected entry is pointed
 * at that entry's relocated original instead. Runs inside plx_attach_start (every other thread
 * stopped by plx attach). */
#include "../../core/ext.h"
#include "probe_api.h"

#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct mpi_lib {
    char path[4096];     /* the MPI library loaded in the process */
    const char *wrappers; /* the libplx-mpi flavour built for it */
};

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static int find_mpi(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct mpi_lib *m = arg;
    const char *b = base_name(info->dlpi_name);
    if (strncmp(b, "libmpi.so.40", 12) == 0)
        m->wrappers = "libplx-mpi.so"; /* Open MPI */
    else if (strncmp(b, "libmpich.so", 11) == 0 || strncmp(b, "libmpi.so.12", 12) == 0)
        m->wrappers = "libplx-mpi-mpich.so";
    else
        return 0;
    snprintf(m->path, sizeof m->path, "%s", info->dlpi_name);
    return 1;
}

struct redirect_set {
    const char *module; /* the MPI library's path */
    void *wrappers;     /* handle of libplx-mpi */
    uintptr_t wrappers_base;
    struct plx_function_symbol *syms;
    uintptr_t *to;
    size_t n, cap;
};

/* The MPI library's MPI_X that libplx-mpi defines (not one it only reaches through its own
 * dependency on the MPI library), once per address. */
static void collect(const struct plx_function_symbol *s, void *arg)
{
    struct redirect_set *r = arg;
    if (strcmp(s->module, r->module) != 0 || strncmp(s->name, "MPI_", 4) != 0 || s->size == 0)
        return;
    for (size_t i = 0; i < r->n; i++)
        if (r->syms[i].address == s->address)
            return;
    if (r->n == r->cap)
        return;
    r->syms[r->n] = *s;
    r->n++;
}

/* The GOT slots of libplx-mpi whose symbol the MPI library defines at a redirected entry now
 * hold that entry's relocated original. */
struct repoint {
    void *mpi;
    const struct redirect_set *r;
    const uintptr_t *resume;
};

static uintptr_t original_of(const char *name, void *arg)
{
    const struct repoint *p = arg;
    uintptr_t at = (uintptr_t)dlsym(p->mpi, name);
    for (size_t i = 0; at && i < p->r->n; i++)
        if (p->r->syms[i].address == at)
            return p->resume[i];
    return 0;
}

void plx_attach_mpi_start(void)
{
    struct mpi_lib m;
    memset(&m, 0, sizeof m);
    if (!dl_iterate_phdr(find_mpi, &m))
        return; /* not an MPI program */
    Dl_info self;
    char path[4096];
    if (!dladdr((void *)plx_attach_mpi_start, &self) || !self.dli_fname)
        return;
    snprintf(path, sizeof path, "%.*s/%s", (int)(base_name(self.dli_fname) - self.dli_fname - 1),
             self.dli_fname, m.wrappers);
    void *wrappers = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    void *mpi = dlopen(m.path, RTLD_NOW | RTLD_NOLOAD);
    if (!wrappers || !mpi) {
        plx_warn("MPI routines not measured: %s", dlerror());
        return;
    }
    void (*identify)(void) = (void (*)(void))dlsym(wrappers, "plx_attach_mpi");
    struct link_map *lm = NULL;
    if (!identify || dlinfo(wrappers, RTLD_DI_LINKMAP, &lm) != 0 || !lm) {
        plx_warn("MPI routines not measured: %s is not this runtime's MPI library", path);
        return;
    }
    struct redirect_set r = {.module = m.path, .wrappers = wrappers, .wrappers_base = lm->l_addr};
    r.cap = 1024;
    r.syms = calloc(r.cap, sizeof *r.syms);
    r.to = calloc(r.cap, sizeof *r.to);
    uintptr_t *resume = calloc(r.cap, sizeof *resume);
    if (!r.syms || !r.to || !resume)
        goto out;
    plx_symbols_each_function(collect, &r);
    /* keep the routines libplx-mpi wraps itself */
    size_t kept = 0;
    for (size_t i = 0; i < r.n; i++) {
        void *w = dlsym(wrappers, r.syms[i].name);
        Dl_info wi;
        if (!w || !dladdr(w, &wi) || (uintptr_t)wi.dli_fbase != r.wrappers_base)
            continue;
        r.syms[kept] = r.syms[i];
        r.to[kept++] = (uintptr_t)w;
    }
    r.n = kept;
    size_t redirected = plx_probes_redirect(r.syms, r.to, resume, r.n, 1);
    struct repoint p = {mpi, &r, resume};
    size_t slots = plx_ext_got_repoint(lm->l_addr, original_of, &p);
    identify();
    if (plx_cfg.verbose)
        plx_warn("attach: %zu of %zu MPI routines of %s redirected to %s (%zu GOT slots)",
                 redirected, r.n, m.path, path, slots);
out:
    free(r.syms);
    free(r.to);
    free(resume);
}
