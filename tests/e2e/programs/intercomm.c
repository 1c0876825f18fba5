/* Messages on an intercommunicator and on intracommunicators of the same members (4 ranks;
 * tests/e2e/test_mpi.py checks every figure below). Every message has tag 1, so only the
 * communicator tells them apart.
 *
 *  - MPI_Comm_split by parity: halves {0, 2} and {1, 3}, each in world rank order; in each half
 *    its rank 0 sends HALF_ROUNDS messages of 4 ints to its rank 1 (world 0 to 2, 1 to 3).
 *  - MPI_Intercomm_create joins the halves (leaders world 0 and 1 over MPI_COMM_WORLD): each even
 *    rank sends INTER_ROUNDS messages of 16 ints to the remote rank of its own local rank (world
 *    0 to 1, 2 to 3); then each odd rank sends REPLIES messages of 8 doubles to the other remote
 *    rank (world 1 to 2, 3 to 0).
 *  - MPI_Comm_dup of the intercommunicator (a second one between the same groups): world 2
 *    (local rank 1) sends 3 ints to remote rank 0 (world 1).
 *  - MPI_Intercomm_merge with the odd half high: an intracommunicator [0 2 1 3]; its rank 0
 *    (world 0) sends MERGED messages of 1 int to its rank 3 (world 3).
 * Prints "intercomm ok" on world rank 0. */
#include <mpi.h>
#include <stdio.h>

enum { HALF_ROUNDS = 4, INTER_ROUNDS = 5, REPLIES = 3, MERGED = 2 };

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 4) {
        if (rank == 0)
            fprintf(stderr, "intercomm: runs on 4 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int even = rank % 2 == 0;

    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    int hrank;
    MPI_Comm_rank(half, &hrank);
    int four[4] = {0};
    for (int i = 0; i < HALF_ROUNDS; i++) {
        if (hrank == 0)
            MPI_Send(four, 4, MPI_INT, 1, 1, half);
        else
            MPI_Recv(four, 4, MPI_INT, 0, 1, half, MPI_STATUS_IGNORE);
    }

    MPI_Comm inter;
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, even ? 1 : 0, 99, &inter);
    int sixteen[16] = {0};
    for (int i = 0; i < INTER_ROUNDS; i++) {
        if (even)
            MPI_Send(sixteen, 16, MPI_INT, hrank, 1, inter);
        else
            MPI_Recv(sixteen, 16, MPI_INT, hrank, 1, inter, MPI_STATUS_IGNORE);
    }
    double eight[8] = {0};
    for (int i = 0; i < REPLIES; i++) {
        if (!even)
            MPI_Send(eight, 8, MPI_DOUBLE, 1 - hrank, 1, inter);
        else
            MPI_Recv(eight, 8, MPI_DOUBLE, MPI_ANY_SOURCE, 1, inter, MPI_STATUS_IGNORE);
    }

    MPI_Comm again;
    MPI_Comm_dup(inter, &again);
    int three[3] = {0};
    if (rank == 2)
        MPI_Send(three, 3, MPI_INT, 0, 1, again);
    else if (rank == 1)
        MPI_Recv(three, 3, MPI_INT, 1, 1, again, MPI_STATUS_IGNORE);

    MPI_Comm merged;
    MPI_Intercomm_merge(inter, !even, &merged);
    int mrank, one = 0;
    MPI_Comm_rank(merged, &mrank);
    for (int i = 0; i < MERGED; i++) {
        if (mrank == 0)
            MPI_Send(&one, 1, MPI_INT, 3, 1, merged);
        else if (mrank == 3)
            MPI_Recv(&one, 1, MPI_INT, 0, 1, merged, MPI_STATUS_IGNORE);
    }

    MPI_Comm_free(&merged);
    MPI_Comm_free(&again);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("intercomm ok\n");
    MPI_Finalize();
    return 0;
}
