import mpi.Intracomm;
import mpi.MPI;

/**
 * Open MPI's Java bindings on 4 ranks, the communicator part of examples/java/mpj/CommsMpj.java
 * (tests/e2e/test_java.py compares their figures): split by parity (key: the world rank), in
 * each half its rank 0 sends SPLIT_ROUNDS messages of 8 ints (tag 3) to its rank 1 (world 0 to
 * 2, 1 to 3), then Bcast of 4 ints from its rank 1; a duplicate of MPI.COMM_WORLD, on which world
 * rank 2 sends 3 doubles (tag 5) to 0; Gatherv to 0 on MPI.COMM_WORLD, rank r contributing
 * r + 1 ints. Prints "comms ok" on rank 0.
 */
public class Comms {
    static final int SPLIT_ROUNDS = 6;

    public static void main(String[] args) throws Exception {
        MPI.Init(args);
        Intracomm world = MPI.COMM_WORLD;
        int rank = world.getRank();
        if (world.getSize() != 4)
            throw new IllegalStateException("Comms runs on 4 ranks");

        Intracomm half = world.split(rank % 2, rank);
        int[] eight = new int[8];
        for (int i = 0; i < SPLIT_ROUNDS; i++) {
            if (half.getRank() == 0)
                half.send(eight, 8, MPI.INT, 1, 3);
            else
                half.recv(eight, 8, MPI.INT, 0, 3);
        }
        int[] four = new int[4];
        half.bcast(four, 4, MPI.INT, 1);

        Intracomm dup = world.dup();
        double[] three = new double[3];
        if (rank == 2)
            dup.send(three, 3, MPI.DOUBLE, 0, 5);
        else if (rank == 0)
            dup.recv(three, 3, MPI.DOUBLE, 2, 5);

        int[] counts = {1, 2, 3, 4}, displs = {0, 1, 3, 6};
        int[] mine = new int[rank + 1], all = new int[10];
        world.gatherv(mine, rank + 1, MPI.INT, all, counts, displs, MPI.INT, 0);

        dup.free();
        half.free();
        world.barrier();
        if (rank == 0)
            System.out.println("comms ok");
        MPI.Finalize();
    }
}
