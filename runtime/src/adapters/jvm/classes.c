/* Which Java classes the agent rewrites, and what rewriting each one cost (JavaClass records).
 *
 * JDK classes (java/, javax/, jdk/, sun/, com/sun/) and Parallax's own (org/parallax/: the
 * agent, and the API, whose regions must not be nested in its own methods' frames) are
 * excluded by default; the filter file's
 * `include class` / `exclude class` rules (docs/formats/filter.md) decide the rest. */
#include "jvm.h"

#include <string.h>

static const char *const jdk_prefixes[] = {"java/", "javax/", "jdk/", "sun/", "com/sun/",
                                           "org/parallax/"};

int plx_jvm_class_filter(const char *internal_name)
{
    int measured = 1;
    for (size_t i = 0; i < sizeof jdk_prefixes / sizeof *jdk_prefixes; i++)
        if (strncmp(internal_name, jdk_prefixes[i], strlen(jdk_prefixes[i])) == 0)
            measured = 0;
    int rule = plx_filter_class(internal_name);
    if (rule >= 0)
        measured = rule;
    return measured;
}

/* Called on the thread loading the class, inside the JVM's class loading: the rewrite is the
 * runtime's own cost there (a child region plx_java_instrument), and one JavaClass record. */
void plx_jvm_class_record(const char *name, uint32_t methods, uint64_t nanos, uint32_t flags)
{
    struct plx_thread *t = plx_thread();
    if (t)
        t->guard++;
    struct plx_rec rec;
    plx_rec_init(&rec);
    plx_enc_java_class(&rec, methods, nanos, flags, name);
    plx_rec_write(&rec, 0);
    if (t) {
        static uint32_t region = PLX_NO_INDEX;
        if (region == PLX_NO_INDEX)
            region = plx_region_of_name("plx_java_instrument", PLX_KIND_RUNTIME) & PLX_REGION_ID_MASK;
        uint64_t now = plx_ticks();
        uint64_t ticks = (uint64_t)((double)nanos * plx_clock_rate() * 1e-9);
        uint64_t t0 = now - ticks;
        if (t->buf && (int64_t)(t0 - t->last) < 0)
            t0 = t->last; /* a trace's events stay in time order */
        plx_runtime_interval(t, region, t0, now);
        t->guard--;
    }
}
