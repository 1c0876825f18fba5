/** A path through a Java thread's creation (plx critical-path, tests/e2e/test_java.py): main
 * calls startWorker, which starts thread "worker" (Thread.start); the worker sleeps D seconds
 * (args[0]) in longWork; main joins it in joinWorker. The longest path runs from main's
 * Thread.start into the worker's run and longWork, and back to main at the join. */
public class JFork {
    static long d;

    static void longWork() throws InterruptedException {
        Thread.sleep(d);
    }

    static Thread startWorker() {
        Thread w = new Thread(() -> {
            try {
                longWork();
            } catch (InterruptedException e) {
                throw new RuntimeException(e);
            }
        }, "worker");
        w.start();
        return w;
    }

    static void joinWorker(Thread w) throws InterruptedException {
        w.join();
    }

    public static void main(String[] args) throws Exception {
        d = (long) (Double.parseDouble(args[0]) * 1000);
        Thread w = startWorker();
        joinWorker(w);
        System.out.println("fork ok");
    }
}
