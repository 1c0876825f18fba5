import mpi.MPI;
import mpi.Request;

/**
 * A late receiver under MPJ Express (test_waits.py): rank 0 sends one int with Ssend to rank 1,
 * which sleeps D seconds (args[0]) in delayRecv before it posts the receive with Irecv and waits
 * for it with Request.Wait; the other ranks do nothing; all meet in a Barrier. Rank 0's Ssend
 * waits D for rank 1's Irecv. Prints "late ok".
 */
public class MpjLate {
    static void delayRecv(long ms) throws InterruptedException {
        Thread.sleep(ms);
    }

    public static void main(String[] args) throws Exception {
        String[] rest = MPI.Init(args);
        long ms = (long) (Double.parseDouble(rest[0]) * 1000);
        int rank = MPI.COMM_WORLD.Rank();
        int[] v = {42};
        MPI.COMM_WORLD.Barrier();
        if (rank == 0) {
            MPI.COMM_WORLD.Ssend(v, 0, 1, MPI.INT, 1, 3);
        } else if (rank == 1) {
            delayRecv(ms);
            Request r = MPI.COMM_WORLD.Irecv(v, 0, 1, MPI.INT, 0, 3);
            r.Wait();
        }
        MPI.COMM_WORLD.Barrier();
        if (rank == 1 && v[0] == 42)
            System.out.println("late ok");
        MPI.Finalize();
    }
}
