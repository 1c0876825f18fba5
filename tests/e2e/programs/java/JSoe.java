// Frames left by exceptions the program catches: a StackOverflowError caught one level above
// the recursion that overflowed, and one caught by the recursion itself at whatever depth can
// run its handler (each on a thread with a small stack, so the recursion stays short); an
// ordinary exception thrown through DEPTH frames THROWS times. Every later call must be a child
// of the method that made it. Prints each recursion's depth, which is its method's calls.
public class JSoe {
    static final int THROWS = 6, DEPTH = 4, LEAVES = 5;
    static int depth;

    static void recurse() {
        depth++;
        recurse();
    }

    static int overflow() {
        try {
            recurse();
        } catch (StackOverflowError e) {
            return leaf(depth);
        }
        return -1;
    }

    static int selfDepth;

    static void selfCatch() {
        selfDepth++;
        try {
            selfCatch();
        } catch (StackOverflowError e) {
            /* the deepest frame that can run this handler stops the recursion */
        }
    }

    static void selfThread() {
        selfCatch();
        int d = 0;
        for (int i = 0; i < LEAVES; i++)
            d = leaf(d);
        System.out.println("self depth " + selfDepth);
    }

    static int leaf(int x) {
        return x + 1;
    }

    static void thrower(int k) {
        if (k == 0)
            throw new IllegalStateException("bottom");
        thrower(k - 1);
    }

    static int catcher() {
        int n = 0;
        for (int i = 0; i < THROWS; i++) {
            try {
                thrower(DEPTH - 1);
            } catch (IllegalStateException e) {
                n = leaf(n);
            }
        }
        return n;
    }

    static void deepThread() {
        int d = overflow();
        for (int i = 0; i < LEAVES; i++)
            d = leaf(d);
        System.out.println("depth " + depth);
    }

    public static void main(String[] args) throws Exception {
        Thread t = new Thread(null, JSoe::deepThread, "deep", 256 * 1024);
        t.start();
        t.join();
        Thread s = new Thread(null, JSoe::selfThread, "self", 256 * 1024);
        s.start();
        s.join();
        int n = catcher();
        for (int i = 0; i < LEAVES; i++)
            n = leaf(n);
        System.out.println("caught " + n);
    }
}
