import mpi.MPI;
import mpi.Request;

/**
 * A late receiver under MPJ Express (test_waits.py): rank 0 sends to rank 1, which sleeps D
 * seconds (args[0]) in delayRecv before it posts the receive with Irecv and waits for it with
 * Request.Wait; the other ranks do nothing; all meet in a Barrier. args[1] is how rank 0 sends:
 * "ssend" (default) one int with Ssend; "isend" N ints (1 MiB, above plx-mpj's protocol switch
 * limit of 128 KiB: niodev's rendezvous protocol) with Isend, completed by Request.Wait in
 * waitSend. Rank 0's Ssend, or its Wait, waits D for rank 1's Irecv. Prints "late ok".
 */
public class MpjLate {
    static final int N = 256 * 1024;

    static void delayRecv(long ms) throws InterruptedException {
        Thread.sleep(ms);
    }

    static void waitSend(Request r) {
        r.Wait();
    }

    public static void main(String[] args) throws Exception {
        String[] rest = MPI.Init(args);
        long ms = (long) (Double.parseDouble(rest[0]) * 1000);
        boolean isend = rest.length > 1 && rest[1].equals("isend");
        int rank = MPI.COMM_WORLD.Rank();
        int[] v = new int[isend ? N : 1];
        MPI.COMM_WORLD.Barrier();
        if (rank == 0) {
            v[0] = 42;
            if (isend)
                waitSend(MPI.COMM_WORLD.Isend(v, 0, v.length, MPI.INT, 1, 3));
            else
                MPI.COMM_WORLD.Ssend(v, 0, 1, MPI.INT, 1, 3);
        } else if (rank == 1) {
            delayRecv(ms);
            Request r = MPI.COMM_WORLD.Irecv(v, 0, v.length, MPI.INT, 0, 3);
            r.Wait();
        }
        MPI.COMM_WORLD.Barrier();
        if (rank == 1 && v[0] == 42)
            System.out.println("late ok");
        MPI.Finalize();
    }
}
