/* MPI routines beyond the common ones, on 3 ranks, one mode an argument (tests/e2e/test_mpi.py):
 *   mprobe       matched probes: rank 1 sends rank 0 3 ints (tag 8, MPI_Mprobe + MPI_Mrecv) and
 *                5 ints (tag 9, MPI_Improbe + MPI_Imrecv + MPI_Wait); rank 2 sends rank 0 7 ints
 *                on a duplicate of MPI_COMM_WORLD (MPI_ANY_SOURCE, MPI_Mprobe + MPI_Mrecv); rank
 *                0 also probes MPI_PROC_NULL (MPI_MESSAGE_NO_PROC, received with MPI_Mrecv),
 *                and receives from it with MPI_Irecv and a persistent MPI_Recv_init + MPI_Start
 *                (each completed by MPI_Wait: no message)
 *   isendrecv    (MPI 4.0) 4 x MPI_Isendrecv of 3 ints to the next rank (tag 1), then 2 x
 *                MPI_Isendrecv_replace of 2 ints to the previous rank (tag 4), each with MPI_Wait
 *   idup, cart, creategroup, dupinfo, splittype, cartsub, graph, distgraph, adjacent
 *                a communicator C2 made by that routine from REV (MPI_COMM_WORLD's ranks
 *                reversed) is used by world ranks 0 and 2 only (0 sends 3 ints to 2); then a
 *                ring on a duplicate of REV: REV rank r sends r + 1 ints to REV rank r + 1
 * Prints "mpi_more ok" on rank 0. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static void mprobe(int rank)
{
    int x[8] = {0};
    MPI_Comm dup;
    MPI_Message m;
    MPI_Status st;
    MPI_Request r;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    if (rank == 1) {
        MPI_Send(x, 3, MPI_INT, 0, 8, MPI_COMM_WORLD);
        MPI_Send(x, 5, MPI_INT, 0, 9, MPI_COMM_WORLD);
    }
    if (rank == 2)
        MPI_Send(x, 7, MPI_INT, 0, 3, dup);
    if (rank == 0) {
        MPI_Mprobe(1, 8, MPI_COMM_WORLD, &m, &st);
        MPI_Mrecv(x, 8, MPI_INT, &m, &st);
        int flag = 0;
        while (!flag)
            MPI_Improbe(1, 9, MPI_COMM_WORLD, &flag, &m, &st);
        MPI_Imrecv(x, 8, MPI_INT, &m, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, dup, &m, &st);
        MPI_Mrecv(x, 8, MPI_INT, &m, MPI_STATUS_IGNORE);
        MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &m, &st);
        MPI_Mrecv(x, 8, MPI_INT, &m, &st);
        MPI_Irecv(x, 8, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &r);
        MPI_Wait(&r, &st);
        MPI_Recv_init(x, 8, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &r);
        MPI_Start(&r);
        MPI_Wait(&r, &st);
        MPI_Request_free(&r);
    }
    MPI_Comm_free(&dup);
}

static void isendrecv(int rank, int size)
{
#if MPI_VERSION >= 4
    int x[3] = {0}, y[3];
    MPI_Request r;
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    for (int i = 0; i < 4; i++) {
        MPI_Isendrecv(x, 3, MPI_INT, next, 1, y, 3, MPI_INT, prev, 1, MPI_COMM_WORLD, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    for (int i = 0; i < 2; i++) {
        MPI_Isendrecv_replace(x, 2, MPI_INT, prev, 4, next, 4, MPI_COMM_WORLD, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
#else
    (void)rank;
    (void)size;
#endif
}

static void ring(MPI_Comm c, int tag)
{
    int me, size, x[8] = {0};
    MPI_Comm_rank(c, &me);
    MPI_Comm_size(c, &size);
    MPI_Sendrecv(x, me + 1, MPI_INT, (me + 1) % size, tag, x + 4, 4, MPI_INT,
                 (me + size - 1) % size, tag, c, MPI_STATUS_IGNORE);
}

static int created(const char *mode, int rank, int size)
{
    int x[4] = {0};
    MPI_Comm rev, c2 = MPI_COMM_NULL, c3;
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev);
    int me = size - 1 - rank; /* rank in REV */
    if (!strcmp(mode, "idup")) {
        MPI_Request rq;
        MPI_Comm_idup(rev, &c2, &rq);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
    } else if (!strcmp(mode, "cart")) {
        int d[1] = {size}, p[1] = {1};
        MPI_Cart_create(rev, 1, d, p, 0, &c2);
    } else if (!strcmp(mode, "creategroup")) {
        MPI_Group g;
        MPI_Comm_group(rev, &g);
        MPI_Comm_create_group(rev, g, 0, &c2);
        MPI_Group_free(&g);
    } else if (!strcmp(mode, "dupinfo")) {
        MPI_Comm_dup_with_info(rev, MPI_INFO_NULL, &c2);
    } else if (!strcmp(mode, "splittype")) {
        MPI_Comm_split_type(rev, MPI_COMM_TYPE_SHARED, me, MPI_INFO_NULL, &c2);
    } else if (!strcmp(mode, "cartsub")) {
        int d[2] = {size, 1}, p[2] = {1, 1}, keep[2] = {1, 0};
        MPI_Comm cart2;
        MPI_Cart_create(rev, 2, d, p, 0, &cart2);
        MPI_Cart_sub(cart2, keep, &c2);
    } else if (!strcmp(mode, "graph")) {
        int index[3] = {1, 2, 3}, edges[3] = {1, 2, 0};
        MPI_Graph_create(rev, 3, index, edges, 0, &c2);
    } else if (!strcmp(mode, "distgraph")) {
        int src[1] = {me}, deg[1] = {1}, dst[1] = {(me + 1) % size}, w[1] = {1};
        MPI_Dist_graph_create(rev, 1, src, deg, dst, w, MPI_INFO_NULL, 0, &c2);
    } else if (!strcmp(mode, "adjacent")) {
        int src[1] = {(me + size - 1) % size}, dst[1] = {(me + 1) % size}, w[1] = {1};
        MPI_Dist_graph_create_adjacent(rev, 1, src, w, 1, dst, w, MPI_INFO_NULL, 0, &c2);
    } else {
        return 0;
    }
    /* only world 0 -> world 2 use C2 (REV ranks 2 -> 0), 3 ints */
    if (rank == 0)
        MPI_Send(x, 3, MPI_INT, 0, 5, c2);
    if (rank == 2)
        MPI_Recv(x, 4, MPI_INT, 2, 5, c2, MPI_STATUS_IGNORE);
    MPI_Comm_dup(rev, &c3);
    ring(c3, 2);
    return 1;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *mode = argc > 1 ? argv[1] : "";
    int ok = 1;
    if (!strcmp(mode, "mprobe"))
        mprobe(rank);
    else if (!strcmp(mode, "isendrecv"))
        isendrecv(rank, size);
    else
        ok = created(mode, rank, size);
    if (!ok && rank == 0)
        fprintf(stderr, "mpi_more: unknown mode '%s'\n", mode);
    else if (rank == 0)
        printf("mpi_more ok\n");
    MPI_Finalize();
    return ok ? 0 : 2;
}
