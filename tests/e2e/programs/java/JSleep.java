/** Thread.sleep and Object.wait (plx waits, tests/e2e/test_waits.py): thread "sleeper" sleeps
 * D seconds (args[0]) in nap; then main waits in awaitSignal (Object.wait) until thread
 * "signaller" notifies it, after sleeping D in nap itself. */
public class JSleep {
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

    static void sleeper() {
        nap(d);
    }

    static void signal() {
        nap(d);
        synchronized (cond) {
            ready = true;
            cond.notifyAll();
        }
    }

    static void awaitSignal() throws InterruptedException {
        synchronized (cond) {
            while (!ready)
                cond.wait();
        }
    }

    public static void main(String[] args) throws Exception {
        d = (long) (Double.parseDouble(args[0]) * 1000);
        Thread sleeper = new Thread(JSleep::sleeper, "sleeper");
        sleeper.start();
        sleeper.join();
        Thread signaller = new Thread(JSleep::signal, "signaller");
        signaller.start();
        awaitSignal();
        signaller.join();
        System.out.println("done");
    }
}
