package org.parallax.agent;

import java.lang.instrument.Instrumentation;

/**
 * java.lang.instrument entry point; takes no arguments. libplx's JVMTI agent (-agentpath, on the
 * same command line) binds the natives of {@link Hooks}, so the agent loads no library. Classes
 * already loaded when the agent starts are not rewritten (the JVM's bootstrap classes: all JDK
 * classes, excluded by default anyway).
 */
public final class Agent {
    private Agent() {}

    public static void premain(String args, Instrumentation inst) {
        start(inst);
    }

    public static void agentmain(String args, Instrumentation inst) {
        start(inst);
    }

    private static void start(Instrumentation inst) {
        if (Hooks.start())
            inst.addTransformer(new Transformer(), false);
    }
}
