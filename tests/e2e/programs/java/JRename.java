/* A thread that renames itself (Thread.setName) after it started, then calls work() 3 times;
 * main names it nothing and prints the name the thread ended with. */
public class JRename {
    static int n;

    static void work() {
        n++;
    }

    public static void main(String[] args) throws Exception {
        Thread t = new Thread(() -> {
            Thread.currentThread().setName("renamed-worker-with-a-long-name");
            for (int i = 0; i < 3; i++)
                work();
        });
        t.start();
        t.join();
        System.out.println("worker was named " + t.getName() + ", " + n + " calls");
    }
}
