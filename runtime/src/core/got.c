/* The GOT of a loaded object, rewritten slot by slot: how a library's calls that bypass the
 * interposed symbols (a call to PMPI_X bound inside the MPI library's own Fortran layer, the
 * program's calls bound before plx attach) are pointed at the runtime's wrappers. */
#include "ext.h"

#include <elf.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

struct object_of {
    uintptr_t base;
    const ElfW(Dyn) *dyn;
    const ElfW(Phdr) *ph;
    int nph;
};

static int find_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct object_of *o = arg;
    if (info->dlpi_addr != o->base)
        return 0;
    o->ph = info->dlpi_phdr;
    o->nph = info->dlpi_phnum;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
            o->dyn = (const void *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    return 1;
}

/* One slot, its page made writable for the write when it is in the RELRO segment. */
static int write_slot(uintptr_t *slot, uintptr_t value, uintptr_t relro_lo, uintptr_t relro_hi)
{
    long pagesz = sysconf(_SC_PAGESIZE);
    int ro = (uintptr_t)slot >= relro_lo && (uintptr_t)slot < relro_hi;
    uintptr_t page = (uintptr_t)slot & ~(uintptr_t)(pagesz - 1);
    if (ro && mprotect((void *)page, (size_t)pagesz, PROT_READ | PROT_WRITE) != 0)
        return 0;
    *slot = value;
    if (ro)
        mprotect((void *)page, (size_t)pagesz, PROT_READ);
    return 1;
}

size_t plx_ext_got_repoint(uintptr_t base, uintptr_t (*to)(const char *name, void *arg), void *arg)
{
    struct object_of o = {.base = base};
    if (!dl_iterate_phdr(find_object, &o) || !o.dyn)
        return 0;
    const ElfW(Rela) *rela = NULL, *jmprel = NULL;
    size_t relasz = 0, jmprelsz = 0;
    const ElfW(Sym) *symtab = NULL;
    const char *strtab = NULL;
#define ADDR(v) ((v) < base ? base + (v) : (v)) /* glibc relocates d_ptr in place, or not */
    for (const ElfW(Dyn) *d = o.dyn; d->d_tag != DT_NULL; d++) {
        switch (d->d_tag) {
        case DT_RELA: rela = (const void *)ADDR(d->d_un.d_ptr); break;
        case DT_RELASZ: relasz = d->d_un.d_val; break;
        case DT_JMPREL: jmprel = (const void *)ADDR(d->d_un.d_ptr); break;
        case DT_PLTRELSZ: jmprelsz = d->d_un.d_val; break;
        case DT_SYMTAB: symtab = (const void *)ADDR(d->d_un.d_ptr); break;
        case DT_STRTAB: strtab = (const void *)ADDR(d->d_un.d_ptr); break;
        default: break;
        }
    }
#undef ADDR
    if (!symtab || !strtab)
        return 0;
    uintptr_t relro_lo = 0, relro_hi = 0;
    for (int i = 0; i < o.nph; i++)
        if (o.ph[i].p_type == PT_GNU_RELRO) {
            relro_lo = base + o.ph[i].p_vaddr;
            relro_hi = relro_lo + o.ph[i].p_memsz;
        }
    size_t n = 0;
    const ElfW(Rela) *tables[2] = {rela, jmprel};
    size_t sizes[2] = {relasz, jmprelsz};
    for (int t = 0; t < 2; t++) {
        for (size_t k = 0; tables[t] && k < sizes[t] / sizeof(ElfW(Rela)); k++) {
            const ElfW(Rela) *e = &tables[t][k];
            unsigned type = ELF64_R_TYPE(e->r_info);
            if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT)
                continue;
            uintptr_t value = to(strtab + symtab[ELF64_R_SYM(e->r_info)].st_name, arg);
            if (value && write_slot((uintptr_t *)(base + e->r_offset), value, relro_lo, relro_hi))
                n++;
        }
    }
    return n;
}
