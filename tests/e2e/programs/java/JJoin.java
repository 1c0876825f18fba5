/** Java waits whose notifier is not a rewritten notify call site (plx waits,
 * tests/e2e/test_waits.py), D seconds each (args[0]):
 * 1. main joins thread "worker" (Thread.join in joinWorker), which sleeps D in slowWork: the JVM
 *    wakes the joiner as the thread ends (join_wait, the cause the worker);
 * 2. main waits in awaitFirst (Object.wait) until thread "first" notifies it D later from
 *    signalFirst, a rewritten call site (condition_wait, the cause "first");
 * 3. main waits in awaitSecond on the same object until thread "second" notifies it D later
 *    through Quiet.wake, a class the filter excludes (not rewritten): its notify is not seen,
 *    and the wait must not name "first", whose notify came before it began.
 * Main joins only the worker: the JVM waits for "first" and "second" as it exits. */
public class JJoin {
    static final Object cond = new Object();
    static int round;
    static long d;

    static void nap(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            throw new RuntimeException(e);
        }
    }

    static void slowWork() {
        nap(d);
    }

    static void joinWorker(Thread worker) throws InterruptedException {
        worker.join();
    }

    static void signalFirst() {
        nap(d);
        synchronized (cond) {
            round = 1;
            cond.notifyAll();
        }
    }

    /** Excluded by the test's filter: its notify call site is not rewritten. */
    static class Quiet {
        static void wake() {
            synchronized (cond) {
                round = 2;
                cond.notifyAll();
            }
        }
    }

    static void signalSecond() {
        nap(d);
        Quiet.wake();
    }

    static void awaitRound(int r) throws InterruptedException {
        synchronized (cond) {
            while (round < r)
                cond.wait();
        }
    }

    static void awaitFirst() throws InterruptedException {
        awaitRound(1);
    }

    static void awaitSecond() throws InterruptedException {
        awaitRound(2);
    }

    public static void main(String[] args) throws Exception {
        d = (long) (Double.parseDouble(args[0]) * 1000);
        Thread worker = new Thread(JJoin::slowWork, "worker");
        worker.start();
        joinWorker(worker);
        Thread first = new Thread(JJoin::signalFirst, "first");
        first.start();
        awaitFirst();
        Thread second = new Thread(JJoin::signalSecond, "second");
        second.start();
        awaitSecond();
        System.out.println("done");
    }
}
