package org.parallax.agent;

/**
 * The native half of the agent, in libplx (runtime/src/adapters/jvm/). Loaded by the boot class
 * loader (the agent jar is on the boot class path) so that instrumented JDK and application
 * classes reach the same class. Every method is a plain static JNI native, bound by libplx's
 * JVMTI agent (-agentpath, beside -javaagent) with RegisterNatives as this class is prepared:
 * nothing here loads a library. {@link #enter} and {@link #exit} are the hot path: they take the
 * region id the runtime gave the method when its class was rewritten.
 */
public final class Hooks {
    private Hooks() {}

    /** True once libplx has bound the natives and writes an experiment; the agent rewrites
     * nothing otherwise. */
    public static volatile boolean ready;

    /** Starts the runtime's Java half; false when nothing is measured. */
    static synchronized boolean start() {
        if (ready)
            return true;
        try {
            ready = init() == 0;
        } catch (UnsatisfiedLinkError e) { /* libplx's JVMTI agent bound no native */
            System.err.println("plx: the Java agent's natives are not bound: it needs libplx.so's "
                               + "JVMTI agent of the same build (-agentpath:libplx.so, as plx run "
                               + "gives it); Java methods are not measured");
            ready = false;
        }
        return ready;
    }

    /** Binds the runtime to the JVM; 0 when an experiment is being written. */
    static native int init();

    /** A method entered / left (returned or thrown through). */
    public static native void enter(int id);
    public static native void exit(int id);
    /**
     * A handler of the method begins (its code caught an exception, or runs a finally block on
     * one): the frames above the method's are closed, those whose exit could not be recorded too.
     */
    public static native void caught(int id);

    /**
     * Object.notify or notifyAll is about to be called on {@code monitor} (each such call site of
     * a rewritten class calls this first): a release of its monitor-wait object, the cause of the
     * waits it ends (JVMTI has no notify event).
     */
    public static native void notified(Object monitor);

    /** The region id of a method (kind Java method), or -1 when the filter excludes it. */
    static native int method(String name);

    /** Whether a class (internal name, a/b/C) is measured by the filter's class rules. */
    static native boolean classMeasured(String internalName);

    /** A class rewritten: its name, methods instrumented, and the nanoseconds the rewrite took. */
    static native void classDone(String name, int methods, long nanos, int flags);

    /**
     * MPJ Express (package mpi, rewritten by {@link Mpj}): the region id of an MPI routine
     * (kind MPI); the routine entered (the message it sends, if any), left (with its result:
     * the message it received, the request it posted or completed, the collective's bytes), or
     * left by an exception; MPI.Init's rank and size in MPI.COMM_WORLD.
     */
    static native int mpjRoutine(String mpiName);
    public static native void mpjBegin(int region, int kind, Object comm, Object datatype, int count,
                                       int peer, int tag);
    public static native void mpjEnd(Object result, int region, int kind, Object self, Object sendType,
                                     int sendCount, Object sendCounts, Object recvType, int recvCount,
                                     Object recvCounts, int root);
    public static native void mpjAbort(int region);
    public static native void mpjInit(Object world, int rank, int size, Object self);
    /** An MPJ message buffer committed (mpjbuf.Buffer.commit): its serialized part's length. */
    public static native void mpjBuffer(Object buffer);

    /** User API (org.parallax.Profile): kind 1 region, 2 phase. */
    public static native void regionBegin(String name, int kind);
    public static native void regionEnd(String name, int kind);
    public static native void event(String name, double value);
    public static native void threadName(String name);
}
