import mpi.MPI;
import mpi.Request;
import org.parallax.Profile;

/**
 * The critical path through an MPJ Express rendezvous (test_java.py), as
 * examples/critpath/rendezvous.c: in phase "work", rank 0 sends N ints (1 MiB, above plx-mpj's
 * protocol switch limit of 128 KiB: niodev's rendezvous protocol) with Isend and waits for it
 * with Request.Wait, then busy-computes FAST seconds (args[1]) in computeAfter; rank 1
 * busy-computes SLOW seconds (args[0]) in computeLate before it posts the receive with Irecv
 * and waits for it; rank 2 busy-computes FAST in computeOther. The phase ends there; then all
 * meet in a Barrier. The phase's path runs through rank 1's computeLate, the rendezvous from
 * its Irecv's post into the end of rank 0's Wait, and rank 0's computeAfter. Prints
 * "rendezvous ok".
 */
public class MpjRendezvous {
    static final int N = 256 * 1024;

    static void busy(double s) {
        long end = System.nanoTime() + (long) (s * 1e9);
        while (System.nanoTime() < end) {
        }
    }

    static void computeLate(double s) {
        busy(s);
    }

    static void computeAfter(double s) {
        busy(s);
    }

    static void computeOther(double s) {
        busy(s);
    }

    public static void main(String[] args) throws Exception {
        String[] rest = MPI.Init(args);
        double slow = Double.parseDouble(rest[0]);
        double fast = Double.parseDouble(rest[1]);
        int rank = MPI.COMM_WORLD.Rank();
        int[] v = new int[N];
        MPI.COMM_WORLD.Barrier();
        Profile.phaseBegin("work");
        if (rank == 0) {
            v[0] = 42;
            Request r = MPI.COMM_WORLD.Isend(v, 0, N, MPI.INT, 1, 0);
            r.Wait();
            computeAfter(fast);
        } else if (rank == 1) {
            computeLate(slow);
            Request r = MPI.COMM_WORLD.Irecv(v, 0, N, MPI.INT, 0, 0);
            r.Wait();
        } else {
            computeOther(fast);
        }
        Profile.phaseEnd("work");
        MPI.COMM_WORLD.Barrier();
        if (rank == 1 && v[0] == 42)
            System.out.println("rendezvous ok");
        MPI.Finalize();
    }
}
