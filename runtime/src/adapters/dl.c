/* dlclose: a library it unloads leaves the module list and the region table (core's
 * plx_regions_unloaded), so that a library loaded later at its addresses is measured and named
 * as itself. Before, the frames sampled in it before the runtime listed it take its name. Interposed by symbol, so LD_PRELOAD suffices; the hooks' path is untouched.
 * dlopen is not interposed: the loader searches the caller's run paths, which would be ours. */
#include "../core/hotpath.h"

#include <dlfcn.h>
#include <errno.h>

#define PLX_EXPORT __attribute__((visibility("default")))

typedef int (*dlclose_fn)(void *);

PLX_EXPORT int dlclose(void *handle)
{
    static _Atomic(dlclose_fn) real;
    dlclose_fn f = atomic_load_explicit(&real, memory_order_relaxed);
    if (!f) {
        f = (dlclose_fn)dlsym(RTLD_NEXT, "dlclose");
        atomic_store_explicit(&real, f, memory_order_relaxed);
    }
    if (!plx_active)
        return f(handle);
    struct plx_thread *t = plx_self;
    if (t)
        t->guard++;
    plx_stack_sampler_before_unload(); /* frames sampled before the library was listed */
    if (t)
        t->guard--;
    int rc = f(handle);
    if (rc != 0 || !plx_active)
        return rc;
    int saved = errno;
    if (t)
        t->guard++;
    plx_regions_unloaded();
    if (t)
        t->guard--;
    errno = saved;
    return rc;
}
