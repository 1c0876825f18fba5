/* Loads class Newer from the directory args[0] with a class loader of its own, and prints
 * "loaded", or "refused" when the JVM cannot read its class file (a newer class file version). */
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Path;
public class LoadNewer {
    public static void main(String[] args) throws Exception {
        URL u = Path.of(args[0]).toUri().toURL();
        try (URLClassLoader l = new URLClassLoader(new URL[] {u}, null)) {
            l.loadClass("Newer");
            System.out.println("loaded");
        } catch (UnsupportedClassVersionError e) {
            System.out.println("refused");
        }
    }
}
