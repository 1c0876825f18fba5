import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

/**
 * Java call-stack sampling benchmark's program (bench/java/sampling.sh): a compute-bound loop
 * (a small hot method the JIT compiles, called from another) on a thread named "spin", run for
 * ROUNDS rounds after a warm-up of ROUNDS/4 rounds (the JIT has compiled it). Prints the spin
 * thread's CPU time over the timed rounds (ThreadMXBean, user + system: a sampler's interrupts
 * and signals are charged to it) as "S cpu_s" and its wall time as "S wall_s".
 */
public class JavaSampling {
    static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();
    static volatile long sink;

    static long mix(long x, int i) {
        return (x ^ (x >>> 7)) * 0x9E3779B97F4A7C15L + i;
    }

    static long round(long x) {
        for (int i = 0; i < (1 << 16); i++)
            x = mix(x, i);
        return x;
    }

    public static void main(String[] args) throws Exception {
        long rounds = args.length > 0 ? Long.parseLong(args[0]) : 20000;
        long[] res = new long[2];
        Thread t = new Thread(() -> {
            long x = 1;
            for (long r = 0; r < rounds / 4; r++)
                x = round(x);
            long c0 = MX.getCurrentThreadCpuTime(), w0 = System.nanoTime();
            for (long r = 0; r < rounds; r++)
                x = round(x);
            res[0] = MX.getCurrentThreadCpuTime() - c0;
            res[1] = System.nanoTime() - w0;
            sink = x;
        }, "spin");
        t.start();
        t.join();
        System.out.printf("%.4f cpu_s%n%.4f wall_s%n", res[0] * 1e-9, res[1] * 1e-9);
    }
}
