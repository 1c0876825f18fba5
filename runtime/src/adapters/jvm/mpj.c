/* MPJ Express (pure Java MPI, package mpi) as MPI: the agent rewrites MPJ's communication methods
 * to call these natives on entry and exit (the table of java/agent/.../Mpj.java), and they record
 * what the PMPI wrappers record for a C program: a region MPI_<routine> (kind MPI) inside the
 * Java method, and the runtime's message records (core/messages.c) with world ranks and
 * communicator ids; MPI.Init writes the MpiInit and CommDef records of MPI.COMM_WORLD.
 *
 * Invariants: only the outermost MPJ routine of a thread records (MPJ's Sendrecv, Barrier or
 * collectives calling its own Isend/Irecv/Wait are inside it); the natives read MPJ's objects
 * through fields only, never by calling Java (which would be measured inside the MPI region);
 * the kind numbers are Mpj.java's. Only MPI.COMM_WORLD's messages are recorded: one on another
 * communicator is said once on standard error. A thread's posted receives not yet waited for
 * are kept up to PENDING; one posted beyond them is not recorded, and said once. */
#include "jvm.h"

#include "../../core/ext.h"

#include <stdatomic.h>
#include <string.h>

enum { MPJ_OTHER = 0, MPJ_SEND = 1, MPJ_RECV = 2, MPJ_ISEND = 3, MPJ_IRECV = 4, MPJ_WAIT = 5,
       MPJ_SENDRECV = 6, MPJ_BARRIER = 7, MPJ_BCAST = 8, MPJ_REDUCE = 9, MPJ_ALLREDUCE = 10,
       MPJ_INIT = 11, MPJ_WAITALL = 12, MPJ_GATHER = 13, MPJ_SCATTER = 14, MPJ_ALLGATHER = 15,
       MPJ_ALLTOALL = 16 };

#define PENDING 64 /* a thread's posted receives not yet waited for */

struct pending {
    jweak request;
    uint32_t region, elem_bytes;
};

static PLX_TLS int depth; /* MPJ routines of this thread entered and not left */
static PLX_TLS int counted; /* the outermost one is recording */
static PLX_TLS struct pending pending[PENDING];

static jweak world;  /* MPI.COMM_WORLD */
static int my_rank = -1, world_size;
static _Atomic int other_comms, full;
static jfieldID dt_size, dt_bytes, st_source, st_tag, st_count, st_bytes, st_type;

static uint32_t elem_bytes(JNIEnv *env, jobject dt)
{
    if (!dt)
        return 0;
    if (!dt_size) {
        jclass c = (*env)->GetObjectClass(env, dt);
        dt_bytes = (*env)->GetFieldID(env, c, "byteSize", "I");
        dt_size = (*env)->GetFieldID(env, c, "size", "I");
        if ((*env)->ExceptionCheck(env)) {
            (*env)->ExceptionClear(env);
            dt_size = dt_bytes = NULL;
            return 0;
        }
    }
    jint n = (*env)->GetIntField(env, dt, dt_size), b = (*env)->GetIntField(env, dt, dt_bytes);
    return n > 0 && b > 0 ? (uint32_t)n * (uint32_t)b : 0;
}

/* A Status's source, tag and bytes (its count of elements of `elem` bytes, or of bytes). */
static int status_of(JNIEnv *env, jobject st, uint32_t elem, int *source, int *tag, uint64_t *bytes)
{
    if (!st)
        return 0;
    if (!st_source) {
        jclass c = (*env)->GetObjectClass(env, st);
        st_tag = (*env)->GetFieldID(env, c, "tag", "I");
        st_count = (*env)->GetFieldID(env, c, "count", "I");
        st_bytes = (*env)->GetFieldID(env, c, "countInBytes", "I");
        st_type = (*env)->GetFieldID(env, c, "type", "Lmpjbuf/Type;");
        st_source = (*env)->GetFieldID(env, c, "source", "I");
        if ((*env)->ExceptionCheck(env)) {
            (*env)->ExceptionClear(env);
            st_source = NULL;
            return 0;
        }
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

/* Whether `comm` is MPI.COMM_WORLD (id 0); the first other communicator is said once. */
static int in_world(JNIEnv *env, jobject comm)
{
    if (world && comm && (*env)->IsSameObject(env, comm, world))
        return 1;
    if (atomic_fetch_add(&other_comms, 1) == 0)
        plx_warn("MPJ Express: messages on communicators other than MPI.COMM_WORLD are not "
                 "recorded as MPI messages (their methods are)");
    return 0;
}

static uint32_t peer_of(int rank)
{
    return rank >= 0 && rank < world_size ? (uint32_t)rank : PLX_EXT_NO_PEER;
}

JNIEXPORT jint JNICALL Java_org_parallax_agent_Hooks_mpjRoutine(JNIEnv *env, jclass cls,
                                                                jstring name)
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

JNIEXPORT void JNICALL Java_org_parallax_agent_Hooks_mpjInit(JNIEnv *env, jclass cls, jobject comm,
                                                             jint rank, jint size)
{
    (void)cls;
    if (world || !comm || size <= 0)
        return;
    world = (*env)->NewWeakGlobalRef(env, comm);
    my_rank = rank;
    world_size = size;
    struct plx_thread *t = plx_self;
    if (t)
        t->guard++;
    struct plx_rec rec;
    plx_rec_init(&rec);
    plx_enc_mpi_init(&rec, (uint32_t)rank, (uint32_t)size, 3, plx_ticks(), "MPJ Express");
    plx_rec_write(&rec, 0);
    uint32_t ranks[4096];
    uint32_t n = (uint32_t)size < 4096 ? (uint32_t)size : 4096;
    for (uint32_t i = 0; i < n; i++)
        ranks[i] = i;
    plx_rec_init(&rec);
    plx_enc_comm_def(&rec, 0, 0, n, ranks);
    plx_rec_write(&rec, 0);
    if (t)
        t->guard--;
}

JNIEXPORT void JNICALL Java_org_parallax_agent_Hooks_mpjBegin(JNIEnv *env, jclass cls, jint region,
                                                              jint kind, jobject comm, jobject dt,
                                                              jint count, jint peer, jint tag)
{
    (void)cls;
    if (depth++ > 0)
        return;
    struct plx_thread *t = plx_thread();
    counted = t != NULL;
    if (!t)
        return;
    int send = kind == MPJ_SEND || kind == MPJ_ISEND || kind == MPJ_SENDRECV;
    int world_comm = send && world ? in_world(env, comm) : 0;
    uint64_t bytes = send && count > 0 ? (uint64_t)count * elem_bytes(env, dt) : 0;
    t->guard++;
    plx_ext_enter(t, (uint32_t)region);
    uint32_t to = peer_of(peer);
    if (world_comm && to != PLX_EXT_NO_PEER)
        plx_ext_msg_sent(t, (uint32_t)region, 0, to, tag, bytes);
    t->guard--;
}

static void collective(struct plx_thread *t, uint32_t region, int kind, uint64_t b, int root)
{
    uint64_t sent = 0, received = 0;
    switch (kind) {
    case MPJ_BCAST:
        if (root == my_rank)
            sent = b;
        else
            received = b;
        break;
    case MPJ_REDUCE:
        sent = b;
        received = root == my_rank ? b : 0;
        break;
    case MPJ_ALLREDUCE:
        sent = received = b;
        break;
    /* b: one rank's part (the bytes of each rank's send, or of each rank's receive for Scatter),
     * as the C wrappers count them (mpi_coll.c) */
    case MPJ_GATHER:
        sent = b;
        received = root == my_rank ? b * (uint64_t)world_size : 0;
        break;
    case MPJ_SCATTER:
        sent = root == my_rank ? b * (uint64_t)world_size : 0;
        received = b;
        break;
    case MPJ_ALLGATHER:
        sent = b;
        received = b * (uint64_t)world_size;
        break;
    case MPJ_ALLTOALL:
        sent = received = b * (uint64_t)world_size;
        break;
    default:
        break;
    }
    int rooted = kind == MPJ_BCAST || kind == MPJ_REDUCE || kind == MPJ_GATHER || kind == MPJ_SCATTER;
    uint32_t wroot = rooted ? peer_of(root) : PLX_EXT_NO_PEER;
    plx_ext_msg_collective(t, region, 0, wroot, sent, received);
}

/* A posted receive's request waited for: its receive is recorded now, with its real source. */
static void completed(JNIEnv *env, struct plx_thread *t, jobject request, jobject st)
{
    for (int i = 0; i < PENDING; i++) {
        if (!pending[i].request || !(*env)->IsSameObject(env, pending[i].request, request))
            continue;
        int source, tag;
        uint64_t bytes;
        if (status_of(env, st, pending[i].elem_bytes, &source, &tag, &bytes) &&
            peer_of(source) != PLX_EXT_NO_PEER) {
            t->guard++;
            plx_ext_msg_received(t, pending[i].region, 0, peer_of(source), tag, bytes);
            t->guard--;
        }
        (*env)->DeleteWeakGlobalRef(env, pending[i].request);
        pending[i].request = NULL;
        return;
    }
}

JNIEXPORT void JNICALL Java_org_parallax_agent_Hooks_mpjEnd(JNIEnv *env, jclass cls, jobject result,
                                                            jint region, jint kind, jobject self,
                                                            jobject dt, jint count, jint root)
{
    (void)cls;
    if (--depth > 0 || !counted)
        return;
    counted = 0;
    struct plx_thread *t = plx_self;
    if (!t || t->dead)
        return;
    int source, tag;
    uint64_t bytes;
    switch (kind) {
    case MPJ_RECV:
    case MPJ_SENDRECV:
        if (world && in_world(env, self) &&
            status_of(env, result, elem_bytes(env, dt), &source, &tag, &bytes) &&
            peer_of(source) != PLX_EXT_NO_PEER) {
            t->guard++;
            plx_ext_msg_received(t, (uint32_t)region, 0, peer_of(source), tag, bytes);
            t->guard--;
        }
        break;
    case MPJ_IRECV:
        if (world && result && in_world(env, self)) {
            uint32_t e = elem_bytes(env, dt);
            int i = 0;
            while (i < PENDING && pending[i].request)
                i++;
            if (i < PENDING)
                pending[i] = (struct pending){(*env)->NewWeakGlobalRef(env, result),
                                              (uint32_t)region, e};
            else if (atomic_fetch_add(&full, 1) == 0)
                plx_warn("MPJ Express: more than %d receives posted and not waited for on a "
                         "thread: the receives beyond them are not recorded as messages", PENDING);
        }
        break;
    case MPJ_WAIT:
        completed(env, t, self, result);
        break;
    case MPJ_WAITALL: {
        jsize n = self && result ? (*env)->GetArrayLength(env, (jobjectArray)self) : 0;
        for (jsize i = 0; i < n; i++) {
            jobject r = (*env)->GetObjectArrayElement(env, (jobjectArray)self, i);
            jobject st = (*env)->GetObjectArrayElement(env, (jobjectArray)result, i);
            if (r)
                completed(env, t, r, st);
            (*env)->DeleteLocalRef(env, r);
            (*env)->DeleteLocalRef(env, st);
        }
        break;
    }
    case MPJ_BARRIER:
    case MPJ_BCAST:
    case MPJ_REDUCE:
    case MPJ_ALLREDUCE:
    case MPJ_GATHER:
    case MPJ_SCATTER:
    case MPJ_ALLGATHER:
    case MPJ_ALLTOALL:
        if (world && in_world(env, self)) {
            uint64_t b = count > 0 ? (uint64_t)count * elem_bytes(env, dt) : 0;
            t->guard++;
            collective(t, (uint32_t)region, kind, b, root);
            t->guard--;
        }
        break;
    default:
        break;
    }
    t->guard++;
    plx_ext_leave(t, (uint32_t)region);
    t->guard--;
}

/* The routine was left by an exception: its region closes, nothing is recorded. */
JNIEXPORT void JNICALL Java_org_parallax_agent_Hooks_mpjAbort(JNIEnv *env, jclass cls, jint region)
{
    (void)env;
    (void)cls;
    if (--depth > 0 || !counted)
        return;
    counted = 0;
    struct plx_thread *t = plx_self;
    if (!t || t->dead)
        return;
    t->guard++;
    plx_ext_leave(t, (uint32_t)region);
    t->guard--;
}
