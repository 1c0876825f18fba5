/* The probe adapter's entry points (adapters/probe): entries of unmodified functions rewritten
 * (PLX_PROBE), plx attach and detach, and the control socket; called across its files only,
 * never by core. */
#ifndef PLX_PROBE_API_H
#define PLX_PROBE_API_H

#include "../../core/plx_internal.h"

PLX_HIDDEN void plx_probes_init(const char *spec);
/* plx attach: program counters of the stopped threads, which no probe may displace. */
PLX_HIDDEN void plx_probes_avoid(const uint64_t *pcs, uint32_t n);
/* plx detach: every entry restored (the other threads stopped); stubs and the exit trampoline
 * stay, for frames still open. */
PLX_HIDDEN void plx_probes_remove_all(void);
/* Entries of `syms` made jumps to `to` (another implementation: an MPI wrapper), no other
 * thread running; resume[i] is the relocated original of each (0 when not redirected; with
 * `record`, each one's site and reason in a ProbeSite record). How many were. */
PLX_HIDDEN size_t plx_probes_redirect(const struct plx_function_symbol *syms,
                                      const uintptr_t *to, uintptr_t *resume, size_t n,
                                      int record);
/* plx attach (probe/exceptions.c): the program's unwinder and C++ runtime entries that
 * libplx interposes under plx run redirected to libplx's, so that a throw through a probed
 * function finds its return addresses. */
PLX_HIDDEN void plx_attach_exceptions_start(void);
/* The C++ runtime's __cxa_begin_catch that libplx's calls (cxx_catch.c): its relocated
 * original once plx attach redirected its entry to libplx's. */
PLX_HIDDEN void plx_cxx_catch_next(void *(*next)(void *));
/* libplx's __cxa_begin_catch, by a name that binds to libplx's own definition. */
PLX_HIDDEN void *plx_cxx_begin_catch(void *exception);
/* plx attach to an MPI rank (probe/mpi_attach.c): libplx-mpi loaded, the MPI routines of the
 * MPI library redirected to its wrappers, the rank identified. */
PLX_HIDDEN void plx_attach_mpi_start(void);
/* plx attach: the functions skipped because a stopped thread was inside their entry, as
 * --probe globs into `out` (emptied after): their length, 0 when none. */
PLX_HIDDEN size_t plx_probes_take_retry(char *out, size_t cap);
/* plx ctl insert|remove|list: the reply written into `out` (text; "error: ..." on failure);
 * its length, or -1 for another command. */
PLX_HIDDEN int plx_probes_command(const char *cmd, char *out, size_t cap);
/* The control socket (adapters/probe/control.c): `ctl.sock` in the process's directory, served
 * by a thread of the runtime; started when probes or plx attach are in use. */
PLX_HIDDEN void plx_control_start(void);
/* The socket's name removed (the process ends, or is detached); its thread ends with it. */
PLX_HIDDEN void plx_control_end(void);
/* In a fork()ed child: the parent's socket is not the child's; a new one if it had one. */
PLX_HIDDEN void plx_control_after_fork(void);
/* plx detach: every probe removed and the experiment finished, the process left running. 0, -1
 * when not measuring, -2 when a stopped thread is inside the runtime (call again later). The
 * other threads stopped. */
PLX_HIDDEN int plx_attach_stop(void);
/* A C++ handler catches (cxx_catch.c's __cxa_begin_catch, called from the catching function,
 * whose stack pointer at that call is `sp`): the probed frames below it are gone, closed in
 * `t` (NULL, or a thread state that records nothing: only the shadow stack), and the others
 * get the exit trampoline back (exceptions.c). */
PLX_HIDDEN void plx_probe_caught(struct plx_thread *t, uintptr_t sp);

#endif
