/* The java golden experiment: one class rewritten by the agent (a JavaClass record) and its
 * methods measured (RegionDefs of kind 6). */
public class Golden {
    static int twice(int x) { return 2 * x; }

    public static void main(String[] args) {
        int s = 0;
        for (int i = 0; i < 3; i++)
            s += twice(i);
        System.out.println(s);
    }
}
