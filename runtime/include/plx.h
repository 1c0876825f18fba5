/* Parallax user API: named regions, phases, user events and thread names.
 *
 * Link with -lplx (plx-cc and plx-c++ do it). Every function is cheap when the program runs
 * unmeasured: the calls return at once when no experiment is being written. */
#ifndef PLX_H
#define PLX_H

#ifdef __cplusplus
extern "C" {
#endif

/* Regions: begin and end must nest with each other and with measured functions. */
void plx_region_begin(const char *name);
void plx_region_end(const char *name);

/* Phases: named intervals that reports and analyses can be limited to (`--phase NAME`). */
void plx_phase_begin(const char *name);
void plx_phase_end(const char *name);

/* User events: a named numeric value; the profile keeps count, min, max, sum and sum of
 * squares per thread, and the trace records each value. */
void plx_event(const char *name, double value);

/* Names the calling thread in reports (the last name given wins). */
void plx_thread_name(const char *name);

/* Writes everything measured so far; called by the runtime at exit by itself. */
void plx_flush(void);

#ifdef __cplusplus
}

/* The guards' own members are not instrumented: their calls would wrap the region they mark. */
#define PLX_NOINST __attribute__((no_instrument_function))

namespace plx {
/* A region for the lifetime of a scope: { plx::Region r("solve"); ... } */
class Region {
public:
    PLX_NOINST explicit Region(const char *name) : name_(name) { plx_region_begin(name_); }
    PLX_NOINST ~Region() { plx_region_end(name_); }
    Region(const Region &) = delete;
    Region &operator=(const Region &) = delete;
private:
    const char *name_;
};

/* A phase for the lifetime of a scope. */
class Phase {
public:
    PLX_NOINST explicit Phase(const char *name) : name_(name) { plx_phase_begin(name_); }
    PLX_NOINST ~Phase() { plx_phase_end(name_); }
    Phase(const Phase &) = delete;
    Phase &operator=(const Phase &) = delete;
private:
    const char *name_;
};
} /* namespace plx */
#undef PLX_NOINST
#endif

#endif /* PLX_H */
