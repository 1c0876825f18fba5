import java.util.ArrayList;
import java.util.concurrent.CountDownLatch;

/** Contended Java monitors of three classes (plx report --sync, tests/e2e/test_java.py): for
 * each of an ArrayList, an int[] and a JMonitors$Account, thread "holder" enters the object's
 * monitor and, once main is blocked entering it, holds it D milliseconds more (args[0]); then
 * main joins the holder. Prints "3 monitors". */
public class JMonitors {
    static final class Account {
    }

    static void hold(Object o, CountDownLatch in, Thread waiter, long ms) {
        synchronized (o) {
            in.countDown();
            // however late the machine's load lets main run, it waits the whole D
            while (waiter.getState() != Thread.State.BLOCKED)
                Thread.onSpinWait();
            try {
                Thread.sleep(ms);
            } catch (InterruptedException e) {
                throw new RuntimeException(e);
            }
        }
    }

    static void contend(Object o, long ms) throws InterruptedException {
        CountDownLatch in = new CountDownLatch(1);
        Thread main = Thread.currentThread();
        Thread holder = new Thread(() -> hold(o, in, main, ms), "holder");
        holder.start();
        in.await();
        synchronized (o) {
            o.hashCode();
        }
        holder.join();
    }

    public static void main(String[] args) throws InterruptedException {
        long ms = Long.parseLong(args[0]);
        Object[] objects = {new ArrayList<String>(), new int[4], new Account()};
        for (Object o : objects)
            contend(o, ms);
        System.out.println(objects.length + " monitors");
    }
}
