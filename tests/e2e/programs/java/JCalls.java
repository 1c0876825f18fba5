import java.util.BitSet;

import org.parallax.Profile;

/**
 * Known calls for tests/e2e/test_java.py. On thread "main": mid(1000) once (1000 leaf calls),
 * fib(10) (177 calls), catcher(10) (10 thrower calls, 5 of them throwing), deep(3) thrown
 * through 4 frames then after() once, new Bad() thrown from its constructor, bits() (one BitSet
 * set per i < 8 and one cardinality), viaNative(5) when a library path is given (JNI:
 * Java_JCalls_nativeSum -> c_helper); user region "setup" once, "compute" (try-with-resources)
 * 3 times, user event "size" with values 1..5, phase "phase-A" once. Threads "worker-1" and
 * "worker-2" each call mid(100) once.
 */
public class JCalls {
    static int leaf(int x) { return x + 1; }

    static int mid(int n) {
        int s = 0;
        for (int i = 0; i < n; i++)
            s += leaf(i);
        return s;
    }

    static int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

    static void thrower(int i) {
        if (i % 2 == 0)
            throw new IllegalStateException("even");
    }

    static int catcher(int n) {
        int c = 0;
        for (int i = 0; i < n; i++) {
            try {
                thrower(i);
            } catch (IllegalStateException e) {
                c++;
            }
        }
        return c;
    }

    static int deep(int n) {
        if (n == 0)
            throw new RuntimeException("bottom");
        return deep(n - 1) + 1;
    }

    static int after() { return 7; }

    static final class Bad {
        Bad() {
            throw new IllegalArgumentException("constructor");
        }
    }

    static int bits() {
        BitSet b = new BitSet();
        for (int i = 0; i < 8; i++)
            b.set(i * 3);
        return b.cardinality();
    }

    static native int nativeSum(int n);

    static int viaNative(int n) { return nativeSum(n); }

    public static void main(String[] args) throws Exception {
        Profile.start("setup");
        int total = mid(1000);
        Profile.stop("setup");
        for (int i = 0; i < 3; i++)
            try (Profile.Region r = Profile.region("compute")) {
                total += fib(10);
            }
        for (int v = 1; v <= 5; v++)
            Profile.event("size", v);
        Profile.phaseBegin("phase-A");
        total += catcher(10);
        Profile.phaseEnd("phase-A");
        try {
            deep(3);
        } catch (RuntimeException e) {
            total += after();
        }
        try {
            new Bad();
        } catch (IllegalArgumentException e) {
            total += 1;
        }
        total += bits();
        if (args.length > 0) {
            System.load(args[0]);
            total += viaNative(5);
        }
        Thread[] w = new Thread[2];
        for (int i = 0; i < 2; i++) {
            w[i] = new Thread(() -> mid(100), "worker-" + (i + 1));
            w[i].start();
        }
        for (Thread t : w)
            t.join();
        System.out.println("total " + total);
    }
}
