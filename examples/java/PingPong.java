import mpi.MPI;

/**
 * Ping-pong between ranks 0 and 1 on Open MPI's Java bindings (jmpi's latency and bandwidth
 * benchmark; `plx comm --fit` recovers both from the trace). For each size, ITERATIONS round
 * trips: rank 0 sends (tag 1) and receives (tag 2), rank 1 the reverse; other ranks idle.
 *
 * Usage: java -cp mpi.jar:. PingPong [ITERATIONS [SIZE...]]   defaults: 100 iterations, 8 and 1 MiB
 */
public class PingPong {
    static void exchange(byte[] buf, int size, int iterations, int rank) throws Exception {
        for (int i = 0; i < iterations; i++) {
            if (rank == 0) {
                MPI.COMM_WORLD.send(buf, size, MPI.BYTE, 1, 1);
                MPI.COMM_WORLD.recv(buf, size, MPI.BYTE, 1, 2);
            } else if (rank == 1) {
                MPI.COMM_WORLD.recv(buf, size, MPI.BYTE, 0, 1);
                MPI.COMM_WORLD.send(buf, size, MPI.BYTE, 0, 2);
            }
        }
    }

    public static void main(String[] args) throws Exception {
        MPI.Init(args);
        int rank = MPI.COMM_WORLD.getRank();
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
            MPI.COMM_WORLD.barrier();
            long t0 = System.nanoTime();
            exchange(buf, s, iterations, rank);
            double us = (System.nanoTime() - t0) / 1e3 / iterations;
            if (rank == 0)
                System.out.printf("%d bytes: %.2f us per round trip%n", s, us);
        }
        MPI.Finalize();
    }
}
