/* MPJ Express (pure Java MPI, package mpi) as MPI: the agent rewrites MPJ's communication methods
 * to call these natives on entry and exit (the table of java/agent/.../Mpj.java), and they record
 * what the PMPI wrappers record for a C program: a region MPI_<routine> (kind MPI) inside the
 * Java method, and the runtime's message records (core/messages.c) with world ranks and
 * communicator ids; each communicator is a CommDef record, as the C wrappers write it.
 *
 * Invariants: only the outermost MPJ routine of a thread records (MPJ's Sendrecv, Barrier or
 * collectives calling its own Isend/Irecv/Wait are inside it); the natives read MPJ's objects
 * through fields only, never by calling Java (which would be measured inside the MPI region);
 * the kind numbers are Mpj.java's. Communicators: MPI.COMM_WORLD is id 0 and MPI.COMM_SELF id 1
 * (MPI.Init), the others are defined when the routine that created them (Split, Create, clone,
 * Create_intercomm, Merge, Create_cart) returns them — every member in the same order, as in C —
 * or at their first use; their members are mapped to world ranks by the UUIDs of MPJ's process
 * ids; an intercommunicator (MPJ's intercomm flag) is an InterCommDef with its local group
 * (localgroup) and its remote group (group). The table is appended under a lock and read without one (an entry is complete before
 * `ncomms` counts it). A thread's posted receives not yet completed are kept up to PENDING; one
 * posted beyond them is not recorded, and said once. MPI.OBJECT messages: a send is recorded
 * when MPJ commits its buffer (the serialized bytes are known then), a receive takes the length
 * of the serialized bytes MPJ committed inside the routine that completed it. A receive posted
 * by Irecv and completed by a Wait/Test has a recv_posted event (its Irecv's entry) before it;
 * a send posted by Isend (Issend, Ibsend, Irsend) has a send_done event in the Wait/Test that
 * completed it, with its mode, as the C wrappers write it. A request is completed on the
 * thread that posted it (another thread's Wait on it records nothing). */
#include "jvm.h"

#include "../../core/ext.h"

#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

enum { MPJ_OTHER = 0, MPJ_SEND = 1, MPJ_RECV = 2, MPJ_ISEND = 3, MPJ_IRECV = 4, MPJ_WAIT = 5,
       MPJ_SENDRECV = 6, MPJ_BARRIER = 7, MPJ_BCAST = 8, MPJ_REDUCE = 9, MPJ_ALLREDUCE = 10,
       MPJ_INIT = 11, MPJ_WAITALL = 12, MPJ_GATHER = 13, MPJ_SCATTER = 14, MPJ_ALLGATHER = 15,
       MPJ_ALLTOALL = 16, MPJ_GATHERV = 17, MPJ_SCATTERV = 18, MPJ_ALLGATHERV = 19,
       MPJ_ALLTOALLV = 20, MPJ_REDUCE_SCATTER = 21, MPJ_SCAN = 22, MPJ_TEST = 23,
       MPJ_TESTALL = 24, MPJ_WAITANY = 25, MPJ_TESTANY = 26, MPJ_WAITSOME = 27,
       MPJ_TESTSOME = 28, MPJ_COMM_NEW = 29, MPJ_ISSEND = 31, MPJ_IBSEND = 32, MPJ_IRSEND = 33 };

#define MPJ_OBJECT 12 /* mpi.Datatype.OBJECT, the base type of MPI.OBJECT */
#define PENDING 64    /* a thread's requests (receives and sends) not yet completed */
#define COMMS 1024    /* communicators of the process */
#define COMMITS 64    /* serialized lengths committed inside one routine */

struct comm {
    jweak obj;
    uint32_t id, size, me; /* me: this process's rank in it, or size */
    uint32_t *world;       /* world rank of each member (of the remote group of an intercomm) */
    uint32_t local_size;   /* an intercomm's local group (0 and NULL for an intracomm) */
    uint32_t *local;       /* world rank of each rank of the local group */
};

/* A request not completed yet: a receive posted by Irecv, or a send posted by Isend (the
 * Issend/Ibsend/Irsend forms too), whose completion is a send_done event. */
struct pending {
    jweak request;
    uint32_t region, elem_bytes, comm;
    int object;      /* MPI.OBJECT: its bytes are a committed serialized length */
    uint64_t posted; /* ticks of its Irecv's entry (0: not traced), for its recv_posted event */
    int send;        /* a send: its mode (0 standard .. 3 ready, as send_done's) in `mode` */
    int mode;
    uint32_t thread; /* a send: the thread that recorded it, and its number there */
    uint64_t sent;
};

static PLX_TLS int depth; /* MPJ routines of this thread entered and not left */
static PLX_TLS int counted; /* the outermost one is recording */
static PLX_TLS struct { /* an MPI.OBJECT send waiting for its buffer's commit */
    int active, tag;
    uint32_t region, comm, peer;
} deferred;
/* A thread's receives and commits, allocated at its first recorded MPJ routine: libplx's static
 * TLS must stay small enough for the dlopen of plx attach into a running process (glibc takes
 * an initial-exec library's TLS from a surplus of about 1.6 KiB), so no array lives in TLS. Set
 * whenever `counted` is; kept until the process ends (a thread's end may be written by another). */
struct mpj_thread {
    struct pending pending[PENDING];
    uint32_t commits[COMMITS]; /* serialized lengths committed in the routine */
    int ncommits, next_commit;
    uint64_t entered; /* ticks of the outermost routine's entry (0: not traced) */
    uint64_t sent;    /* the outermost routine's send's number (PLX_EXT_NO_SEND: none) */
};
static PLX_TLS struct mpj_thread *mine;

static struct comm comms[COMMS];
static _Atomic uint32_t ncomms;
static atomic_flag comms_lock = ATOMIC_FLAG_INIT;
static uint64_t *world_ids; /* the UUID (2 words) of each world rank */
static int my_rank = -1, world_size;
static _Atomic int too_many_comms, full;
static jfieldID dt_size, dt_bytes, dt_base, st_source, st_tag, st_count, st_bytes, st_type,
    st_index, cm_group, cm_localgroup, cm_inter, gr_dev, dg_ids, pid_uuid, uuid_hi, uuid_lo,
    buf_dynamic;

static int fields_of(JNIEnv *env, jobject obj, jfieldID *ids[], const char *const names[],
                     const char *const sigs[], int n)
{
    jclass c = (*env)->GetObjectClass(env, obj);
    for (int i = 0; i < n; i++)
        *ids[i] = (*env)->GetFieldID(env, c, names[i], sigs[i]);
    (*env)->DeleteLocalRef(env, c);
    if ((*env)->ExceptionCheck(env)) {
        (*env)->ExceptionClear(env);
        for (int i = 0; i < n; i++)
            *ids[i] = NULL;
        return 0;
    }
    return 1;
}

static jint int_field(JNIEnv *env, jobject obj, jfieldID *id, const char *name)
{
    if (!obj)
        return 0;
    if (!*id) {
        jfieldID *ids[] = {id};
        const char *const names[] = {name}, *const sigs[] = {"I"};
        if (!fields_of(env, obj, ids, names, sigs, 1))
            return 0;
    }
    return (*env)->GetIntField(env, obj, *id);
}

/* An mpi.Datatype's bytes per element (0 for MPI.OBJECT: its bytes are the serialized ones). */
static uint32_t elem_bytes(JNIEnv *env, jobject dt)
{
    if (!dt)
        return 0;
    if (!dt_size) {
        jfieldID *ids[] = {&dt_bytes, &dt_size, &dt_base};
        const char *const names[] = {"byteSize", "size", "baseType"}, *const sigs[] = {"I", "I", "I"};
        if (!fields_of(env, dt, ids, names, sigs, 3))
            return 0;
    }
    jint n = (*env)->GetIntField(env, dt, dt_size), b = (*env)->GetIntField(env, dt, dt_bytes);
    return n > 0 && b > 0 ? (uint32_t)n * (uint32_t)b : 0;
}

static int is_object(JNIEnv *env, jobject dt)
{
    elem_bytes(env, dt); /* resolves the fields */
    return dt && dt_base && (*env)->GetIntField(env, dt, dt_base) == MPJ_OBJECT;
}

/* A Status's source, tag and bytes (its count of elements of `elem` bytes, or of bytes). */
static int status_of(JNIEnv *env, jobject st, uint32_t elem, int *source, int *tag, uint64_t *bytes)
{
    if (!st)
        return 0;
    if (!st_source) {
        jfieldID *ids[] = {&st_tag, &st_count, &st_bytes, &st_type, &st_index, &st_source};
        const char *const names[] = {"tag", "count", "countInBytes", "type", "index", "source"};
        const char *const sigs[] = {"I", "I", "I", "Lmpjbuf/Type;", "I", "I"};
        if (!fields_of(env, st, ids, names, sigs, 6))
            return 0;
    }
    *source = (*env)->GetIntField(env, st, st_source);
    *tag = (*env)->GetIntField(env, st, st_tag);
    jobject type = (*env)->GetObjectField(env, st, st_type);
    jint n = type ? (*env)->GetIntField(env, st, st_count) : (*env)->GetIntField(env, st, st_bytes);
    if (type) {
        (*env)->DeleteLocalRef(env, type);
        *bytes = n > 0 ? (uint64_t)n * elem : 0;
    } else {
        *bytes = n > 0 ? (uint64_t)n : 0;
    }
    return *source >= 0;
}

/* ---- communicators ------------------------------------------------------------------------ */

/* Whether an mpi.Comm is an intercommunicator (its field intercomm). */
static int is_inter(JNIEnv *env, jobject comm)
{
    if (!cm_inter) {
        jfieldID *f[] = {&cm_inter};
        const char *const n[] = {"intercomm"}, *const s[] = {"Z"};
        if (!fields_of(env, comm, f, n, s, 1))
            return 0;
    }
    return (*env)->GetBooleanField(env, comm, cm_inter) != JNI_FALSE;
}

/* The UUIDs of an mpi.Comm's group (comm.group.mpjdevGroup.ids[i].uuid; with `local`, its
 * localgroup: an intercomm's group is the remote one) into ids (2 words each), at most max;
 * their number, or -1. */
static int group_ids(JNIEnv *env, jobject comm, int local, uint64_t *ids, int max)
{
    jfieldID *which = local ? &cm_localgroup : &cm_group;
    if (!*which) {
        jfieldID *f[] = {which};
        const char *const n[] = {local ? "localgroup" : "group"}, *const s[] = {"Lmpi/Group;"};
        if (!fields_of(env, comm, f, n, s, 1))
            return -1;
    }
    jobject group = (*env)->GetObjectField(env, comm, *which);
    if (!group)
        return -1;
    if (!gr_dev) {
        jfieldID *f[] = {&gr_dev};
        const char *const n[] = {"mpjdevGroup"}, *const s[] = {"Lmpjdev/Group;"};
        if (!fields_of(env, group, f, n, s, 1))
            return -1;
    }
    jobject dev = (*env)->GetObjectField(env, group, gr_dev);
    (*env)->DeleteLocalRef(env, group);
    if (!dev)
        return -1;
    if (!dg_ids) {
        jfieldID *f[] = {&dg_ids};
        const char *const n[] = {"ids"}, *const s[] = {"[Lxdev/ProcessID;"};
        if (!fields_of(env, dev, f, n, s, 1))
            return -1;
    }
    jobjectArray arr = (jobjectArray)(*env)->GetObjectField(env, dev, dg_ids);
    (*env)->DeleteLocalRef(env, dev);
    if (!arr)
        return -1;
    jsize n = (*env)->GetArrayLength(env, arr);
    if (n > max)
        n = max;
    for (jsize i = 0; i < n; i++) {
        jobject pid = (*env)->GetObjectArrayElement(env, arr, i);
        ids[2 * i] = ids[2 * i + 1] = 0;
        if (!pid)
            continue;
        if (!pid_uuid) {
            jfieldID *f[] = {&pid_uuid};
            const char *const nm[] = {"uuid"}, *const s[] = {"Ljava/util/UUID;"};
            fields_of(env, pid, f, nm, s, 1);
        }
        jobject uuid = pid_uuid ? (*env)->GetObjectField(env, pid, pid_uuid) : NULL;
        if (uuid && !uuid_hi) {
            jfieldID *f[] = {&uuid_hi, &uuid_lo};
            const char *const nm[] = {"mostSigBits", "leastSigBits"}, *const s[] = {"J", "J"};
            fields_of(env, uuid, f, nm, s, 2);
        }
        if (uuid && uuid_hi) {
            ids[2 * i] = (uint64_t)(*env)->GetLongField(env, uuid, uuid_hi);
            ids[2 * i + 1] = (uint64_t)(*env)->GetLongField(env, uuid, uuid_lo);
        }
        (*env)->DeleteLocalRef(env, uuid);
        (*env)->DeleteLocalRef(env, pid);
    }
    (*env)->DeleteLocalRef(env, arr);
    return (int)n;
}

/* World ranks of an mpi.Comm's group (its localgroup with `local`) by their UUIDs, their number
 * in *size; NULL if unreadable. */
static uint32_t *world_of(JNIEnv *env, jobject obj, int local, uint32_t *size)
{
    uint64_t *ids = malloc(sizeof *ids * 2 * (size_t)world_size);
    int m = ids ? group_ids(env, obj, local, ids, world_size) : -1;
    *size = m > 0 ? (uint32_t)m : 0;
    uint32_t *world = m > 0 ? malloc(sizeof *world * *size) : NULL;
    for (uint32_t i = 0; world && i < *size; i++) {
        world[i] = PLX_EXT_NO_PEER;
        for (int w = 0; w < world_size; w++)
            if (world_ids[2 * w] == ids[2 * i] && world_ids[2 * w + 1] == ids[2 * i + 1])
                world[i] = (uint32_t)w;
    }
    free(ids);
    return world;
}

static struct plx_comm_members members_of(const struct comm *c)
{
    return (struct plx_comm_members){c->world, c->local, c->size, c->local_size};
}

static struct comm *lookup(JNIEnv *env, jobject obj)
{
    uint32_t n = atomic_load_explicit(&ncomms, memory_order_acquire);
    for (uint32_t i = 0; i < n; i++)
        if (comms[i].obj && (*env)->IsSameObject(env, comms[i].obj, obj))
            return &comms[i];
    return NULL;
}

/* Defines a communicator (its CommDef record) unless known; `members` given for the
 * predefined ones (obj may then be NULL: an id kept for MPI.COMM_SELF), else read from its
 * group. Cold. */
static struct comm *define(JNIEnv *env, jobject obj, const uint32_t *members, uint32_t size)
{
    if ((!obj && !members) || !world_ids)
        return NULL;
    struct comm *c = obj ? lookup(env, obj) : NULL;
    if (c)
        return c;
    while (atomic_flag_test_and_set_explicit(&comms_lock, memory_order_acquire))
        sched_yield();
    uint32_t n = atomic_load_explicit(&ncomms, memory_order_relaxed);
    c = obj ? lookup(env, obj) : NULL;
    if (c || n >= COMMS) {
        atomic_flag_clear_explicit(&comms_lock, memory_order_release);
        if (!c && atomic_fetch_add(&too_many_comms, 1) == 0)
            plx_warn("MPJ Express: more than %d communicators: the messages of the later ones are "
                     "not recorded", COMMS);
        return c;
    }
    uint32_t *world = NULL, *local = NULL, local_size = 0;
    if (members) {
        world = malloc(sizeof *world * (size ? size : 1));
        if (world)
            memcpy(world, members, sizeof *world * size);
    } else {
        world = world_of(env, obj, 0, &size);
        if (world && is_inter(env, obj) && !(local = world_of(env, obj, 1, &local_size))) {
            free(world);
            world = NULL;
        }
    }
    if (!world) {
        atomic_flag_clear_explicit(&comms_lock, memory_order_release);
        return NULL;
    }
    c = &comms[n];
    *c = (struct comm){obj ? (*env)->NewWeakGlobalRef(env, obj) : NULL, n, size, size, world,
                       local_size, local};
    for (uint32_t i = 0; i < size; i++)
        if (world[i] == (uint32_t)my_rank)
            c->me = i;
    uint32_t ordinal = 0;
    for (uint32_t i = 0; i < n; i++)
        if (plx_ext_comm_same_members(members_of(c), members_of(&comms[i])))
            ordinal++;
    struct plx_thread *t = plx_self;
    if (t)
        t->guard++;
    struct plx_rec rec;
    plx_rec_init(&rec);
    if (local) {
        /* InterCommDef: the local group, then the remote one */
        uint32_t *both = malloc(sizeof *both * (local_size + size ? local_size + size : 1));
        if (both) {
            memcpy(both, local, sizeof *both * local_size);
            memcpy(both + local_size, world, sizeof *both * size);
            plx_enc_inter_comm_def(&rec, n, ordinal, local_size, local_size + size, both);
            plx_rec_write(&rec, 0);
            free(both);
        }
    } else {
        plx_ext_enc_comm_def(&rec, n, ordinal, size, world, (uint32_t)world_size);
        plx_rec_write(&rec, 0);
    }
    if (t)
        t->guard--;
    atomic_store_explicit(&ncomms, n + 1, memory_order_release);
    atomic_flag_clear_explicit(&comms_lock, memory_order_release);
    return c;
}

/* A communicator used: known, or defined now (one not created by a routine the agent rewrites). */
static struct comm *comm_of(JNIEnv *env, jobject obj)
{
    if (!obj || !world_ids)
        return NULL;
    struct comm *c = lookup(env, obj);
    return c ? c : define(env, obj, NULL, 0);
}

static uint32_t peer_of(const struct comm *c, int rank)
{
    return c && rank >= 0 && (uint32_t)rank < c->size ? c->world[rank] : PLX_EXT_NO_PEER;
}

/* ---- requests ---------------------------------------------------------------------------- */

static int nonblocking_send(int kind)
{
    return kind == MPJ_ISEND || kind == MPJ_ISSEND || kind == MPJ_IBSEND || kind == MPJ_IRSEND;
}

/* A free entry of the thread's pending requests, or NULL (said once). An entry whose request
 * the program let go without completing it (its weak reference cleared) is free again. */
static struct pending *pending_slot(JNIEnv *env)
{
    struct pending *pending = mine->pending;
    for (int i = 0; i < PENDING; i++) {
        if (pending[i].request && (*env)->IsSameObject(env, pending[i].request, NULL)) {
            (*env)->DeleteWeakGlobalRef(env, pending[i].request);
            pending[i].request = NULL;
        }
        if (!pending[i].request)
            return &pending[i];
    }
    if (atomic_fetch_add(&full, 1) == 0)
        plx_warn("MPJ Express: more than %d requests posted and not completed on a thread: the "
                 "receives and send completions beyond them are not recorded", PENDING);
    return NULL;
}

/* ---- natives ------------------------------------------------------------------------------ */

jint JNICALL plx_jvm_mpj_routine(JNIEnv *env, jclass cls, jstring name)
{
    (void)cls;
    const char *s = (*env)->GetStringUTFChars(env, name, NULL);
    if (!s)
        return -1;
    struct plx_thread *t = plx_self;
    if (t)
        t->guard++;
    jint id = (jint)(plx_region_of_text(s, PLX_KIND_MPI) & PLX_REGION_ID_MASK); /* s is not kept */
    if (t)
        t->guard--;
    (*env)->ReleaseStringUTFChars(env, name, s);
    return id;
}

void JNICALL plx_jvm_mpj_init(JNIEnv *env, jclass cls, jobject world, jint rank, jint size,
                              jobject self)
{
    (void)cls;
    if (world_ids || !world || size <= 0 || rank < 0 || rank >= size)
        return;
    uint64_t *ids = calloc(2 * (size_t)size, sizeof *ids);
    uint32_t *ranks = malloc(sizeof *ranks * (size_t)size);
    if (!ids || !ranks || group_ids(env, world, 0, ids, size) != size) {
        free(ids);
        free(ranks);
        return;
    }
    my_rank = rank;
    world_size = size;
    struct plx_thread *t = plx_self;
    if (t)
        t->guard++;
    struct plx_rec rec;
    plx_rec_init(&rec);
    plx_enc_mpi_init(&rec, (uint32_t)rank, (uint32_t)size, 3, plx_ticks(), "MPJ Express");
    plx_rec_write(&rec, 0);
    if (t)
        t->guard--;
    world_ids = ids;
    for (int i = 0; i < size; i++)
        ranks[i] = (uint32_t)i;
    define(env, world, ranks, (uint32_t)size); /* id 0 */
    ranks[0] = (uint32_t)rank;
    define(env, self, ranks, 1); /* id 1 */
    free(ranks);
}

/* The send of an outermost routine: now, or for MPI.OBJECT at its buffer's commit. */
void JNICALL plx_jvm_mpj_begin(JNIEnv *env, jclass cls, jint region, jint kind, jobject comm,
                               jobject dt, jint count, jint peer, jint tag)
{
    (void)cls;
    if (depth++ > 0)
        return;
    struct plx_thread *t = plx_thread();
    if (t && !mine)
        mine = calloc(1, sizeof *mine);
    counted = t != NULL && mine != NULL;
    deferred.active = 0;
    if (!counted)
        return;
    mine->ncommits = mine->next_commit = 0;
    mine->sent = PLX_EXT_NO_SEND;
    int send = kind == MPJ_SEND || kind == MPJ_SENDRECV || nonblocking_send(kind);
    const struct comm *c = send ? comm_of(env, comm) : NULL;
    uint32_t to = peer_of(c, peer);
    int object = c && to != PLX_EXT_NO_PEER && is_object(env, dt);
    uint64_t bytes = c && count > 0 ? (uint64_t)count * elem_bytes(env, dt) : 0;
    t->guard++;
    plx_ext_enter(t, (uint32_t)region);
    mine->entered = plx_ext_last_ticks(t);
    if (object) {
        deferred.region = (uint32_t)region;
        deferred.comm = c->id;
        deferred.peer = to;
        deferred.tag = tag;
        deferred.active = 1;
    } else if (to != PLX_EXT_NO_PEER)
        mine->sent = plx_ext_msg_sent(t, (uint32_t)region, c->id, to, tag, bytes);
    t->guard--;
}

/* mpjbuf.Buffer.commit() returned: the length of its serialized part (MPI.OBJECT elements). */
void JNICALL plx_jvm_mpj_buffer(JNIEnv *env, jclass cls, jobject buf)
{
    (void)cls;
    if (depth == 0 || !counted || !buf)
        return;
    struct plx_thread *t = plx_self;
    if (!t || t->dead)
        return;
    if (!buf_dynamic) {
        jfieldID *f[] = {&buf_dynamic};
        const char *const n[] = {"dynamicBuffer"}, *const s[] = {"[B"};
        if (!fields_of(env, buf, f, n, s, 1))
            return;
    }
    jbyteArray dyn = (jbyteArray)(*env)->GetObjectField(env, buf, buf_dynamic);
    uint32_t len = dyn ? (uint32_t)(*env)->GetArrayLength(env, dyn) : 0;
    (*env)->DeleteLocalRef(env, dyn);
    if (deferred.active) {
        deferred.active = 0;
        t->guard++;
        mine->sent =
            plx_ext_msg_sent(t, deferred.region, deferred.comm, deferred.peer, deferred.tag, len);
        t->guard--;
    } else if (mine->ncommits < COMMITS) {
        mine->commits[mine->ncommits++] = len;
    }
}

static uint64_t next_committed(void)
{
    return mine->next_commit < mine->ncommits ? mine->commits[mine->next_commit++] : 0;
}

static uint64_t counts_bytes(JNIEnv *env, jobject counts, uint32_t n, uint32_t elem, int only)
{
    if (!counts)
        return 0;
    jsize len = (*env)->GetArrayLength(env, (jintArray)counts);
    jint *v = (*env)->GetIntArrayElements(env, (jintArray)counts, NULL);
    if (!v)
        return 0;
    uint64_t s = 0;
    for (jsize i = 0; i < len && (uint32_t)i < n; i++)
        if ((only < 0 || i == only) && v[i] > 0)
            s += (uint64_t)v[i] * elem;
    (*env)->ReleaseIntArrayElements(env, (jintArray)counts, v, JNI_ABORT);
    return s;
}

static void collective(JNIEnv *env, struct plx_thread *t, uint32_t region, int kind,
                       const struct comm *c, jobject sdt, jint scount, jobject scounts,
                       jobject rdt, jint rcount, jobject rcounts, int root)
{
    static const enum plx_coll of[] = {
        [MPJ_BARRIER] = PLX_COLL_BARRIER, [MPJ_BCAST] = PLX_COLL_BCAST,
        [MPJ_REDUCE] = PLX_COLL_REDUCE, [MPJ_ALLREDUCE] = PLX_COLL_ALLREDUCE,
        [MPJ_SCAN] = PLX_COLL_ALLREDUCE, [MPJ_GATHER] = PLX_COLL_GATHER,
        [MPJ_GATHERV] = PLX_COLL_GATHERV, [MPJ_SCATTER] = PLX_COLL_SCATTER,
        [MPJ_SCATTERV] = PLX_COLL_SCATTERV, [MPJ_ALLGATHER] = PLX_COLL_ALLGATHER,
        [MPJ_ALLGATHERV] = PLX_COLL_ALLGATHERV, [MPJ_ALLTOALL] = PLX_COLL_ALLTOALL,
        [MPJ_ALLTOALLV] = PLX_COLL_ALLTOALLV, [MPJ_REDUCE_SCATTER] = PLX_COLL_REDUCE_SCATTER,
    };
    uint32_t se = elem_bytes(env, sdt), re = elem_bytes(env, rdt);
    uint64_t send = scounts ? counts_bytes(env, scounts, c->size, se, -1)
                            : scount > 0 ? (uint64_t)scount * se : 0;
    uint64_t recv = rcounts ? counts_bytes(env, rcounts, c->size, re, -1)
                            : rcount > 0 ? (uint64_t)rcount * re : 0;
    if (kind == MPJ_REDUCE_SCATTER) /* the counts are the receive counts of every rank */
        recv = counts_bytes(env, scounts, c->size, se, (int)c->me);
    int rooted = root >= 0;
    struct plx_coll_bytes x =
        plx_ext_coll_bytes(of[kind], rooted && (uint32_t)root == c->me, c->size, send, recv);
    t->guard++;
    plx_ext_msg_collective(t, region, c->id, rooted ? peer_of(c, root) : PLX_EXT_NO_PEER, x.sent,
                           x.received);
    t->guard--;
}

/* `posted`: a request's receive, the ticks of its Irecv's entry (a recv_posted event before
 * the receive, as the C wrappers write it); 0 for a blocking receive, posted at its entry. */
static void received(JNIEnv *env, struct plx_thread *t, uint32_t region, const struct comm *c,
                     jobject st, uint32_t elem, int object, uint64_t posted)
{
    int source, tag;
    uint64_t bytes;
    if (!c || !status_of(env, st, elem, &source, &tag, &bytes) ||
        peer_of(c, source) == PLX_EXT_NO_PEER)
        return;
    if (object)
        bytes = next_committed();
    t->guard++;
    if (posted)
        plx_ext_msg_recv_posted(t, posted);
    plx_ext_msg_received(t, region, c->id, peer_of(c, source), tag, bytes);
    t->guard--;
}

/* A request completed (Wait/Test family): a posted receive is recorded now, with its source;
 * a posted send's completion is its send_done event. */
static void completed(JNIEnv *env, struct plx_thread *t, jobject request, jobject st)
{
    if (!request || !st)
        return;
    struct pending *pending = mine->pending;
    for (int i = 0; i < PENDING; i++) {
        if (!pending[i].request || !(*env)->IsSameObject(env, pending[i].request, request))
            continue;
        if (pending[i].send) {
            t->guard++;
            plx_ext_msg_send_done(t, pending[i].thread, pending[i].mode, pending[i].sent);
            t->guard--;
        } else {
            received(env, t, pending[i].region, &comms[pending[i].comm], st,
                     pending[i].elem_bytes, pending[i].object, pending[i].posted);
        }
        (*env)->DeleteWeakGlobalRef(env, pending[i].request);
        pending[i].request = NULL;
        return;
    }
}

static void completed_at(JNIEnv *env, struct plx_thread *t, jobjectArray reqs, jsize i, jobject st)
{
    if (!reqs || i < 0 || i >= (*env)->GetArrayLength(env, reqs))
        return;
    jobject r = (*env)->GetObjectArrayElement(env, reqs, i);
    completed(env, t, r, st);
    (*env)->DeleteLocalRef(env, r);
}

/* Statuses of the array forms: by position (all), or by each status's index (some). */
static void completed_array(JNIEnv *env, struct plx_thread *t, jobjectArray reqs,
                            jobjectArray sts, int by_index)
{
    jsize n = sts ? (*env)->GetArrayLength(env, sts) : 0;
    for (jsize i = 0; i < n; i++) {
        jobject st = (*env)->GetObjectArrayElement(env, sts, i);
        if (st)
            completed_at(env, t, reqs, by_index ? int_field(env, st, &st_index, "index") : i, st);
        (*env)->DeleteLocalRef(env, st);
    }
}

void JNICALL plx_jvm_mpj_end(JNIEnv *env, jclass cls, jobject result, jint region, jint kind,
                             jobject self, jobject sdt, jint scount, jobject scounts, jobject rdt,
                             jint rcount, jobject rcounts, jint root)
{
    (void)cls;
    if (--depth > 0 || !counted)
        return;
    counted = 0;
    deferred.active = 0;
    struct plx_thread *t = plx_self;
    if (!t || t->dead)
        return;
    switch (kind) {
    case MPJ_RECV:
    case MPJ_SENDRECV:
        received(env, t, (uint32_t)region, comm_of(env, self), result, elem_bytes(env, rdt),
                 is_object(env, rdt), 0);
        break;
    case MPJ_IRECV: {
        const struct comm *c = result ? comm_of(env, self) : NULL;
        if (!c)
            break;
        struct pending *p = pending_slot(env);
        if (p)
            *p = (struct pending){.request = (*env)->NewWeakGlobalRef(env, result),
                                  .region = (uint32_t)region, .elem_bytes = elem_bytes(env, rdt),
                                  .comm = c->id, .object = is_object(env, rdt),
                                  .posted = mine->entered};
        break;
    }
    case MPJ_ISEND:
    case MPJ_ISSEND:
    case MPJ_IBSEND:
    case MPJ_IRSEND: {
        struct pending *p = result && mine->sent != PLX_EXT_NO_SEND ? pending_slot(env) : NULL;
        if (p)
            *p = (struct pending){.request = (*env)->NewWeakGlobalRef(env, result),
                                  .region = (uint32_t)region, .send = 1,
                                  .mode = kind == MPJ_ISEND ? 0 : kind - MPJ_ISSEND + 1,
                                  .thread = t->index, .sent = mine->sent};
        break;
    }
    case MPJ_WAIT:
    case MPJ_TEST:
        completed(env, t, self, result);
        break;
    case MPJ_WAITALL:
    case MPJ_TESTALL:
        completed_array(env, t, (jobjectArray)self, (jobjectArray)result, 0);
        break;
    case MPJ_WAITSOME:
    case MPJ_TESTSOME:
        completed_array(env, t, (jobjectArray)self, (jobjectArray)result, 1);
        break;
    case MPJ_WAITANY:
    case MPJ_TESTANY:
        if (result)
            completed_at(env, t, (jobjectArray)self, int_field(env, result, &st_index, "index"),
                         result);
        break;
    case MPJ_COMM_NEW:
        define(env, result, NULL, 0);
        break;
    case MPJ_BARRIER:
    case MPJ_BCAST:
    case MPJ_REDUCE:
    case MPJ_ALLREDUCE:
    case MPJ_SCAN:
    case MPJ_GATHER:
    case MPJ_GATHERV:
    case MPJ_SCATTER:
    case MPJ_SCATTERV:
    case MPJ_ALLGATHER:
    case MPJ_ALLGATHERV:
    case MPJ_ALLTOALL:
    case MPJ_ALLTOALLV:
    case MPJ_REDUCE_SCATTER: {
        const struct comm *c = comm_of(env, self);
        if (c)
            collective(env, t, (uint32_t)region, kind, c, sdt, scount, scounts, rdt, rcount,
                       rcounts, root);
        break;
    }
    default:
        break;
    }
    t->guard++;
    plx_ext_leave(t, (uint32_t)region);
    t->guard--;
}

/* The routine was left by an exception: its region closes, nothing is recorded. */
void JNICALL plx_jvm_mpj_abort(JNIEnv *env, jclass cls, jint region)
{
    (void)env;
    (void)cls;
    if (--depth > 0 || !counted)
        return;
    counted = 0;
    deferred.active = 0;
    struct plx_thread *t = plx_self;
    if (!t || t->dead)
        return;
    t->guard++;
    plx_ext_leave(t, (uint32_t)region);
    t->guard--;
}
