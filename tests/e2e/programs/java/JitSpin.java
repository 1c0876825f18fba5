import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

/** Two hot methods on two threads, each spinning a known CPU time: spinAlpha on thread
 * "alpha-thread" for args[0] ms, spinBeta on "beta-thread" for args[1] ms. Each prints
 * `truth THREAD METHOD SECONDS` of its thread's CPU time (ThreadMXBean) spent in the method. */
public class JitSpin {
    static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();
    static volatile long sink;

    /** Spins until the thread's CPU clock passed `until` ns, reading it every 2^20 rounds. */
    static long spinAlpha(long until) {
        long x = 1;
        while (true) {
            for (int i = 0; i < (1 << 20); i++)
                x = x * 6364136223846793005L + 1442695040888963407L;
            if (MX.getCurrentThreadCpuTime() >= until)
                return x;
        }
    }

    static long spinBeta(long until) {
        long x = 7;
        while (true) {
            for (int i = 0; i < (1 << 20); i++)
                x = (x ^ (x << 13)) * 31 + i;
            if (MX.getCurrentThreadCpuTime() >= until)
                return x;
        }
    }

    static Thread worker(String name, boolean alpha, long ms) {
        return new Thread(() -> {
            long t0 = MX.getCurrentThreadCpuTime();
            sink += alpha ? spinAlpha(t0 + ms * 1000000L) : spinBeta(t0 + ms * 1000000L);
            long t1 = MX.getCurrentThreadCpuTime();
            System.out.printf("truth %s %s %.6f%n", name, alpha ? "spinAlpha" : "spinBeta",
                              (t1 - t0) * 1e-9);
        }, name);
    }

    public static void main(String[] args) throws Exception {
        Thread a = worker("alpha-thread", true, Long.parseLong(args[0]));
        Thread b = worker("beta-thread", false, Long.parseLong(args[1]));
        a.start();
        b.start();
        a.join();
        b.join();
    }
}
