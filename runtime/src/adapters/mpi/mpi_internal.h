/* libplx-mpi internals: communicators, requests, per-thread message statistics and the
 * recording helpers the PMPI wrappers share. */
#ifndef PLX_MPI_INTERNAL_H
#define PLX_MPI_INTERNAL_H

#include <mpi.h>

#include "../../core/ext.h"

#define PLX_NO_PEER PLX_EXT_NO_PEER

struct plx_comm {
    MPI_Comm handle;
    uint32_t id;
    uint32_t size;      /* of the group peers are named in (the remote one of an intercomm) */
    uint32_t *world;    /* world rank of each peer rank */
    uint32_t local_size; /* an intercomm's local group (0 and NULL for an intracomm) */
    uint32_t *local;     /* world rank of each rank of the local group */
};

PLX_HIDDEN extern int plx_mpi_rank, plx_mpi_size;
PLX_HIDDEN extern int plx_mpi_ready; /* MPI initialised and not finalised */

/* communicators (mpi_comms.c) */
PLX_HIDDEN void plx_mpi_comms_init(void);
PLX_HIDDEN struct plx_comm *plx_mpi_comm(MPI_Comm comm); /* defines it on first sight */
/* An MPI_Comm_idup's new communicator, defined with the members of the one it copies (its own
 * may be asked for only once the idup completes). */
PLX_HIDDEN struct plx_comm *plx_mpi_comm_copy(MPI_Comm comm, MPI_Comm of);
PLX_HIDDEN void plx_mpi_comm_forget(MPI_Comm comm);
PLX_HIDDEN uint32_t plx_mpi_world_rank(const struct plx_comm *c, int rank);
PLX_HIDDEN const struct plx_comm *plx_mpi_comm_by_id(uint32_t id);

/* requests (mpi_requests.c) */
/* PLX_REQ_SENDRECV: an MPI_Isendrecv's request, a send and a receive; PLX_REQ_MSG: a matched
 * message (MPI_Message) and its communicator, no request */
enum { PLX_REQ_SEND = 1, PLX_REQ_RECV = 2, PLX_REQ_COLL = 3, PLX_REQ_SENDRECV = 4, PLX_REQ_MSG = 5 };
struct plx_req {
    _Atomic uintptr_t key; /* the MPI_Request handle; 0 empty, 1 deleted */
    uint8_t kind, persistent;
    uint8_t mode;          /* a send's mode (0 standard, 1 synchronous, 2 buffered, 3 ready) */
    uint32_t region, comm, peer; /* (an MPI_Isendrecv's: its receive's source, tag and buffer) */
    int32_t tag;
    uint64_t bytes;
    uint32_t thread;       /* a posted send (a nonblocking collective): the thread that
                              recorded its send (collective) event, and its number there */
    uint64_t send;         /* (PLX_EXT_NO_SEND: not traced) */
    uint64_t posted;       /* a receive: ticks of its post (MPI_Irecv's or MPI_Start's entry;
                              0: not traced), for its recv_posted event at completion */
};
PLX_HIDDEN void plx_mpi_req_add(MPI_Request r, int kind, int persistent, uint32_t region,
                                uint32_t comm, uint32_t peer, int tag, uint64_t bytes,
                                uint64_t posted);
PLX_HIDDEN struct plx_req *plx_mpi_req_find(MPI_Request r);
PLX_HIDDEN void plx_mpi_req_remove(struct plx_req *e);
PLX_HIDDEN uintptr_t plx_mpi_req_key(MPI_Request r);
/* A message matched by MPI_Mprobe or MPI_Improbe on communicator `comm` (an id); taken (and
 * forgotten) by the MPI_Mrecv or MPI_Imrecv that receives it: its communicator's id, or
 * PLX_NO_PEER when unknown. */
PLX_HIDDEN void plx_mpi_msg_add(MPI_Message m, uint32_t comm);
PLX_HIDDEN uint32_t plx_mpi_msg_take(MPI_Message m);

/* recording (mpi_record.c, on the runtime's message records: core/messages.c) */
PLX_HIDDEN uint64_t plx_mpi_sent(struct plx_thread *t, uint32_t region, const struct plx_comm *c,
                                 uint32_t peer, int tag, uint64_t bytes);
/* A posted (or started) send's number on the thread, for its send_done at completion (a
 * nonblocking collective's, for its coll_done). */
PLX_HIDDEN void plx_mpi_req_sent(MPI_Request r, struct plx_thread *t, int mode, uint64_t send);
/* `posted`: a request's receive, the ticks of its post (a recv_posted event before the recv);
 * 0 for a blocking receive, posted at its routine's entry. */
PLX_HIDDEN void plx_mpi_received(struct plx_thread *t, uint32_t region, const struct plx_comm *c,
                                 const MPI_Status *st, uint64_t posted);
/* A collective's event; its number among the thread's (PLX_EXT_NO_SEND: not traced). */
PLX_HIDDEN uint64_t plx_mpi_collective(struct plx_thread *t, uint32_t region, MPI_Comm comm,
                                       int root, uint64_t sent, uint64_t received);
/* A nonblocking collective's request, posted with collective event `n` on the thread: followed
 * to the Wait/Test call that completes it (a coll_done event there). */
PLX_HIDDEN void plx_mpi_coll_posted(MPI_Request *r, struct plx_thread *t, uint32_t region,
                                    uint64_t n);
PLX_HIDDEN void plx_mpi_completed(struct plx_thread *t, MPI_Request saved, const MPI_Status *st);
PLX_HIDDEN uint64_t plx_mpi_bytes(int count, MPI_Datatype type);
PLX_HIDDEN void plx_mpi_thread_end(struct plx_thread *t);
/* Points the MPI library's Fortran layers at the wrappers (mpi_fortran.c); at load. */
PLX_HIDDEN void plx_mpi_fortran_load(void);

/* scratch arrays of the calling thread, for saved requests and substitute statuses */
PLX_HIDDEN MPI_Request *plx_mpi_scratch_requests(struct plx_thread *t, int n);
PLX_HIDDEN MPI_Status *plx_mpi_scratch_statuses(struct plx_thread *t, int n);

/* clock offsets to rank 0 (mpi_clock.c): at Init when every rank of the job is measured (the
 * decision kept for Finalize), else a ClockSyncSkipped record */
PLX_HIDDEN void plx_mpi_clock_init(void);
PLX_HIDDEN void plx_mpi_clock_finalize(void);

/* which ranks of the job are measured (mpi_job.c): a marker made before MPI_Init, the markers
 * of the job counted after it (0 when this rank has none), this rank's removed */
PLX_HIDDEN void plx_mpi_job_mark(void);
PLX_HIDDEN int plx_mpi_job_marked(int size);
PLX_HIDDEN void plx_mpi_job_unmark(void);
PLX_HIDDEN void plx_mpi_job_decided(void);

/* A wrapper's region id, looked up once. */
#define PLX_MPI_REGION(name)                                                                  \
    ({                                                                                     \
        static _Atomic uint32_t id_;                                                       \
        uint32_t v_ = atomic_load_explicit(&id_, memory_order_relaxed);                    \
        if (!v_) {                                                                         \
            v_ = plx_ext_region(name, PLX_KIND_MPI);                                       \
            atomic_store_explicit(&id_, v_, memory_order_relaxed);                         \
        }                                                                                  \
        v_;                                                                                \
    })

/* Wrapper skeleton: the region of the routine around the PMPI call; BEFORE and AFTER run with
 * the thread acquired (`t`, `rid` in scope). Unmeasured: the PMPI call alone. */
#define PLX_MPI_WRAP(name, call, BEFORE, AFTER)                                               \
    do {                                                                                   \
        struct plx_thread *t = plx_ext_acquire();                                          \
        if (!t)                                                                            \
            return call;                                                                   \
        uint32_t rid = PLX_MPI_REGION(name);                                               \
        (void)rid;                                                                         \
        plx_ext_enter(t, rid);                                                             \
        BEFORE;                                                                            \
        int rc_ = call;                                                                    \
        AFTER;                                                                             \
        plx_ext_leave(t, rid);                                                             \
        plx_ext_release(t);                                                                \
        return rc_;                                                                        \
    } while (0)

#define PLX_MPI_EXPORT __attribute__((visibility("default")))

#endif /* PLX_MPI_INTERNAL_H */
