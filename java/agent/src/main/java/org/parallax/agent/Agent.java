package org.parallax.agent;

import java.lang.instrument.Instrumentation;

/**
 * java.lang.instrument entry point. Arguments (comma separated): {@code lib=PATH} of libplx.so
 * (default: the libplx.so named in LD_PRELOAD). Classes already loaded when the agent starts are
 * not rewritten (the JVM's bootstrap classes: all JDK classes, excluded by default anyway).
 */
public final class Agent {
    private Agent() {}

    public static void premain(String args, Instrumentation inst) {
        start(args, inst);
    }

    public static void agentmain(String args, Instrumentation inst) {
        start(args, inst);
    }

    private static void start(String args, Instrumentation inst) {
        String lib = null;
        if (args != null)
            for (String a : args.split(","))
                if (a.startsWith("lib="))
                    lib = a.substring(4);
        if (lib == null)
            lib = fromPreload(System.getenv("LD_PRELOAD"));
        if (lib == null) {
            System.err.println("plx: the Java agent needs libplx.so (run the program under plx run)");
            return;
        }
        if (!Hooks.load(lib))
            return;
        inst.addTransformer(new Transformer(), false);
    }

    private static String fromPreload(String preload) {
        if (preload == null)
            return null;
        for (String p : preload.split("[: ]"))
            if (p.endsWith("/libplx.so") || p.equals("libplx.so"))
                return p;
        return null;
    }
}
