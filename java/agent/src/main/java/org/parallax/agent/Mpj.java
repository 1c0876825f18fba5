package org.parallax.agent;

import java.util.HashMap;
import java.util.Map;

import org.objectweb.asm.Label;
import org.objectweb.asm.MethodVisitor;
import org.objectweb.asm.Opcodes;

/**
 * MPJ Express's communication methods (package mpi of Debian's mpj.jar, the mpiJava 1.2 API)
 * rewritten to record MPI routines and messages: each listed method calls
 * {@link Hooks#mpjBegin} after its entry and {@link Hooks#mpjEnd} before each return (with the
 * returned Status or Request), or {@link Hooks#mpjAbort} when left by an exception. The
 * arguments the natives need are named by their local variable slots. Open MPI's Java bindings
 * (also package mpi) have other method names and descriptors and match nothing here: their
 * messages are measured by the PMPI wrappers under JNI. Kind numbers are mpj.c's.
 */
final class Mpj {
    static final int OTHER = 0, SEND = 1, RECV = 2, ISEND = 3, IRECV = 4, WAIT = 5, SENDRECV = 6,
        BARRIER = 7, BCAST = 8, REDUCE = 9, ALLREDUCE = 10, INIT = 11, WAITALL = 12, GATHER = 13,
        SCATTER = 14, ALLGATHER = 15, ALLTOALL = 16;

    /** One method: its MPI routine and kind; slots of the arguments (-1: none). */
    static final class Routine {
        final String mpiName;
        final int kind, comm, type, count, peer, tag, endType, endCount, root;

        Routine(String mpiName, int kind, int comm, int type, int count, int peer, int tag,
                int endType, int endCount, int root) {
            this.mpiName = mpiName;
            this.kind = kind;
            this.comm = comm;
            this.type = type;
            this.count = count;
            this.peer = peer;
            this.tag = tag;
            this.endType = endType;
            this.endCount = endCount;
            this.root = root;
        }
    }

    private static final Map<String, Map<String, Routine>> CLASSES = new HashMap<>();

    private static void add(String cls, String method, String desc, Routine r) {
        CLASSES.computeIfAbsent(cls, k -> new HashMap<>()).put(method + desc, r);
    }

    static {
        String p2p = "(Ljava/lang/Object;IILmpi/Datatype;II)";
        // Comm: buf 1, offset 2, count 3, datatype 4, peer 5, tag 6
        for (String m : new String[] {"Send", "Ssend", "Bsend", "Rsend"})
            add("mpi/Comm", m, p2p + "V", new Routine("MPI_" + m, SEND, 0, 4, 3, 5, 6, -1, -1, -1));
        for (String m : new String[] {"Isend", "Issend", "Ibsend", "Irsend"})
            add("mpi/Comm", m, p2p + "Lmpi/Request;", new Routine("MPI_" + m, ISEND, 0, 4, 3, 5, 6, -1, -1, -1));
        add("mpi/Comm", "Recv", p2p + "Lmpi/Status;", new Routine("MPI_Recv", RECV, 0, -1, -1, -1, -1, 4, -1, -1));
        add("mpi/Comm", "Irecv", p2p + "Lmpi/Request;", new Routine("MPI_Irecv", IRECV, 0, -1, -1, -1, -1, 4, -1, -1));
        // Sendrecv: the send's arguments in 1-6, the receive's in 7-12
        add("mpi/Comm", "Sendrecv",
            "(Ljava/lang/Object;IILmpi/Datatype;IILjava/lang/Object;IILmpi/Datatype;II)Lmpi/Status;",
            new Routine("MPI_Sendrecv", SENDRECV, 0, 4, 3, 5, 6, 10, -1, -1));
        add("mpi/Intracomm", "Barrier", "()V", new Routine("MPI_Barrier", BARRIER, 0, -1, -1, -1, -1, -1, -1, -1));
        add("mpi/Intracomm", "Bcast", "(Ljava/lang/Object;IILmpi/Datatype;I)V",
            new Routine("MPI_Bcast", BCAST, 0, -1, -1, -1, -1, 4, 3, 5));
        // Reduce: sendbuf 1, offset 2, recvbuf 3, offset 4, count 5, datatype 6, op 7, root 8
        add("mpi/Intracomm", "Reduce", "(Ljava/lang/Object;ILjava/lang/Object;IILmpi/Datatype;Lmpi/Op;I)V",
            new Routine("MPI_Reduce", REDUCE, 0, -1, -1, -1, -1, 6, 5, 8));
        add("mpi/Intracomm", "Allreduce", "(Ljava/lang/Object;ILjava/lang/Object;IILmpi/Datatype;Lmpi/Op;)V",
            new Routine("MPI_Allreduce", ALLREDUCE, 0, -1, -1, -1, -1, 6, 5, -1));
        // Gather, Scatter, Allgather, Alltoall: sendbuf 1, offset 2, count 3, datatype 4, recvbuf 5,
        // offset 6, count 7, datatype 8 (root 9); one side's bytes per rank (the send side's, the
        // receive side's for Scatter): MPI has both sides' type signatures agree
        String g = "(Ljava/lang/Object;IILmpi/Datatype;Ljava/lang/Object;IILmpi/Datatype;";
        add("mpi/Intracomm", "Gather", g + "I)V", new Routine("MPI_Gather", GATHER, 0, -1, -1, -1, -1, 4, 3, 9));
        add("mpi/Intracomm", "Scatter", g + "I)V", new Routine("MPI_Scatter", SCATTER, 0, -1, -1, -1, -1, 8, 7, 9));
        add("mpi/Intracomm", "Allgather", g + ")V",
            new Routine("MPI_Allgather", ALLGATHER, 0, -1, -1, -1, -1, 4, 3, -1));
        add("mpi/Intracomm", "Alltoall", g + ")V", new Routine("MPI_Alltoall", ALLTOALL, 0, -1, -1, -1, -1, 4, 3, -1));
        add("mpi/Request", "Wait", "()Lmpi/Status;", new Routine("MPI_Wait", WAIT, 0, -1, -1, -1, -1, -1, -1, -1));
        add("mpi/Request", "Waitall", "([Lmpi/Request;)[Lmpi/Status;",
            new Routine("MPI_Waitall", WAITALL, 0, -1, -1, -1, -1, -1, -1, -1));
        add("mpi/MPI", "Init", "([Ljava/lang/String;)[Ljava/lang/String;",
            new Routine("MPI_Init", INIT, -1, -1, -1, -1, -1, -1, -1, -1));
        add("mpi/MPI", "Finalize", "()V", new Routine("MPI_Finalize", OTHER, -1, -1, -1, -1, -1, -1, -1, -1));
    }

    private Mpj() {}

    /**
     * The MPJ methods of a class (internal name) loaded by `loader`, or null: MPJ's classes
     * only, told from Open MPI's (MPI.Init and MPI.Finalize have the same descriptors in both)
     * by MPJ's device layer beside them.
     */
    static Map<String, Routine> of(String internalName, ClassLoader loader) {
        Map<String, Routine> methods = CLASSES.get(internalName);
        if (methods == null)
            return null;
        String device = "mpjdev/MPJDev.class";
        boolean mpj = loader != null ? loader.getResource(device) != null
                                     : ClassLoader.getSystemResource(device) != null;
        return mpj ? methods : null;
    }

    /**
     * Wraps a method's code; placed before (outside) the method's own entry/exit hooks so that
     * its calls come after the method's entry and before its exit.
     */
    static final class Hook extends MethodVisitor {
        private static final String HOOKS = "org/parallax/agent/Hooks";
        private final Routine r;
        private final int region;
        private final boolean frames;
        private final Label start = new Label(), end = new Label(), onThrow = new Label();

        Hook(MethodVisitor next, Routine r, int region, boolean frames) {
            super(Opcodes.ASM9, next);
            this.r = r;
            this.region = region;
            this.frames = frames;
        }

        private void object(int slot) {
            if (slot < 0)
                super.visitInsn(Opcodes.ACONST_NULL);
            else
                super.visitVarInsn(Opcodes.ALOAD, slot);
        }

        private void integer(int slot, int none) {
            if (slot < 0)
                super.visitLdcInsn(none);
            else
                super.visitVarInsn(Opcodes.ILOAD, slot);
        }

        @Override
        public void visitCode() {
            super.visitCode();
            super.visitLdcInsn(region);
            super.visitLdcInsn(r.kind);
            object(r.comm);
            object(r.type);
            integer(r.count, 0);
            integer(r.peer, -1);
            integer(r.tag, 0);
            super.visitMethodInsn(Opcodes.INVOKESTATIC, HOOKS, "mpjBegin",
                                  "(IILjava/lang/Object;Ljava/lang/Object;III)V", false);
            super.visitLabel(start);
        }

        @Override
        public void visitInsn(int opcode) {
            if (opcode >= Opcodes.IRETURN && opcode <= Opcodes.RETURN) {
                if (r.kind == INIT) {
                    super.visitFieldInsn(Opcodes.GETSTATIC, "mpi/MPI", "COMM_WORLD", "Lmpi/Intracomm;");
                    super.visitInsn(Opcodes.DUP);
                    super.visitMethodInsn(Opcodes.INVOKEVIRTUAL, "mpi/Intracomm", "Rank", "()I", false);
                    super.visitFieldInsn(Opcodes.GETSTATIC, "mpi/MPI", "COMM_WORLD", "Lmpi/Intracomm;");
                    super.visitMethodInsn(Opcodes.INVOKEVIRTUAL, "mpi/Intracomm", "Size", "()I", false);
                    super.visitMethodInsn(Opcodes.INVOKESTATIC, HOOKS, "mpjInit", "(Ljava/lang/Object;II)V", false);
                }
                if (opcode == Opcodes.ARETURN)
                    super.visitInsn(Opcodes.DUP);
                else
                    super.visitInsn(Opcodes.ACONST_NULL);
                super.visitLdcInsn(region);
                super.visitLdcInsn(r.kind);
                object(r.comm);
                object(r.endType);
                integer(r.endCount, 0);
                integer(r.root, -1);
                super.visitMethodInsn(Opcodes.INVOKESTATIC, HOOKS, "mpjEnd",
                                      "(Ljava/lang/Object;IILjava/lang/Object;Ljava/lang/Object;II)V", false);
            }
            super.visitInsn(opcode);
        }

        @Override
        public void visitMaxs(int maxStack, int maxLocals) {
            /* First of the two catch-all handlers: the method's exit hook's comes after it. */
            super.visitLabel(end);
            super.visitTryCatchBlock(start, end, onThrow, null);
            super.visitLabel(onThrow);
            if (frames)
                super.visitFrame(Opcodes.F_NEW, 0, new Object[0], 1, new Object[] {"java/lang/Throwable"});
            super.visitLdcInsn(region);
            super.visitMethodInsn(Opcodes.INVOKESTATIC, HOOKS, "mpjAbort", "(I)V", false);
            super.visitInsn(Opcodes.ATHROW);
            super.visitMaxs(maxStack, maxLocals);
        }
    }
}
