/* A fork()ed child's only thread: it keeps its callpath tree and open regions with counts reset,
 * so the child's profile holds what the child does. */
#include "hotpath.h"
#include "counters.h"

#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

void plx_thread_reset_after_fork(struct plx_thread *t)
{
    uint64_t now = plx_ticks();
    t->tid = (uint32_t)syscall(SYS_gettid);
    t->pthread = (unsigned long)pthread_self();
    t->start_ticks = now;
    t->start_cpu_ns = plx_cpu_ns();
    if (t->live_nodes) { /* the mapping is the parent's file: copy the tree into our own */
        struct plx_live_header *h;
        uint32_t room;
        struct plx_node *mine = plx_live_take("nodes", t->index, sizeof(struct plx_node), t->max_nodes,
                                              t->nnodes, &h, &room);
        if (mine) {
            memcpy(mine, t->nodes, sizeof(struct plx_node) * t->nnodes);
            h->count = t->nnodes;
            if (room < t->nnodes) { /* the disk could not back the tree: memory, the file given up */
                plx_live_disown("nodes", h);
                room = t->max_nodes;
            }
            t->node_room = room;
        } else {
            mine = mmap(NULL, sizeof(struct plx_node) * t->max_nodes, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
            memcpy(mine, t->nodes, sizeof(struct plx_node) * t->nnodes);
            h = NULL;
            t->node_room = t->max_nodes;
        }
        plx_live_unmap(t->live_nodes);
        t->nodes = mine;
        t->live_nodes = h;
    }
    for (uint32_t i = 0; i < t->nnodes; i++) {
        struct plx_node *n = &t->nodes[i];
        n->calls = n->child_calls = n->incl = n->excl = 0;
    }
    for (uint32_t i = 0; i < t->depth; i++) {
        t->stack[i].start = now;
        t->stack[i].child = 0;
    }
    if (t->buf) {
        t->base = t->last = now;
        if (t->live_trace) { /* the mapping is the parent's file: the child's buffer is its own */
            uint64_t *mem = mmap(NULL, (size_t)t->live_trace->capacity * 8, PROT_READ | PROT_WRITE,
                                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
            size_t words = t->live_trace->capacity - 1;
            plx_live_unmap(t->live_trace);
            t->live_trace = NULL;
            plx_trace_buffer_map(t, mem == MAP_FAILED ? NULL : mem, words, 1);
        }
        t->pos = t->buf;
        t->trace_events = 0;
        t->sends = 0;
        t->collectives = 0;
        /* the child's trace starts inside the regions that are open: frames, not calls (an
         * omp_context event says how many of the enters that follow they are, as for an OpenMP
         * worker's copy of its team starter's path; the profile counts them 0 calls too) */
        if (t->depth) {
            uint64_t w[PLX_EXT_OMP_CONTEXT_WORDS];
            plx_ext_pack_omp_context(w, t->depth, t->index);
            plx_trace_ext_at(t, now, PLX_EXT_OMP_CONTEXT, w, PLX_EXT_OMP_CONTEXT_WORDS);
        }
        for (uint32_t i = 0; i < t->depth; i++)
            plx_trace_put(t, PLX_EV_ENTER, t->stack[i].region, now);
    }
    if (t->live_sync) { /* the parent's file: the child counts its objects afresh in its own */
        struct plx_live_header *h = t->live_sync;
        t->live_sync = NULL;
        t->sync = NULL;
        plx_live_unmap(h);
    }
    plx_messages_after_fork(t);
    t->lost_events = t->lost_nodes = 0;
    memset(t->uevents, 0, sizeof t->uevents);
    plx_counters_after_fork(t);
}
