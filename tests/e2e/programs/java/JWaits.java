import java.util.concurrent.CountDownLatch;

/** Java monitor waits of known size (plx waits, tests/e2e/test_waits.py): thread "holder"
 * holds a monitor for D seconds (args[0]) in holdLock while main blocks entering it in
 * takeLock; then main waits in consume (Object.wait) until thread "producer" notifies it D
 * seconds later from produce. */
public class JWaits {
    static final Object lock = new Object();
    static final Object cond = new Object();
    static boolean ready;
    static long d;

    static void nap(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            throw new RuntimeException(e);
        }
    }

    static void holdLock(CountDownLatch held) {
        synchronized (lock) {
            held.countDown();
            nap(d);
        }
    }

    static void takeLock() {
        synchronized (lock) {
            ready = false;
        }
    }

    static void produce() {
        nap(d);
        synchronized (cond) {
            ready = true;
            cond.notifyAll();
        }
    }

    static void consume() throws InterruptedException {
        synchronized (cond) {
            while (!ready)
                cond.wait();
        }
    }

    public static void main(String[] args) throws Exception {
        d = (long) (Double.parseDouble(args[0]) * 1000);
        CountDownLatch held = new CountDownLatch(1);
        Thread holder = new Thread(() -> holdLock(held), "holder");
        holder.start();
        held.await();
        takeLock();
        holder.join();
        Thread producer = new Thread(JWaits::produce, "producer");
        producer.start();
        consume();
        producer.join();
        System.out.println("done");
    }
}
