/* Fortran: the MPI library's own Fortran layer (mpif.h, `use mpi`, `use mpi_f08`) converts the
 * arguments and calls the C routines, some of them by their PMPI_ name (Open MPI's
 * libmpi_mpifh calls PMPI_ for every routine; MPICH's libmpichfort for the mpi_f08 routines
 * that take no buffer), which no interposed MPI_ wrapper sees. At load, each GOT slot of those
 * libraries that names PMPI_X is pointed at this library's MPI_X wrapper where it has one: the
 * Fortran calls are measured by the C wrappers, with the library's own conversions unchanged.
 * Under plx attach this library is loaded apart (RTLD_LOCAL) and does nothing here: the MPI
 * library's entries are redirected instead (mpi_attach.c). */
#include "mpi_internal.h"

#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

/* The Fortran layers of the MPI libraries libplx-mpi and libplx-mpi-mpich are built for. */
static const char *const fortran_layers[] = {"libmpi_mpifh.so", "libmpi_usempif08.so",
                                             "libmpi_usempi_ignore_tkr.so", "libmpichfort.so",
                                             "libmpifort.so"};

struct layers {
    uintptr_t base[8];
    int n;
};

static int find_layers(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct layers *l = arg;
    const char *b = strrchr(info->dlpi_name, '/');
    b = b ? b + 1 : info->dlpi_name;
    for (size_t i = 0; i < sizeof fortran_layers / sizeof *fortran_layers; i++)
        if (strncmp(b, fortran_layers[i], strlen(fortran_layers[i])) == 0 &&
            l->n < (int)(sizeof l->base / sizeof *l->base))
            l->base[l->n++] = info->dlpi_addr;
    return 0;
}

/* PMPI_X -> this library's MPI_X, when it defines one (`self`: its load address). */
static uintptr_t wrapper_of(const char *name, void *self)
{
    char w[96];
    if (strncmp(name, "PMPI_", 5) != 0 || snprintf(w, sizeof w, "%s", name + 1) >= (int)sizeof w)
        return 0;
    void *f = dlsym(RTLD_DEFAULT, w);
    Dl_info di;
    if (!f || !dladdr(f, &di) || di.dli_fbase != self)
        return 0;
    return (uintptr_t)f;
}

void plx_mpi_fortran_load(void)
{
    struct layers l = {.n = 0};
    Dl_info self;
    dl_iterate_phdr(find_layers, &l);
    if (!l.n || !dladdr((void *)plx_mpi_fortran_load, &self))
        return;
    for (int i = 0; i < l.n; i++)
        plx_ext_got_repoint(l.base[i], wrapper_of, self.dli_fbase);
}
