/* The compiler hooks' frames left without their exit hook (cyg_profile.c), closed when a C++
 * exception is caught (cxx_catch.c). */
#ifndef PLX_CYG_PROFILE_H
#define PLX_CYG_PROFILE_H

#include "../core/plx_internal.h"

/* A catch handler at `pc` (its call's return address) in the function at stack pointer `sp`:
 * the thread's compiler-hook frames below it are gone, closed; of those inlined into it (at
 * `sp`, above its lowest frame there), the ones the debug information does not show around `pc`
 * are gone too (inline_scopes.c). Without debug information they may be: marked, one is closed
 * when its function is entered again there, with those above it, and all when the function
 * they are inlined into exits. */
PLX_HIDDEN void plx_cyg_caught(struct plx_thread *t, uintptr_t sp, uintptr_t pc);

#endif
