import mpi.MPI;

/**
 * examples/java/PingPong.java on MPJ Express (Debian's libmpj-java): the same round trips between
 * ranks 0 and 1 (rank 0 sends with tag 1 and receives with tag 2, rank 1 the reverse) with MPJ's
 * API. Started by plx-mpj:
 *
 *   plx-mpj -np 2 -o pp-mpj --trace -- java -cp /usr/share/java/mpj.jar:classes PingPongMpj 50 8 1024
 */
public class PingPongMpj {
    static void exchange(byte[] buf, int size, int iterations, int rank) {
        for (int i = 0; i < iterations; i++) {
            if (rank == 0) {
                MPI.COMM_WORLD.Send(buf, 0, size, MPI.BYTE, 1, 1);
                MPI.COMM_WORLD.Recv(buf, 0, size, MPI.BYTE, 1, 2);
            } else if (rank == 1) {
                MPI.COMM_WORLD.Recv(buf, 0, size, MPI.BYTE, 0, 1);
                MPI.COMM_WORLD.Send(buf, 0, size, MPI.BYTE, 0, 2);
            }
        }
    }

    public static void main(String[] args) throws Exception {
        args = MPI.Init(args);
        int rank = MPI.COMM_WORLD.Rank();
        int iterations = args.length > 0 ? Integer.parseInt(args[0]) : 100;
        int[] sizes = {8, 1 << 20};
        if (args.length > 1) {
            sizes = new int[args.length - 1];
            for (int i = 1; i < args.length; i++)
                sizes[i - 1] = Integer.parseInt(args[i]);
        }
        int max = 1;
        for (int s : sizes)
            max = Math.max(max, s);
        byte[] buf = new byte[max];
        for (int s : sizes) {
            MPI.COMM_WORLD.Barrier();
            long t0 = System.nanoTime();
            exchange(buf, s, iterations, rank);
            double us = (System.nanoTime() - t0) / 1e3 / iterations;
            if (rank == 0)
                System.out.printf("%d bytes: %.2f us per round trip%n", s, us);
        }
        MPI.Finalize();
    }
}
