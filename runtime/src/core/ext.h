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
/* Messages (messages.c), for every message-passing layer: a trace event now (trace mode) and
 * the thread's statistics by (region, peer, communicator, direction). Peers and roots are world
 * ranks (PLX_EXT_NO_PEER: none), communicators the ids of CommDef records. */
#define PLX_EXT_NO_PEER 0xFFFFFFFFu
PLX_EXT_API void plx_ext_msg_sent(struct plx_thread *t, uint32_t region, uint32_t comm,
                                  uint32_t peer, int tag, uint64_t bytes);
PLX_EXT_API void plx_ext_msg_received(struct plx_thread *t, uint32_t region, uint32_t comm,
                                      uint32_t peer, int tag, uint64_t bytes);
PLX_EXT_API void plx_ext_msg_collective(struct plx_thread *t, uint32_t region, uint32_t comm,
                                        uint32_t root, uint64_t sent, uint64_t received);
PLX_EXT_API int plx_ext_tracing(void);
PLX_EXT_API uint64_t plx_ext_ticks(void);

#endif /* PLX_EXT_H */
