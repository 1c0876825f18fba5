/* Persistent point-to-point in a ring: each rank sends 16 doubles to rank+1 and receives from
 * rank-1 through one MPI_Send_init and one MPI_Recv_init request, started N times by
 * MPI_Startall (tag 7, completed by MPI_Waitall), then the same with tag 8 N times by one
 * MPI_Start each (the receive first, completed by MPI_Wait each). Usage: persistent_ring N */
#include <mpi.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, n = argc > 1 ? atoi(argv[1]) : 5;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    double out[16] = {0}, in[16];
    for (int tag = 7; tag <= 8; tag++) {
        MPI_Request req[2];
        MPI_Recv_init(in, 16, MPI_DOUBLE, left, tag, MPI_COMM_WORLD, &req[0]);
        MPI_Send_init(out, 16, MPI_DOUBLE, right, tag, MPI_COMM_WORLD, &req[1]);
        for (int i = 0; i < n; i++) {
            out[0] = rank * 100 + i;
            if (tag == 7) {
                MPI_Startall(2, req);
                MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
            } else {
                MPI_Start(&req[0]);
                MPI_Start(&req[1]);
                MPI_Wait(&req[0], MPI_STATUS_IGNORE);
                MPI_Wait(&req[1], MPI_STATUS_IGNORE);
            }
            if (in[0] != left * 100 + i)
                MPI_Abort(MPI_COMM_WORLD, 3);
        }
        MPI_Request_free(&req[0]);
        MPI_Request_free(&req[1]);
    }
    MPI_Finalize();
    return 0;
}
