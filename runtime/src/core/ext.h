/* The runtime's interface for its extension libraries (libplx-mpi): exported from libplx.so
 * with a plx_ext_ prefix, not part of the public API (plx.h). An extension keeps its per-thread
 * data in struct plx_thread's `ext` slots and writes it from its thread-end callback. */
#ifndef PLX_EXT_H
#define PLX_EXT_H

#include "plx_internal.h"

#define PLX_EXT_API __attribute__((visibility("default")))

/* The calling thread's state when an event may be recorded now, else NULL (not measuring, or
 * re-entered). A non-NULL result must be handed back to plx_ext_release. */
PLX_EXT_API struct plx_thread *plx_ext_acquire(void);
PLX_EXT_API void plx_ext_release(struct plx_thread *t);

/* Region id of a name (kind PLX_KIND_*); cold: callers cache it. */
PLX_EXT_API uint32_t plx_ext_region(const char *name, int kind);
/* Enter / leave a region on an acquired thread; a leave must match the innermost enter. */
PLX_EXT_API void plx_ext_enter(struct plx_thread *t, uint32_t region);
PLX_EXT_API void plx_ext_leave(struct plx_thread *t, uint32_t region);
/* An extended trace event (subtype, payload words) now; nothing in profile mode. */
PLX_EXT_API void plx_ext_event(struct plx_thread *t, unsigned subtype, const uint64_t *payload,
                               unsigned words);
/* The record builder: plx_ext_rec_init, then the plx_enc_* encoders of records.h (generated from
 * spec/records.toml), then plx_ext_rec_write appends the records to process.plx (one write). */
PLX_EXT_API void plx_ext_rec_init(struct plx_rec *r);
PLX_EXT_API void plx_ext_rec_write(struct plx_rec *r);
/* Called for every thread whose data is being written (thread end or process end), with the
 * process file still open; `t` may be another thread at process end. */
PLX_EXT_API void plx_ext_on_thread_end(void (*fn)(struct plx_thread *t));
/* Called at process end before the threads are written (e.g. to finish MPI's own records). */
PLX_EXT_API void plx_ext_on_process_end(void (*fn)(void));
/* Writes the experiment now (e.g. MPI_Abort: reason 3, status = the error code). */
PLX_EXT_API void plx_ext_end_process(int reason, int status);
/* A live file of the thread's (spec/format.md "Live files"): survives SIGKILL; removed by
 * plx_ext_live_remove once its content has been written as records. */
PLX_EXT_API void *plx_ext_live_map(const char *kind, struct plx_thread *t, uint16_t item_size,
                                   uint32_t capacity, struct plx_live_header **header);
PLX_EXT_API void plx_ext_live_remove(const char *kind, struct plx_thread *t,
                                     struct plx_live_header *header);
/* Points each GOT slot (JUMP_SLOT, GLOB_DAT) of the loaded object at `base` whose symbol `to`
 * maps to an address (0: left as it is) at that address; the number of slots written. */
PLX_EXT_API size_t plx_ext_got_repoint(uintptr_t base, uintptr_t (*to)(const char *name, void *arg),
                                       void *arg);
/* Messages (messages.c), for every message-passing layer: a trace event now (trace mode) and
 * the thread's statistics by (region, peer, communicator, direction). Peers and roots are world
 * ranks (PLX_EXT_NO_PEER: none), communicators the ids of CommDef records. */
#define PLX_EXT_NO_PEER 0xFFFFFFFFu
/* plx_ext_msg_sent returns the send's number among the thread's send events (trace mode), or
 * PLX_EXT_NO_SEND; plx_ext_msg_send_done records the completion of a nonblocking send by that
 * number, on the thread that completed it (a `send_done` event; modes as in spec/records.toml). */
#define PLX_EXT_NO_SEND UINT64_MAX
PLX_EXT_API uint64_t plx_ext_msg_sent(struct plx_thread *t, uint32_t region, uint32_t comm,
                                      uint32_t peer, int tag, uint64_t bytes);
PLX_EXT_API void plx_ext_msg_send_done(struct plx_thread *t, uint32_t thread, int mode,
                                       uint64_t send);
PLX_EXT_API void plx_ext_msg_received(struct plx_thread *t, uint32_t region, uint32_t comm,
                                      uint32_t peer, int tag, uint64_t bytes);
/* A receive completed later than it was posted (a nonblocking or persistent one): its post's
 * ticks, a `recv_posted` event right before the receive's plx_ext_msg_received (trace mode). */
PLX_EXT_API void plx_ext_msg_recv_posted(struct plx_thread *t, uint64_t posted);
/* The clock value of the thread's latest trace event (right after plx_ext_enter: the entry of
 * the routine) without reading the clock; 0 when the thread is not tracing. */
static inline uint64_t plx_ext_last_ticks(const struct plx_thread *t)
{
    return t->buf ? t->last : 0;
}
/* plx_ext_msg_collective returns the collective's number among the thread's collective events
 * (trace mode), or PLX_EXT_NO_SEND; plx_ext_msg_coll_done records the completion of a
 * nonblocking one by that number, on the thread that completed it (a `coll_done` event). */
PLX_EXT_API uint64_t plx_ext_msg_collective(struct plx_thread *t, uint32_t region, uint32_t comm,
                                            uint32_t root, uint64_t sent, uint64_t received);
PLX_EXT_API void plx_ext_msg_coll_done(struct plx_thread *t, uint32_t thread, uint64_t collective);
/* A collective's bytes for one rank, the one rule of every message-passing layer (messages.c):
 * `send` and `recv` are the bytes the rank's arguments describe on each side — one rank's part
 * (count x type size) for the fixed-size kinds, the sum of the counts array's parts for the v
 * kinds (and for REDUCE_SCATTER's send side; its receive side is the rank's own count) — and
 * the result is what the rank sends and receives: a part times the communicator's `ranks` on
 * the side where the rank handles every rank's part (a rooted collective's root, the all-to-all
 * sides). `at_root`: the rank is the root (rooted kinds only). An argument MPI ignores (a
 * root-only one elsewhere, MPI_IN_PLACE) is the caller's to pass as 0 or leave to this rule. */
enum plx_coll {
    PLX_COLL_BARRIER, PLX_COLL_BCAST, PLX_COLL_REDUCE, PLX_COLL_ALLREDUCE, /* Scan, Exscan too */
    PLX_COLL_GATHER, PLX_COLL_GATHERV, PLX_COLL_SCATTER, PLX_COLL_SCATTERV, PLX_COLL_ALLGATHER,
    PLX_COLL_ALLGATHERV, PLX_COLL_ALLTOALL, PLX_COLL_ALLTOALLV, /* Alltoallw too */
    PLX_COLL_REDUCE_SCATTER, PLX_COLL_REDUCE_SCATTER_BLOCK
};
struct plx_coll_bytes {
    uint64_t sent, received;
};
PLX_EXT_API struct plx_coll_bytes plx_ext_coll_bytes(enum plx_coll kind, int at_root,
                                                     uint32_t ranks, uint64_t send, uint64_t recv);
/* A communicator's members as MPI_COMM_WORLD ranks: `world`, the group its peers are named in
 * (an intercommunicator's remote group); `local`, an intercommunicator's local group (NULL for
 * an intracommunicator). */
struct plx_comm_members {
    const uint32_t *world, *local;
    uint32_t size, local_size;
};
/* Whether `b`, created before `a`, counts in `a`'s ordinal (CommDef and InterCommDef of
 * spec/records.toml): an intracommunicator of the same members, or an intercommunicator between
 * the same two groups, either of them local (its other side counts the same). The one rule of
 * every message-passing layer (messages.c). */
PLX_EXT_API int plx_ext_comm_same_members(struct plx_comm_members a, struct plx_comm_members b);
/* Encodes a communicator's CommDef (spec/records.toml): its members' world ranks, or none when
 * they are the world's `world_size` ranks in order (MPI_COMM_WORLD, its duplicates), so that a
 * process's file does not grow with the job. The one rule of every message-passing layer. */
PLX_EXT_API void plx_ext_enc_comm_def(struct plx_rec *r, uint32_t comm, uint32_t ordinal, uint32_t size,
                                      const uint32_t *world, uint32_t world_size);
PLX_EXT_API int plx_ext_tracing(void);
PLX_EXT_API uint64_t plx_ext_ticks(void);

#endif /* PLX_EXT_H */
