import mpi.MPI;
import mpi.Request;

/**
 * MPJ Express's nonblocking routines and collectives (test_java.py): ROUNDS times, every rank
 * posts Irecv from its left neighbour (tag 7) and Isend of COUNT ints to its right neighbour,
 * then Waits for the receive and the send; then ROUNDS times Request.Waitall of the same pair;
 * then one Bcast of COUNT ints from rank 0 and one Reduce of 1 int to rank 0; then one Gather of
 * 2 ints per rank to rank 1, one Scatter of 3 ints per rank from rank 2, one Allgather of 4 ints
 * per rank and one Alltoall of 5 ints per rank pair. Prints "ring ok".
 */
public class MpjRing {
    static final int ROUNDS = 5, COUNT = 16;

    public static void main(String[] args) throws Exception {
        MPI.Init(args);
        int rank = MPI.COMM_WORLD.Rank(), size = MPI.COMM_WORLD.Size();
        int right = (rank + 1) % size, left = (rank + size - 1) % size;
        int[] out = new int[COUNT], in = new int[COUNT];
        for (int r = 0; r < 2 * ROUNDS; r++) {
            Request recv = MPI.COMM_WORLD.Irecv(in, 0, COUNT, MPI.INT, left, 7);
            Request send = MPI.COMM_WORLD.Isend(out, 0, COUNT, MPI.INT, right, 7);
            if (r < ROUNDS) {
                recv.Wait();
                send.Wait();
            } else {
                Request.Waitall(new Request[] {recv, send});
            }
        }
        MPI.COMM_WORLD.Bcast(out, 0, COUNT, MPI.INT, 0);
        int[] one = {rank}, sum = new int[1];
        MPI.COMM_WORLD.Reduce(one, 0, sum, 0, 1, MPI.INT, MPI.SUM, 0);
        int[] two = {rank, rank}, gathered = new int[2 * size];
        MPI.COMM_WORLD.Gather(two, 0, 2, MPI.INT, gathered, 0, 2, MPI.INT, 1);
        int[] spread = new int[3 * size], three = new int[3];
        MPI.COMM_WORLD.Scatter(spread, 0, 3, MPI.INT, three, 0, 3, MPI.INT, 2);
        int[] four = new int[4], all = new int[4 * size];
        MPI.COMM_WORLD.Allgather(four, 0, 4, MPI.INT, all, 0, 4, MPI.INT);
        int[] five = new int[5 * size], fives = new int[5 * size];
        MPI.COMM_WORLD.Alltoall(five, 0, 5, MPI.INT, fives, 0, 5, MPI.INT);
        if (rank == 0 && sum[0] == size * (size - 1) / 2)
            System.out.println("ring ok");
        MPI.Finalize();
    }
}
