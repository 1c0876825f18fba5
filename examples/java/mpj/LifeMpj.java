import java.util.concurrent.CyclicBarrier;

import mpi.MPI;

/**
 * examples/java/Life.java on MPJ Express (Debian's libmpj-java, pure Java): the same grid, rows,
 * workers and exchanges, with MPJ's API (Sendrecv, Allreduce with offsets). Started by plx-mpj:
 *
 *   plx-mpj -np 4 -o life-mpj -- java -cp /usr/share/java/mpj.jar:classes LifeMpj 20 64 64 2
 */
public class LifeMpj {
    final int rank, size, rows, cols;
    int[][] cur, next;

    LifeMpj(int rank, int size, int rows, int cols) {
        this.rank = rank;
        this.size = size;
        this.rows = rows;
        this.cols = cols;
        cur = new int[rows + 2][cols];
        next = new int[rows + 2][cols];
        for (int r = 1; r <= rows; r++)
            for (int c = 0; c < cols; c++)
                cur[r][c] = ((r + rank * rows) * 7 + c * 13) % 5 == 0 ? 1 : 0;
    }

    void exchange() {
        if (rank > 0)
            MPI.COMM_WORLD.Sendrecv(cur[1], 0, cols, MPI.INT, rank - 1, 1, cur[0], 0, cols, MPI.INT, rank - 1, 2);
        if (rank < size - 1)
            MPI.COMM_WORLD.Sendrecv(cur[rows], 0, cols, MPI.INT, rank + 1, 2, cur[rows + 1], 0, cols, MPI.INT,
                                    rank + 1, 1);
    }

    int neighbours(int r, int c) {
        int n = 0;
        for (int dr = -1; dr <= 1; dr++)
            for (int dc = -1; dc <= 1; dc++) {
                int cc = c + dc;
                if ((dr != 0 || dc != 0) && cc >= 0 && cc < cols)
                    n += cur[r + dr][cc];
            }
        return n;
    }

    void step(int from, int to) {
        for (int r = from; r < to; r++)
            for (int c = 0; c < cols; c++) {
                int n = neighbours(r, c);
                next[r][c] = n == 3 || (n == 2 && cur[r][c] == 1) ? 1 : 0;
            }
    }

    public static void main(String[] args) throws Exception {
        args = MPI.Init(args);
        int gens = args.length > 0 ? Integer.parseInt(args[0]) : 20;
        int rows = args.length > 1 ? Integer.parseInt(args[1]) : 64;
        int cols = args.length > 2 ? Integer.parseInt(args[2]) : 64;
        int workers = args.length > 3 ? Integer.parseInt(args[3]) : 2;
        int rank = MPI.COMM_WORLD.Rank(), size = MPI.COMM_WORLD.Size();
        LifeMpj life = new LifeMpj(rank, size, rows, cols);
        CyclicBarrier start = new CyclicBarrier(workers + 1), done = new CyclicBarrier(workers + 1);
        Thread[] pool = new Thread[workers];
        for (int w = 0; w < workers; w++) {
            int from = 1 + w * rows / workers, to = 1 + (w + 1) * rows / workers;
            pool[w] = new Thread(() -> {
                try {
                    for (int g = 0; g < gens; g++) {
                        start.await();
                        life.step(from, to);
                        done.await();
                    }
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            }, "worker-" + w);
            pool[w].start();
        }
        for (int g = 0; g < gens; g++) {
            life.exchange();
            start.await();
            done.await();
            int[][] t = life.cur;
            life.cur = life.next;
            life.next = t;
        }
        for (Thread t : pool)
            t.join();
        int live = 0;
        for (int r = 1; r <= rows; r++)
            for (int c = 0; c < cols; c++)
                live += life.cur[r][c];
        int[] in = {live}, out = new int[1];
        MPI.COMM_WORLD.Allreduce(in, 0, out, 0, 1, MPI.INT, MPI.SUM);
        if (rank == 0)
            System.out.println("live cells after " + gens + " generations: " + out[0]);
        MPI.Finalize();
    }
}
