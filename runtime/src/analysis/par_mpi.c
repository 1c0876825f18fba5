/* libplx-par*.so: the few MPI calls `plx waits --parallel` makes, for plx to load (dlopen) under
 * mpirun: one build per MPI library, as libplx-mpi*.so. No runtime state: it is no part of
 * libplx.so and measures nothing. Every buffer it returns is malloc'ed and freed by
 * plx_par_free. */
#include <limits.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#define PLX_PUBLIC __attribute__((visibility("default")))

/* MPI_Init unless already done; this process's rank and the job's size. 0 on success. */
PLX_PUBLIC int plx_par_init(int *rank, int *size)
{
    int done = 0;
    MPI_Initialized(&done);
    if (!done && MPI_Init(NULL, NULL) != MPI_SUCCESS)
        return -1;
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
    return 0;
}

/* Every rank's `len` bytes, in rank order, into one malloc'ed buffer `*out`; `lens` (one entry
 * per rank) gets each rank's length. 0 on success; -2 when the total exceeds MPI's int counts. */
PLX_PUBLIC int plx_par_allgather(const void *buf, long long len, void **out, long long *lens)
{
    int size = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int n = len > INT_MAX ? -1 : (int)len;
    int *counts = malloc(2 * (size_t)size * sizeof(int));
    if (!counts)
        return -3;
    int *displs = counts + size;
    MPI_Allgather(&n, 1, MPI_INT, counts, 1, MPI_INT, MPI_COMM_WORLD);
    long long total = 0;
    for (int i = 0; i < size; i++) {
        if (counts[i] < 0)
            total = (long long)INT_MAX + 1;
        displs[i] = total > INT_MAX ? 0 : (int)total;
        total += counts[i] < 0 ? 0 : counts[i];
        lens[i] = counts[i];
    }
    if (total > INT_MAX) {
        free(counts);
        return -2;
    }
    char *o = malloc(total > 0 ? (size_t)total : 1);
    if (!o) {
        free(counts);
        return -3;
    }
    int rc = MPI_Allgatherv(buf, n, MPI_BYTE, o, counts, displs, MPI_BYTE, MPI_COMM_WORLD);
    free(counts);
    if (rc != MPI_SUCCESS) {
        free(o);
        return -1;
    }
    *out = o;
    return 0;
}

/* Sends not yet complete: their requests and buffers. */
static MPI_Request *pending;
static void **pending_buf;
static int n_pending, cap_pending;

#define PLX_PAR_TAG 2701

/* Frees the buffers of the sends that completed. */
static void reap(void)
{
    int j = 0;
    for (int i = 0; i < n_pending; i++) {
        int done = 0;
        MPI_Test(&pending[i], &done, MPI_STATUS_IGNORE);
        if (done) {
            free(pending_buf[i]);
        } else {
            pending[j] = pending[i];
            pending_buf[j] = pending_buf[i];
            j++;
        }
    }
    n_pending = j;
}

/* Sends a copy of `len` bytes to rank `to` without waiting for its receive (MPI_Isend; the
 * copy is freed once sent). 0 on success; -2 over MPI's int counts. */
PLX_PUBLIC int plx_par_send(int to, const void *buf, long long len)
{
    if (len > INT_MAX)
        return -2;
    reap();
    if (n_pending == cap_pending) {
        int cap = cap_pending ? 2 * cap_pending : 64;
        MPI_Request *r = realloc(pending, (size_t)cap * sizeof *r);
        if (!r)
            return -3;
        pending = r;
        void **b = realloc(pending_buf, (size_t)cap * sizeof *b);
        if (!b)
            return -3;
        pending_buf = b;
        cap_pending = cap;
    }
    void *copy = malloc(len > 0 ? (size_t)len : 1);
    if (!copy)
        return -3;
    memcpy(copy, buf, (size_t)len);
    if (MPI_Isend(copy, (int)len, MPI_BYTE, to, PLX_PAR_TAG, MPI_COMM_WORLD,
                  &pending[n_pending]) != MPI_SUCCESS) {
        free(copy);
        return -1;
    }
    pending_buf[n_pending++] = copy;
    return 0;
}

/* The next bytes rank `from` sent (waits for them), into a malloc'ed `*out` of `*len` bytes.
 * 0 on success. */
PLX_PUBLIC int plx_par_recv(int from, void **out, long long *len)
{
    MPI_Status st;
    if (MPI_Probe(from, PLX_PAR_TAG, MPI_COMM_WORLD, &st) != MPI_SUCCESS)
        return -1;
    int n = 0;
    MPI_Get_count(&st, MPI_BYTE, &n);
    char *o = malloc(n > 0 ? (size_t)n : 1);
    if (!o)
        return -3;
    if (MPI_Recv(o, n, MPI_BYTE, from, PLX_PAR_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE) !=
        MPI_SUCCESS) {
        free(o);
        return -1;
    }
    *out = o;
    *len = n;
    return 0;
}

PLX_PUBLIC void plx_par_free(void *p)
{
    free(p);
}

PLX_PUBLIC int plx_par_finalize(void)
{
    /* every send was received (the analysis reads each block's items to their end) */
    for (int i = 0; i < n_pending; i++) {
        MPI_Wait(&pending[i], MPI_STATUS_IGNORE);
        free(pending_buf[i]);
    }
    n_pending = 0;
    return MPI_Finalize() == MPI_SUCCESS ? 0 : -1;
}

PLX_PUBLIC void plx_par_abort(int code)
{
    MPI_Abort(MPI_COMM_WORLD, code);
}
