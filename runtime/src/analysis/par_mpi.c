/* libplx-par*.so: the few MPI calls `plx waits --parallel` makes, for plx to load (dlopen) under
 * mpirun: one build per MPI library, as libplx-mpi*.so. No runtime state: it is no part of
 * libplx.so and measures nothing. Every buffer it returns is malloc'ed and freed by
 * plx_par_free. */
#include <limits.h>
#include <mpi.h>
#include <stdlib.h>

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

PLX_PUBLIC void plx_par_free(void *p)
{
    free(p);
}

PLX_PUBLIC int plx_par_finalize(void)
{
    return MPI_Finalize() == MPI_SUCCESS ? 0 : -1;
}

PLX_PUBLIC void plx_par_abort(int code)
{
    MPI_Abort(MPI_COMM_WORLD, code);
}
