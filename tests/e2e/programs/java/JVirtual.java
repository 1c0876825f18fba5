/* Virtual threads (JDK 21 and later): N virtual threads vt-0..vt-(N-1) (args[0]) each call
 * run -> R times (args[1]) a -> b, and b parks: Thread.sleep(1) in the even ones,
 * LockSupport.parkNanos in the odd ones, so that each unmounts from its carrier inside b while
 * the others mount. Every virtual thread's calls: run 1, run => a R, run => a => b R; main
 * calls spawn once. Prints "N virtual threads, R rounds". */
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

public class JVirtual {
    static int rounds;

    static void b(int i) throws InterruptedException {
        if (i % 2 == 0)
            Thread.sleep(1);
        else
            LockSupport.parkNanos(1_000_000);
    }

    static void a(int i) throws InterruptedException {
        b(i);
    }

    static void run(int i) {
        try {
            for (int r = 0; r < rounds; r++)
                a(i);
        } catch (InterruptedException e) {
            throw new RuntimeException(e);
        }
    }

    static List<Thread> spawn(int n) {
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            final int k = i;
            threads.add(Thread.ofVirtual().name("vt-" + i).start(() -> run(k)));
        }
        return threads;
    }

    public static void main(String[] args) throws InterruptedException {
        int n = Integer.parseInt(args[0]);
        rounds = Integer.parseInt(args[1]);
        for (Thread t : spawn(n))
            t.join();
        System.out.println(n + " virtual threads, " + rounds + " rounds");
    }
}
