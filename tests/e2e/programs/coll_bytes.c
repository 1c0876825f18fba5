/* Every collective family once on 4 ranks, with ints (4 bytes), for the byte rule of
 * collectives (tests/e2e/cases/coll-bytes/collectives.expected lists what each rank sends and
 * receives): Barrier; Bcast 4 from 1; Reduce 2 to 2; Allreduce 3; Scan 1; Exscan 5; Gather 2 to
 * 0; Gather to 3 with MPI_IN_PLACE at the root; Gatherv to 0 (rank r sends r + 1, counts 1 2 3
 * 4); Scatter 3 from 3; Scatterv from 1 (counts 1 2 3 4); Allgather 2; Allgather with
 * MPI_IN_PLACE; Allgatherv (r + 1); Alltoall 1; Alltoallv (r sends j + 1 to rank j);
 * Reduce_scatter (counts 1 2 3 4); Reduce_scatter_block 2; Iallreduce 2 completed by MPI_Wait. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int r, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (n != 4) {
        fprintf(stderr, "coll_bytes runs on 4 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int a[64] = {0}, b[64] = {0};
    int counts[4] = {1, 2, 3, 4}, displs[4] = {0, 1, 3, 6};
    int mine[4] = {0}, rc[4], rd[4];
    MPI_Comm w = MPI_COMM_WORLD;
    MPI_Barrier(w);
    MPI_Bcast(a, 4, MPI_INT, 1, w);
    MPI_Reduce(a, b, 2, MPI_INT, MPI_SUM, 2, w);
    MPI_Allreduce(a, b, 3, MPI_INT, MPI_SUM, w);
    MPI_Scan(a, b, 1, MPI_INT, MPI_SUM, w);
    MPI_Exscan(a, b, 5, MPI_INT, MPI_SUM, w);
    MPI_Gather(a, 2, MPI_INT, b, 2, MPI_INT, 0, w);
    MPI_Gather(r == 3 ? MPI_IN_PLACE : a, 2, MPI_INT, b, 2, MPI_INT, 3, w);
    MPI_Gatherv(mine, r + 1, MPI_INT, b, counts, displs, MPI_INT, 0, w);
    MPI_Scatter(a, 3, MPI_INT, b, 3, MPI_INT, 3, w);
    MPI_Scatterv(a, counts, displs, MPI_INT, mine, r + 1, MPI_INT, 1, w);
    MPI_Allgather(a, 2, MPI_INT, b, 2, MPI_INT, w);
    MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b, 2, MPI_INT, w);
    MPI_Allgatherv(mine, r + 1, MPI_INT, b, counts, displs, MPI_INT, w);
    MPI_Alltoall(a, 1, MPI_INT, b, 1, MPI_INT, w);
    for (int j = 0; j < 4; j++) {
        rc[j] = r + 1;
        rd[j] = j * (r + 1);
    }
    MPI_Alltoallv(a, counts, displs, MPI_INT, b, rc, rd, MPI_INT, w);
    MPI_Reduce_scatter(a, b, counts, MPI_INT, MPI_SUM, w);
    MPI_Reduce_scatter_block(a, b, 2, MPI_INT, MPI_SUM, w);
    MPI_Request req;
    MPI_Iallreduce(a, b, 2, MPI_INT, MPI_SUM, w, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    if (r == 0)
        printf("collectives ok\n");
    MPI_Finalize();
    return 0;
}
