/* The probe adapter's part in the process's life: probes inserted and the control socket served
 * when measuring starts (--probe, or plx attach), the socket gone with the experiment or
 * renewed in a fork()ed child; and plx attach's and plx detach's entry points. */
#include "../../core/plx_internal.h"
#include "probe_api.h"

static void started(int attached)
{
    if (!plx_cfg.probe[0])
        return;
    plx_probes_init(plx_cfg.probe);
    if (!attached) /* plx attach serves it once its own changes are made */
        plx_control_start();
}

static const struct plx_process_hooks hooks = {started, plx_control_end, plx_control_after_fork};

__attribute__((constructor(101))) static void register_hooks(void)
{
    plx_process_hooks_add(&hooks);
}

/* plx attach: called in the running process (by ptrace, after dlopen of this library) while
 * every other thread of it is stopped. `settings` holds NAME=VALUE lines of the option table;
 * `pcs` the stopped threads' program counters (no probe displaces bytes around one). Returns 0
 * when measuring, -1 when already measuring, -2 on bad settings, -3 when nothing could start. */
__attribute__((visibility("default"))) int plx_attach_start(const char *settings,
                                                            const uint64_t *pcs, uint32_t npcs)
{
    if (plx_active)
        return -1;
    plx_probes_avoid(pcs, npcs);
    int rc = plx_process_attach(settings);
    if (rc != 0)
        return rc;
    plx_attach_mpi_start();
    plx_attach_exceptions_start();
    plx_control_start(); /* last: its thread changes probes from then on */
    return 0;
}

/* plx detach (over the control socket): every probe removed, the experiment finished, the
 * process left running. Called with the other threads stopped (world.c). Returns 0, -1 when
 * not measuring, -2 when a stopped thread is inside the runtime (nothing done: the caller lets
 * the threads run a moment and calls again). */
int plx_attach_stop(void)
{
    if (!plx_active)
        return -1;
    if (plx_threads_busy())
        return -2;
    plx_probes_remove_all();
    plx_process_end(PLX_END_DETACHED, 0);
    return 0;
}
