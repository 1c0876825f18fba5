/* Nonblocking and persistent requests followed from post to completion: a process-wide
 * lock-free table keyed by the request handle, since any thread may complete a request.
 * An entry's fields are written before its key is published; it is removed by the thread that
 * completes (or frees) the request. */
#include "mpi_internal.h"

#include <string.h>

#define REQ_SLOTS (1u << 16)
/* keys are odd (handle << 1 | 1); the even values mark slot states */
#define EMPTY 0
#define DELETED 2
#define CLAIMED 4

static struct plx_req table[REQ_SLOTS];

uintptr_t plx_mpi_req_key(MPI_Request r)
{
    uintptr_t k = 0;
    memcpy(&k, &r, sizeof r < sizeof k ? sizeof r : sizeof k);
    return (k << 1) | 1;
}

static uint32_t hash(uintptr_t k)
{
    return (uint32_t)(((uint64_t)k * 0x9E3779B97F4A7C15ull) >> 40) & (REQ_SLOTS - 1);
}

/* A matched message (MPI_Mprobe, MPI_Improbe) until its MPI_Mrecv or MPI_Imrecv: keyed in the
 * same table, its key even (handle << 3 | 6) where a request's is odd, never a slot state. */
static uintptr_t msg_key(MPI_Message m)
{
    uintptr_t k = 0;
    memcpy(&k, &m, sizeof m < sizeof k ? sizeof m : sizeof k);
    return (k << 3) | 6;
}

static void add(uintptr_t k, int kind, int persistent, uint32_t region, uint32_t comm,
                uint32_t peer, int tag, uint64_t bytes, uint64_t posted)
{
    for (uint32_t i = hash(k), n = 0; n < REQ_SLOTS; i = (i + 1) & (REQ_SLOTS - 1), n++) {
        uintptr_t s = atomic_load_explicit(&table[i].key, memory_order_relaxed);
        if (s != EMPTY && s != DELETED)
            continue;
        /* claim the slot with a value no lookup can match, fill it, then publish */
        if (!atomic_compare_exchange_strong(&table[i].key, &s, (uintptr_t)CLAIMED))
            continue;
        struct plx_req *e = &table[i];
        e->kind = (uint8_t)kind;
        e->persistent = (uint8_t)persistent;
        e->region = region;
        e->comm = comm;
        e->peer = peer;
        e->tag = tag;
        e->bytes = bytes;
        e->mode = 0;
        e->send = PLX_EXT_NO_SEND;
        e->posted = posted;
        atomic_store_explicit(&e->key, k, memory_order_release);
        return;
    }
}

void plx_mpi_req_add(MPI_Request r, int kind, int persistent, uint32_t region, uint32_t comm,
                     uint32_t peer, int tag, uint64_t bytes, uint64_t posted)
{
    add(plx_mpi_req_key(r), kind, persistent, region, comm, peer, tag, bytes, posted);
}

static struct plx_req *find(uintptr_t k)
{
    for (uint32_t i = hash(k), n = 0; n < REQ_SLOTS; i = (i + 1) & (REQ_SLOTS - 1), n++) {
        uintptr_t s = atomic_load_explicit(&table[i].key, memory_order_acquire);
        if (s == k)
            return &table[i];
        if (s == EMPTY)
            return NULL;
    }
    return NULL;
}

struct plx_req *plx_mpi_req_find(MPI_Request r)
{
    return find(plx_mpi_req_key(r));
}

void plx_mpi_msg_add(MPI_Message m, uint32_t comm)
{
    add(msg_key(m), PLX_REQ_MSG, 0, 0, comm, PLX_NO_PEER, 0, 0, 0);
}

uint32_t plx_mpi_msg_take(MPI_Message m)
{
    struct plx_req *e = find(msg_key(m));
    if (!e)
        return PLX_NO_PEER;
    uint32_t comm = e->comm;
    plx_mpi_req_remove(e);
    return comm;
}

/* Written by the thread that posts or starts the request, before any completion of it. One
 * handle may stand for several requests at once: Open MPI returns one shared, already complete
 * request for each eager MPI_Isend, so two Isends before a Waitall have one handle and an
 * entry each (added in order, completed in order): the send goes to the first entry of the
 * handle without one (a persistent request's own entry, whose handle is its alone). */
void plx_mpi_req_sent(MPI_Request r, struct plx_thread *t, int mode, uint64_t send)
{
    uintptr_t k = plx_mpi_req_key(r);
    for (uint32_t i = hash(k), n = 0; n < REQ_SLOTS; i = (i + 1) & (REQ_SLOTS - 1), n++) {
        uintptr_t s = atomic_load_explicit(&table[i].key, memory_order_acquire);
        if (s == EMPTY)
            return;
        struct plx_req *e = &table[i];
        if (s != k || (!e->persistent && e->send != PLX_EXT_NO_SEND))
            continue;
        e->mode = (uint8_t)mode;
        e->thread = t->index;
        e->send = send;
        return;
    }
}

void plx_mpi_req_remove(struct plx_req *e)
{
    atomic_store_explicit(&e->key, (uintptr_t)DELETED, memory_order_release);
}
