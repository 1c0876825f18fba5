/* Every other thread of this process stopped under a ptrace helper (world.c). */
#ifndef PLX_PROBE_WORLD_H
#define PLX_PROBE_WORLD_H

#include <stdint.h>
#include <sys/types.h>

#define PLX_WORLD_MAX_THREADS 4096

struct plx_world_range {
    uint64_t lo, hi; /* a thread may be at lo, never strictly inside (lo, hi) */
};

struct plx_world {
    /* in: the bytes about to be displaced; out: blocked[i] when a thread could not leave them */
    const struct plx_world_range *ranges;
    uint32_t nranges;
    uint8_t *blocked;
    /* out: why plx_world_stop failed (an errno value); threads stepped out of the ranges */
    int error;
    uint32_t stepped;
    /* the helper's own */
    pid_t process, caller, helper;
    char tasks[32]; /* /proc/PID/task */
    void *stack;
    int to_helper[2], to_caller[2];
    uint32_t n;
    pid_t tids[PLX_WORLD_MAX_THREADS];
    int pending[PLX_WORLD_MAX_THREADS];
};

/* Stops every thread but the caller's, moving each out of the ranges. 0, or -1 with w->error
 * set and nothing stopped. */
int plx_world_stop(struct plx_world *w);
/* Lets every stopped thread go on (with any signal that arrived while it was stopped). */
void plx_world_release(struct plx_world *w);

#endif
