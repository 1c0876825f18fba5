package org.parallax;

import org.parallax.agent.Hooks;

/**
 * The Parallax user API for Java: the records of the C API (plx.h) from Java code. Every call
 * does nothing when the program runs without {@code plx run} (no agent, or no experiment).
 *
 * <pre>
 * try (Profile.Region r = Profile.region("exchange")) { ... }
 * Profile.phaseBegin("iteration"); ... Profile.phaseEnd("iteration");
 * Profile.event("message size", bytes);
 * </pre>
 */
public final class Profile {
    private Profile() {}

    private static final boolean ON = bind();

    private static boolean bind() {
        try {
            return Hooks.ready;
        } catch (LinkageError e) { /* the agent is not on the boot class path */
            return false;
        }
    }

    /** Whether calls are being recorded. */
    public static boolean enabled() {
        return ON;
    }

    /** Starts a user region on the calling thread; regions nest with methods and each other. */
    public static void start(String name) {
        if (ON)
            Hooks.regionBegin(name, 1);
    }

    /** Ends the innermost user region, which must be {@code name}. */
    public static void stop(String name) {
        if (ON)
            Hooks.regionEnd(name, 1);
    }

    /** A region for try-with-resources: started here, stopped by close(). */
    public static Region region(String name) {
        start(name);
        return new Region(name);
    }

    /** Phases (plx report --phase) are regions of their own kind. */
    public static void phaseBegin(String name) {
        if (ON)
            Hooks.regionBegin(name, 2);
    }

    public static void phaseEnd(String name) {
        if (ON)
            Hooks.regionEnd(name, 2);
    }

    /** One value of a user event: count, min, max, mean and standard deviation per thread. */
    public static void event(String name, double value) {
        if (ON)
            Hooks.event(name, value);
    }

    /** Names the calling thread in the experiment (by default: Thread.getName()). */
    public static void threadName(String name) {
        if (ON)
            Hooks.threadName(name);
    }

    /** A started user region; close() stops it. */
    public static final class Region implements AutoCloseable {
        private final String name;

        Region(String name) {
            this.name = name;
        }

        @Override
        public void close() {
            stop(name);
        }
    }
}
