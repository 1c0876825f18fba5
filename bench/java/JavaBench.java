/**
 * Cost of a measured Java method call (bench/java/run.sh): CALLS calls of a small static method,
 * after a warm-up of the same length (the JIT has compiled the loop and the method), timed with
 * System.nanoTime. Prints "N ns/call". The method is run the same way with and without the
 * agent; the difference is the cost of its entry and exit.
 */
public class JavaBench {
    static int sink;

    static int work(int x) {
        return (x ^ (x >>> 3)) + 1;
    }

    static long loop(int calls) {
        long t0 = System.nanoTime();
        int s = 0;
        for (int i = 0; i < calls; i++)
            s += work(i);
        sink += s;
        return System.nanoTime() - t0;
    }

    public static void main(String[] args) {
        int calls = args.length > 0 ? Integer.parseInt(args[0]) : 20_000_000;
        loop(calls); /* warm-up: interpreted, then compiled */
        loop(calls);
        long best = Long.MAX_VALUE;
        for (int r = 0; r < 3; r++)
            best = Math.min(best, loop(calls));
        System.out.printf("%.2f ns/call%n", (double) best / calls);
    }
}
