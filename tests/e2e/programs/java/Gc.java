/** Allocates 20 x 2000 blocks of 64 KiB under -Xmx64m, then System.gc(): collections happen. */
public class Gc {
    static byte[] keep;

    static void alloc() {
        for (int i = 0; i < 2000; i++)
            keep = new byte[1 << 16];
    }

    public static void main(String[] a) {
        for (int i = 0; i < 20; i++)
            alloc();
        System.gc();
    }
}
