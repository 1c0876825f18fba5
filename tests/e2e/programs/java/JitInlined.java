import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

/** A small hot method the JIT compiler inlines into its caller: `mix` called from `spin`'s loop,
 * on a thread "spin-thread", for args[0] ms of the thread's CPU time (ThreadMXBean). `mix` ends
 * by calling `next`, which the test keeps from being inlined (-XX:CompileCommand=dontinline): the
 * call is an instruction the compiler records with `mix` inlined there. Prints to standard
 * error (standard output has the JVM's -XX:+PrintInlining) `truth spin-thread spin SECONDS`:
 * the thread's CPU time in spin, mix and next included. */
public class JitInlined {
    static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();
    static volatile long sink;

    static long next(long x) {
        return x + 1;
    }

    static long mix(long x) {
        x = (x ^ (x >>> 7)) * 0x9E3779B97F4A7C15L;
        x = (x ^ (x >>> 11)) * 0xBF58476D1CE4E5B9L;
        x = (x ^ (x >>> 13)) * 0x94D049BB133111EBL;
        return next(x ^ (x >>> 17));
    }

    static long spin(long until) {
        long x = 1;
        while (true) {
            for (int i = 0; i < (1 << 16); i++)
                x = mix(x);
            if (MX.getCurrentThreadCpuTime() >= until)
                return x;
        }
    }

    public static void main(String[] args) throws Exception {
        long ms = Long.parseLong(args[0]);
        Thread t = new Thread(() -> {
            long t0 = MX.getCurrentThreadCpuTime();
            sink += spin(t0 + ms * 1000000L);
            long t1 = MX.getCurrentThreadCpuTime();
            System.err.printf("truth spin-thread spin %.6f%n", (t1 - t0) * 1e-9);
        }, "spin-thread");
        t.start();
        t.join();
    }
}
