import mpi.Intercomm;
import mpi.Intracomm;
import mpi.MPI;

/**
 * MPJ Express on 4 ranks: messages on an intercommunicator and on intracommunicators of the
 * same members, every one with tag 1 so that only the communicator tells them apart
 * (tests/e2e/test_java.py checks every figure below; tests/e2e/programs/intercomm.c does the
 * same in C).
 *
 * <ul>
 * <li>Split by parity (key: the world rank): halves {0, 2} and {1, 3}; in each its rank 0 sends
 *     HALF_ROUNDS messages of 4 ints to its rank 1 (world 0 to 2, 1 to 3).</li>
 * <li>Create_intercomm of the halves over MPI.COMM_WORLD (leaders world 0 and 1): each even
 *     rank sends INTER_ROUNDS messages of 16 ints to the remote rank of its own local rank
 *     (world 0 to 1, 2 to 3); then each odd rank sends REPLIES messages of 8 doubles to the
 *     other remote rank (world 1 to 2, 3 to 0).</li>
 * <li>clone of the intercommunicator (a second one between the same groups): world 2 (local
 *     rank 1) sends 3 ints to remote rank 0 (world 1).</li>
 * <li>Merge with the odd half high: an intracommunicator [0 2 1 3]; its rank 0 (world 0) sends
 *     MERGED messages of 1 int to its rank 3 (world 3).</li>
 * </ul>
 * Prints "intercomm ok" on rank 0.
 */
public class IntercommMpj {
    static final int HALF_ROUNDS = 4, INTER_ROUNDS = 5, REPLIES = 3, MERGED = 2;

    public static void main(String[] args) throws Exception {
        MPI.Init(args);
        Intracomm world = MPI.COMM_WORLD;
        int rank = world.Rank(), size = world.Size();
        if (size != 4)
            throw new IllegalStateException("IntercommMpj runs on 4 ranks");
        boolean even = rank % 2 == 0;

        Intracomm half = world.Split(rank % 2, rank);
        int hrank = half.Rank();
        int[] four = new int[4];
        for (int i = 0; i < HALF_ROUNDS; i++) {
            if (hrank == 0)
                half.Send(four, 0, 4, MPI.INT, 1, 1);
            else
                half.Recv(four, 0, 4, MPI.INT, 0, 1);
        }

        Intercomm inter = world.Create_intercomm(half, 0, even ? 1 : 0, 99);
        int[] sixteen = new int[16];
        for (int i = 0; i < INTER_ROUNDS; i++) {
            if (even)
                inter.Send(sixteen, 0, 16, MPI.INT, hrank, 1);
            else
                inter.Recv(sixteen, 0, 16, MPI.INT, hrank, 1);
        }
        double[] eight = new double[8];
        for (int i = 0; i < REPLIES; i++) {
            if (!even)
                inter.Send(eight, 0, 8, MPI.DOUBLE, 1 - hrank, 1);
            else
                inter.Recv(eight, 0, 8, MPI.DOUBLE, 1 - hrank, 1);
        }

        Intercomm again = (Intercomm) inter.clone();
        int[] three = new int[3];
        if (rank == 2)
            again.Send(three, 0, 3, MPI.INT, 0, 1);
        else if (rank == 1)
            again.Recv(three, 0, 3, MPI.INT, 1, 1);

        Intracomm merged = inter.Merge(!even);
        int mrank = merged.Rank();
        int[] one = new int[1];
        for (int i = 0; i < MERGED; i++) {
            if (mrank == 0)
                merged.Send(one, 0, 1, MPI.INT, 3, 1);
            else if (mrank == 3)
                merged.Recv(one, 0, 1, MPI.INT, 0, 1);
        }

        world.Barrier();
        if (rank == 0)
            System.out.println("intercomm ok");
        MPI.Finalize();
    }
}
