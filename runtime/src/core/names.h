/* What a glob of a filter or of --probe is matched against (names.c): standalone, so that plx
 * run's --probe check (engine/crates/plx-cli/build.rs) matches as the runtime does. */
#ifndef PLX_NAMES_H
#define PLX_NAMES_H

/* A demangled name without the return type of a function template: `int twice<int>(int)` is
 * matched as `twice<int>(int)`. */
__attribute__((visibility("hidden"))) const char *plx_name_qualified(const char *name);
/* Whether an Itanium mangled name is a deleting destructor (D0). */
__attribute__((visibility("hidden"))) int plx_name_is_deleting_dtor(const char *mangled);

#endif /* PLX_NAMES_H */
