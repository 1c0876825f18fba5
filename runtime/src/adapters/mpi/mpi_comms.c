/* Communicators: a process-local id per communicator and the world rank of each of its ranks,
 * defined when created (mpi_commops.c: every member creates them in the same order, which the
 * ordinals rest on) or on first sight of one made otherwise (cold), and found afterwards by a
 * lock-free lookup. */
#include "mpi_internal.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

#define COMM_SLOTS 4096u

struct slot {
    _Atomic uintptr_t key; /* the handle's bits; 0 empty */
    struct plx_comm *comm;
};

static struct slot slots[COMM_SLOTS];
static struct plx_comm *defined[COMM_SLOTS]; /* by id; kept after free for the ordinal */
static uint32_t ndefined;
static atomic_flag lock = ATOMIC_FLAG_INIT;

static uintptr_t key_of(MPI_Comm c)
{
    uintptr_t k = 0;
    memcpy(&k, &c, sizeof c < sizeof k ? sizeof c : sizeof k);
    return k ? k : (uintptr_t)-1;
}

static uint32_t hash(uintptr_t k)
{
    return (uint32_t)(((uint64_t)k * 0x9E3779B97F4A7C15ull) >> 40) & (COMM_SLOTS - 1);
}

static struct plx_comm_members members_of(const struct plx_comm *c)
{
    return (struct plx_comm_members){c->world, c->local, c->size, c->local_size};
}

static void write_def(const struct plx_comm *c)
{
    uint32_t ordinal = 0;
    for (uint32_t i = 0; i < c->id; i++)
        if (defined[i] && plx_ext_comm_same_members(members_of(defined[i]), members_of(c)))
            ordinal++;
    struct plx_rec rec;
    plx_ext_rec_init(&rec);
    if (c->local) {
        /* InterCommDef: the local group, then the remote one */
        uint32_t n = c->local_size + c->size;
        uint32_t *both = malloc(sizeof *both * (n ? n : 1));
        if (!both)
            return;
        memcpy(both, c->local, sizeof *both * c->local_size);
        memcpy(both + c->local_size, c->world, sizeof *both * c->size);
        plx_enc_inter_comm_def(&rec, c->id, ordinal, c->local_size, n, both);
        free(both);
    } else {
        plx_ext_enc_comm_def(&rec, c->id, ordinal, c->size, c->world, (uint32_t)plx_mpi_size);
    }
    plx_ext_rec_write(&rec);
}

/* World rank of each rank of `group` (size members) into a new array. */
static uint32_t *world_ranks(MPI_Group group, int size)
{
    MPI_Group world;
    PMPI_Comm_group(MPI_COMM_WORLD, &world);
    int *ranks = malloc(sizeof(int) * (size_t)(size > 0 ? size : 1));
    int *out = malloc(sizeof(int) * (size_t)(size > 0 ? size : 1));
    uint32_t *w = malloc(sizeof(uint32_t) * (size_t)(size > 0 ? size : 1));
    if (ranks && out && w) {
        for (int i = 0; i < size; i++)
            ranks[i] = i;
        PMPI_Group_translate_ranks(group, size, ranks, world, out);
        for (int i = 0; i < size; i++)
            w[i] = out[i] == MPI_UNDEFINED ? PLX_NO_PEER : (uint32_t)out[i];
    } else {
        free(w);
        w = NULL;
    }
    free(ranks);
    free(out);
    PMPI_Group_free(&world);
    return w;
}

/* Called with the lock held; the groups are those of `like` (the communicator itself, or the
 * one an MPI_Comm_idup copies). */
static struct plx_comm *define(MPI_Comm comm, MPI_Comm like)
{
    if (ndefined >= COMM_SLOTS)
        return NULL;
    int inter = 0, size = 0, local_size = 0;
    MPI_Group group, local = MPI_GROUP_NULL;
    PMPI_Comm_test_inter(like, &inter);
    if (inter) {
        PMPI_Comm_remote_size(like, &size);
        PMPI_Comm_remote_group(like, &group);
        PMPI_Comm_size(like, &local_size);
        PMPI_Comm_group(like, &local);
    } else {
        PMPI_Comm_size(like, &size);
        PMPI_Comm_group(like, &group);
    }
    struct plx_comm *c = calloc(1, sizeof *c);
    if (c) {
        c->world = world_ranks(group, size);
        if (inter)
            c->local = world_ranks(local, local_size);
    }
    PMPI_Group_free(&group);
    if (inter)
        PMPI_Group_free(&local);
    if (!c || !c->world || (inter && !c->local)) {
        if (c) {
            free(c->world);
            free(c->local);
        }
        free(c);
        return NULL;
    }
    c->handle = comm;
    c->size = (uint32_t)size;
    c->local_size = inter ? (uint32_t)local_size : 0;
    c->id = ndefined;
    defined[ndefined++] = c;
    write_def(c);
    return c;
}

static struct plx_comm *lookup(uintptr_t k)
{
    for (uint32_t i = hash(k), n = 0; n < COMM_SLOTS; i = (i + 1) & (COMM_SLOTS - 1), n++) {
        uintptr_t s = atomic_load_explicit(&slots[i].key, memory_order_acquire);
        if (s == k)
            return slots[i].comm;
        if (s == 0)
            return NULL;
    }
    return NULL;
}

static struct plx_comm *get(MPI_Comm comm, MPI_Comm like)
{
    uintptr_t k = key_of(comm);
    struct plx_comm *c = lookup(k);
    if (c)
        return c;
    while (atomic_flag_test_and_set_explicit(&lock, memory_order_acquire))
        sched_yield();
    c = lookup(k);
    if (!c && (c = define(comm, like)) != NULL) {
        for (uint32_t i = hash(k);; i = (i + 1) & (COMM_SLOTS - 1)) {
            uintptr_t s = atomic_load_explicit(&slots[i].key, memory_order_relaxed);
            if (s == 0 || s == (uintptr_t)-2) { /* empty or freed */
                slots[i].comm = c;
                atomic_store_explicit(&slots[i].key, k, memory_order_release);
                break;
            }
        }
    }
    atomic_flag_clear_explicit(&lock, memory_order_release);
    return c;
}

struct plx_comm *plx_mpi_comm(MPI_Comm comm)
{
    return get(comm, comm);
}

struct plx_comm *plx_mpi_comm_copy(MPI_Comm comm, MPI_Comm of)
{
    return get(comm, of);
}

/* A freed handle may be reused for a new communicator: its slot is marked freed (kept for
 * probing), the definition stays for the ordinals of later ones. */
void plx_mpi_comm_forget(MPI_Comm comm)
{
    uintptr_t k = key_of(comm);
    while (atomic_flag_test_and_set_explicit(&lock, memory_order_acquire))
        sched_yield();
    for (uint32_t i = hash(k), n = 0; n < COMM_SLOTS; i = (i + 1) & (COMM_SLOTS - 1), n++) {
        uintptr_t s = atomic_load_explicit(&slots[i].key, memory_order_relaxed);
        if (s == 0)
            break;
        if (s == k) {
            atomic_store_explicit(&slots[i].key, (uintptr_t)-2, memory_order_release);
            break;
        }
    }
    atomic_flag_clear_explicit(&lock, memory_order_release);
}

void plx_mpi_comms_init(void)
{
    plx_mpi_comm(MPI_COMM_WORLD); /* id 0 */
    plx_mpi_comm(MPI_COMM_SELF);  /* id 1 */
}

uint32_t plx_mpi_world_rank(const struct plx_comm *c, int rank)
{
    if (!c || rank < 0 || (uint32_t)rank >= c->size)
        return PLX_NO_PEER;
    return c->world[rank];
}

/* The definition with id `id` (requests keep the id of their communicator). */
const struct plx_comm *plx_mpi_comm_by_id(uint32_t id)
{
    return id < COMM_SLOTS ? defined[id] : NULL;
}
