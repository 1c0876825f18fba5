/* MPI on 4 ranks with communication known in advance (world ranks, messages sent):
 *   wildcard receives   r -> 0, 5 each from ranks 1..3 (rank 0 uses ANY_SOURCE/ANY_TAG)
 *   persistent requests 0 <-> 1, 7 each way (Send_init/Recv_init, Startall, Waitall)
 *   split communicator  0 -> 2 and 1 -> 3, 3 each (comm ranks 0 -> 1 of the parity halves)
 *   Isend + Waitany     2 -> 3, 4 (Irecv completed by Waitany / Testsome)
 *   threads             3 -> 2, 12 (two threads of rank 3, 6 each; MPI_THREAD_MULTIPLE)
 *   Sendrecv ring       r -> r+1, 1 each
 * Totals: 0->1 8, 1->0 12, 1->2 1, 2->0 5, 2->3 5, 3->0 6, 0->2 3, 1->3 3, 3->2 12.
 * Collectives per rank: Barrier 3, Bcast 3, Allreduce 4, Gather 1, Alltoall 1. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>

static int rank;

static void wildcard(void)
{
    int buf[4] = {0};
    if (rank == 0) {
        int from[4] = {0};
        for (int i = 0; i < 15; i++) {
            MPI_Status st;
            MPI_Recv(buf, 4, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            from[st.MPI_SOURCE]++;
        }
        if (from[1] != 5 || from[2] != 5 || from[3] != 5)
            MPI_Abort(MPI_COMM_WORLD, 3);
    } else {
        for (int i = 0; i < 5; i++)
            MPI_Send(buf, 4, MPI_INT, 0, rank, MPI_COMM_WORLD);
    }
}

static void persistent(void)
{
    if (rank > 1)
        return;
    double out[8] = {0}, in[8];
    int other = 1 - rank;
    MPI_Request req[2];
    MPI_Send_init(out, 8, MPI_DOUBLE, other, 9, MPI_COMM_WORLD, &req[0]);
    MPI_Recv_init(in, 8, MPI_DOUBLE, other, 9, MPI_COMM_WORLD, &req[1]);
    for (int i = 0; i < 7; i++) {
        MPI_Startall(2, req);
        MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
    }
    MPI_Request_free(&req[0]);
    MPI_Request_free(&req[1]);
}

static void split(void)
{
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    int r, v = 0;
    MPI_Comm_rank(half, &r);
    for (int i = 0; i < 3; i++) {
        if (r == 0)
            MPI_Send(&v, 1, MPI_INT, 1, 4, half);
        else
            MPI_Recv(&v, 1, MPI_INT, 0, 4, half, MPI_STATUS_IGNORE);
    }
    MPI_Comm_free(&half);
}

static void any_some(void)
{
    long v[4] = {0};
    MPI_Request req[4];
    if (rank == 2) {
        for (int i = 0; i < 4; i++)
            MPI_Isend(&v[i], 1, MPI_LONG, 3, 20 + i, MPI_COMM_WORLD, &req[i]);
        MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
    } else if (rank == 3) {
        for (int i = 0; i < 4; i++)
            MPI_Irecv(&v[i], 1, MPI_LONG, 2, 20 + i, MPI_COMM_WORLD, &req[i]);
        int index;
        MPI_Waitany(4, req, &index, MPI_STATUS_IGNORE);
        int done = 1, out, idx[4];
        while (done < 4) {
            MPI_Testsome(4, req, &out, idx, MPI_STATUSES_IGNORE);
            if (out != MPI_UNDEFINED)
                done += out;
        }
    }
}

static void *sender(void *arg)
{
    int tag = (int)(long)arg, v = 0;
    for (int i = 0; i < 6; i++)
        MPI_Send(&v, 1, MPI_INT, 2, 30 + tag, MPI_COMM_WORLD);
    return NULL;
}

static void threads(int provided)
{
    int v;
    if (rank == 3) {
        pthread_t th[2];
        if (provided == MPI_THREAD_MULTIPLE) {
            for (long k = 0; k < 2; k++)
                pthread_create(&th[k], NULL, sender, (void *)k);
            for (int k = 0; k < 2; k++)
                pthread_join(th[k], NULL);
        } else {
            sender((void *)0);
            sender((void *)1);
        }
    } else if (rank == 2) {
        for (int i = 0; i < 12; i++)
            MPI_Recv(&v, 1, MPI_INT, 3, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
}

static void ring(int n)
{
    int out = rank, in;
    MPI_Sendrecv(&out, 1, MPI_INT, (rank + 1) % n, 40, &in, 1, MPI_INT, (rank + n - 1) % n, 40,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

static void collectives(int n)
{
    double x = 1, y[4], all[16];
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < 3; i++)
        MPI_Bcast(&x, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    for (int i = 0; i < 4; i++)
        MPI_Allreduce(&x, &y[0], 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Gather(&x, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    double s[4] = {1, 2, 3, 4};
    MPI_Alltoall(s, 1, MPI_DOUBLE, y, 1, MPI_DOUBLE, MPI_COMM_WORLD);
    (void)n;
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    int provided, n;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (n != 4) {
        if (rank == 0)
            fprintf(stderr, "t_mpi: needs 4 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    wildcard();
    MPI_Barrier(MPI_COMM_WORLD); /* no later message may meet the wildcard receives */
    persistent();
    split();
    any_some();
    threads(provided);
    ring(n);
    collectives(n);
    MPI_Finalize();
    return 0;
}
