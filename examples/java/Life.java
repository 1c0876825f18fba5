import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CyclicBarrier;

import mpi.MPI;
import mpi.MPIException;

/**
 * Conway's Game of Life on Open MPI's Java bindings (package mpi): the grid's rows are split
 * among the ranks, each rank's rows among its worker threads ("worker-0", ...). Every
 * generation the main thread exchanges one boundary row with each neighbouring rank
 * (MPI_Sendrecv of COLS ints; ranks 0 and N-1 have one neighbour), then the workers compute
 * their rows. At the end the live cells are summed with one MPI_Allreduce.
 *
 * Usage: java -cp mpi.jar:. Life [GENERATIONS [ROWS_PER_RANK [COLS [WORKERS]]]]
 * Calls per rank: exchange() GENERATIONS times on main, step(int, int) GENERATIONS times on each
 * worker; messages: GENERATIONS per direction per neighbouring pair.
 */
public class Life {
    final int rank, size, rows, cols, workers;
    int[][] cur, next;

    Life(int rank, int size, int rows, int cols, int workers) {
        this.rank = rank;
        this.size = size;
        this.rows = rows;
        this.cols = cols;
        this.workers = workers;
        cur = new int[rows + 2][cols]; /* rows 0 and rows+1: the neighbours' boundary rows */
        next = new int[rows + 2][cols];
        for (int r = 1; r <= rows; r++)
            for (int c = 0; c < cols; c++)
                cur[r][c] = ((r + rank * rows) * 7 + c * 13) % 5 == 0 ? 1 : 0;
    }

    void exchange() throws MPIException {
        if (rank > 0)
            MPI.COMM_WORLD.sendRecv(cur[1], cols, MPI.INT, rank - 1, 1, cur[0], cols, MPI.INT, rank - 1, 2);
        if (rank < size - 1)
            MPI.COMM_WORLD.sendRecv(cur[rows], cols, MPI.INT, rank + 1, 2, cur[rows + 1], cols, MPI.INT,
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

    /** Computes rows [from, to) of the next generation. */
    void step(int from, int to) {
        for (int r = from; r < to; r++)
            for (int c = 0; c < cols; c++) {
                int n = neighbours(r, c);
                next[r][c] = n == 3 || (n == 2 && cur[r][c] == 1) ? 1 : 0;
            }
    }

    void swap() {
        int[][] t = cur;
        cur = next;
        next = t;
    }

    int live() {
        int n = 0;
        for (int r = 1; r <= rows; r++)
            for (int c = 0; c < cols; c++)
                n += cur[r][c];
        return n;
    }

    public static void main(String[] args) throws Exception {
        MPI.Init(args);
        int gens = args.length > 0 ? Integer.parseInt(args[0]) : 20;
        int rows = args.length > 1 ? Integer.parseInt(args[1]) : 64;
        int cols = args.length > 2 ? Integer.parseInt(args[2]) : 64;
        int workers = args.length > 3 ? Integer.parseInt(args[3]) : 2;
        int rank = MPI.COMM_WORLD.getRank(), size = MPI.COMM_WORLD.getSize();
        Life life = new Life(rank, size, rows, cols, workers);
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
                } catch (InterruptedException | BrokenBarrierException e) {
                    throw new RuntimeException(e);
                }
            }, "worker-" + w);
            pool[w].start();
        }
        for (int g = 0; g < gens; g++) {
            life.exchange();
            start.await();
            done.await();
            life.swap();
        }
        for (Thread t : pool)
            t.join();
        int[] live = {life.live()};
        MPI.COMM_WORLD.allReduce(live, 1, MPI.INT, MPI.SUM);
        if (rank == 0)
            System.out.println("live cells after " + gens + " generations: " + live[0]);
        MPI.Finalize();
    }
}
