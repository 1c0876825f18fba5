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
        SCATTER = 14, ALLGATHER = 15, ALLTOALL = 16, GATHERV = 17, SCATTERV = 18, ALLGATHERV = 19,
        ALLTOALLV = 20, REDUCE_SCATTER = 21, SCAN = 22, TEST = 23, TESTALL = 24, WAITANY = 25,
        TESTANY = 26, WAITSOME = 27, TESTSOME = 28, COMM_NEW = 29, BUFFER = 30, ISSEND = 31,
        IBSEND = 32, IRSEND = 33;

    /**
     * One method: its MPI routine and kind; slots of the arguments (-1: none): the communicator
     * (0: this; the request array of a static Request method), on entry the send side's type and
     * count with the peer and tag, on exit each side's type, count and counts array, and the root.
     */
    static final class Routine {
        final String mpiName;
        final int kind, comm, type, count, peer, tag;
        int sType = -1, sCount = -1, sCounts = -1, rType = -1, rCount = -1, rCounts = -1, root = -1;

        Routine(String mpiName, int kind, int comm, int type, int count, int peer, int tag) {
            this.mpiName = mpiName;
            this.kind = kind;
            this.comm = comm;
            this.type = type;
            this.count = count;
            this.peer = peer;
            this.tag = tag;
        }

        Routine send(int type, int count, int counts) {
            sType = type;
            sCount = count;
            sCounts = counts;
            return this;
        }

        Routine recv(int type, int count, int counts) {
            rType = type;
            rCount = count;
            rCounts = counts;
            return this;
        }

        Routine root(int slot) {
            root = slot;
            return this;
        }
    }

    private static final Map<String, Map<String, Routine>> CLASSES = new HashMap<>();

    private static void add(String cls, String method, String desc, Routine r) {
        CLASSES.computeIfAbsent(cls, k -> new HashMap<>()).put(method + desc, r);
    }

    private static Routine r(String mpiName, int kind) {
        return new Routine(mpiName, kind, 0, -1, -1, -1, -1);
    }

    static {
        String p2p = "(Ljava/lang/Object;IILmpi/Datatype;II)";
        // Comm: buf 1, offset 2, count 3, datatype 4, peer 5, tag 6
        for (String m : new String[] {"Send", "Ssend", "Bsend", "Rsend"})
            add("mpi/Comm", m, p2p + "V", new Routine("MPI_" + m, SEND, 0, 4, 3, 5, 6));
        // the nonblocking sends by mode (their send_done events say it)
        String[] isends = {"Isend", "Issend", "Ibsend", "Irsend"};
        int[] modes = {ISEND, ISSEND, IBSEND, IRSEND};
        for (int i = 0; i < isends.length; i++)
            add("mpi/Comm", isends[i], p2p + "Lmpi/Request;", new Routine("MPI_" + isends[i], modes[i], 0, 4, 3, 5, 6));
        add("mpi/Comm", "Recv", p2p + "Lmpi/Status;", r("MPI_Recv", RECV).recv(4, -1, -1));
        add("mpi/Comm", "Irecv", p2p + "Lmpi/Request;", r("MPI_Irecv", IRECV).recv(4, -1, -1));
        // Sendrecv: the send's arguments in 1-6, the receive's in 7-12
        add("mpi/Comm", "Sendrecv",
            "(Ljava/lang/Object;IILmpi/Datatype;IILjava/lang/Object;IILmpi/Datatype;II)Lmpi/Status;",
            new Routine("MPI_Sendrecv", SENDRECV, 0, 4, 3, 5, 6).recv(10, -1, -1));
        add("mpi/Comm", "Probe", "(II)Lmpi/Status;", r("MPI_Probe", OTHER));
        add("mpi/Comm", "Iprobe", "(II)Lmpi/Status;", r("MPI_Iprobe", OTHER));
        add("mpi/Intracomm", "Barrier", "()V", r("MPI_Barrier", BARRIER));
        add("mpi/Intracomm", "Bcast", "(Ljava/lang/Object;IILmpi/Datatype;I)V",
            r("MPI_Bcast", BCAST).send(4, 3, -1).root(5));
        // Reduce: sendbuf 1, offset 2, recvbuf 3, offset 4, count 5, datatype 6, op 7, root 8
        String reduce = "(Ljava/lang/Object;ILjava/lang/Object;IILmpi/Datatype;Lmpi/Op;";
        add("mpi/Intracomm", "Reduce", reduce + "I)V", r("MPI_Reduce", REDUCE).send(6, 5, -1).root(8));
        add("mpi/Intracomm", "Allreduce", reduce + ")V", r("MPI_Allreduce", ALLREDUCE).send(6, 5, -1));
        add("mpi/Intracomm", "Scan", reduce + ")V", r("MPI_Scan", SCAN).send(6, 5, -1));
        // Reduce_scatter: sendbuf 1, offset 2, recvbuf 3, offset 4, recvcounts 5, datatype 6, op 7
        add("mpi/Intracomm", "Reduce_scatter", "(Ljava/lang/Object;ILjava/lang/Object;I[ILmpi/Datatype;Lmpi/Op;)V",
            r("MPI_Reduce_scatter", REDUCE_SCATTER).send(6, -1, 5));
        // Gather, Scatter, Allgather, Alltoall: sendbuf 1, offset 2, count 3, datatype 4, recvbuf 5,
        // offset 6, count 7, datatype 8 (root 9)
        String g = "(Ljava/lang/Object;IILmpi/Datatype;Ljava/lang/Object;IILmpi/Datatype;";
        add("mpi/Intracomm", "Gather", g + "I)V", r("MPI_Gather", GATHER).send(4, 3, -1).recv(8, 7, -1).root(9));
        add("mpi/Intracomm", "Scatter", g + "I)V", r("MPI_Scatter", SCATTER).send(4, 3, -1).recv(8, 7, -1).root(9));
        add("mpi/Intracomm", "Allgather", g + ")V", r("MPI_Allgather", ALLGATHER).send(4, 3, -1).recv(8, 7, -1));
        add("mpi/Intracomm", "Alltoall", g + ")V", r("MPI_Alltoall", ALLTOALL).send(4, 3, -1).recv(8, 7, -1));
        // Gatherv, Allgatherv: sendbuf 1, offset 2, count 3, datatype 4, recvbuf 5, offset 6,
        // recvcounts 7, displs 8, datatype 9 (root 10)
        String gv = "(Ljava/lang/Object;IILmpi/Datatype;Ljava/lang/Object;I[I[ILmpi/Datatype;";
        add("mpi/Intracomm", "Gatherv", gv + "I)V",
            r("MPI_Gatherv", GATHERV).send(4, 3, -1).recv(9, -1, 7).root(10));
        add("mpi/Intracomm", "Allgatherv", gv + ")V",
            r("MPI_Allgatherv", ALLGATHERV).send(4, 3, -1).recv(9, -1, 7));
        // Scatterv: sendbuf 1, offset 2, sendcounts 3, displs 4, datatype 5, recvbuf 6, offset 7,
        // count 8, datatype 9, root 10
        add("mpi/Intracomm", "Scatterv", "(Ljava/lang/Object;I[I[ILmpi/Datatype;Ljava/lang/Object;IILmpi/Datatype;I)V",
            r("MPI_Scatterv", SCATTERV).send(5, -1, 3).recv(9, 8, -1).root(10));
        // Alltoallv: sendbuf 1, offset 2, sendcounts 3, sdispls 4, datatype 5, recvbuf 6, offset 7,
        // recvcounts 8, rdispls 9, datatype 10
        add("mpi/Intracomm", "Alltoallv",
            "(Ljava/lang/Object;I[I[ILmpi/Datatype;Ljava/lang/Object;I[I[ILmpi/Datatype;)V",
            r("MPI_Alltoallv", ALLTOALLV).send(5, -1, 3).recv(10, -1, 8));
        // New communicators: defined when their creating routine returns them
        add("mpi/Intracomm", "Split", "(II)Lmpi/Intracomm;", r("MPI_Comm_split", COMM_NEW));
        add("mpi/Intracomm", "Create", "(Lmpi/Group;)Lmpi/Intracomm;", r("MPI_Comm_create", COMM_NEW));
        add("mpi/Intracomm", "clone", "()Ljava/lang/Object;", r("MPI_Comm_dup", COMM_NEW));
        add("mpi/Intercomm", "clone", "()Ljava/lang/Object;", r("MPI_Comm_dup", COMM_NEW));
        add("mpi/Comm", "Create_intercomm", "(Lmpi/Comm;III)Lmpi/Intercomm;", r("MPI_Intercomm_create", COMM_NEW));
        add("mpi/Intercomm", "Merge", "(Z)Lmpi/Intracomm;", r("MPI_Intercomm_merge", COMM_NEW));
        add("mpi/Intracomm", "Create_cart", "([I[ZZ)Lmpi/Cartcomm;", r("MPI_Cart_create", COMM_NEW));
        // Request: Wait and Test on this request; the static forms on the array (slot 0)
        add("mpi/Request", "Wait", "()Lmpi/Status;", r("MPI_Wait", WAIT));
        add("mpi/Request", "Test", "()Lmpi/Status;", r("MPI_Test", TEST));
        add("mpi/Request", "Waitall", "([Lmpi/Request;)[Lmpi/Status;", r("MPI_Waitall", WAITALL));
        add("mpi/Request", "Testall", "([Lmpi/Request;)[Lmpi/Status;", r("MPI_Testall", TESTALL));
        add("mpi/Request", "Waitany", "([Lmpi/Request;)Lmpi/Status;", r("MPI_Waitany", WAITANY));
        add("mpi/Request", "Testany", "([Lmpi/Request;)Lmpi/Status;", r("MPI_Testany", TESTANY));
        add("mpi/Request", "Waitsome", "([Lmpi/Request;)[Lmpi/Status;", r("MPI_Waitsome", WAITSOME));
        add("mpi/Request", "Testsome", "([Lmpi/Request;)[Lmpi/Status;", r("MPI_Testsome", TESTSOME));
        add("mpi/MPI", "Init", "([Ljava/lang/String;)[Ljava/lang/String;", new Routine("MPI_Init", INIT, -1, -1, -1, -1, -1));
        add("mpi/MPI", "Finalize", "()V", new Routine("MPI_Finalize", OTHER, -1, -1, -1, -1, -1));
        // MPJ's message buffer: its serialized part (MPI.OBJECT) is known once committed
        add("mpjbuf/Buffer", "commit", "()V", new Routine(null, BUFFER, 0, -1, -1, -1, -1));
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
            if (r.kind == BUFFER)
                return;
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
            if (opcode >= Opcodes.IRETURN && opcode <= Opcodes.RETURN && r.kind == BUFFER) {
                super.visitVarInsn(Opcodes.ALOAD, 0);
                super.visitMethodInsn(Opcodes.INVOKESTATIC, HOOKS, "mpjBuffer", "(Ljava/lang/Object;)V", false);
            } else if (opcode >= Opcodes.IRETURN && opcode <= Opcodes.RETURN) {
                if (r.kind == INIT) {
                    super.visitFieldInsn(Opcodes.GETSTATIC, "mpi/MPI", "COMM_WORLD", "Lmpi/Intracomm;");
                    super.visitInsn(Opcodes.DUP);
                    super.visitMethodInsn(Opcodes.INVOKEVIRTUAL, "mpi/Intracomm", "Rank", "()I", false);
                    super.visitFieldInsn(Opcodes.GETSTATIC, "mpi/MPI", "COMM_WORLD", "Lmpi/Intracomm;");
                    super.visitMethodInsn(Opcodes.INVOKEVIRTUAL, "mpi/Intracomm", "Size", "()I", false);
                    super.visitFieldInsn(Opcodes.GETSTATIC, "mpi/MPI", "COMM_SELF", "Lmpi/Comm;");
                    super.visitMethodInsn(Opcodes.INVOKESTATIC, HOOKS, "mpjInit", "(Ljava/lang/Object;IILjava/lang/Object;)V", false);
                }
                if (opcode == Opcodes.ARETURN)
                    super.visitInsn(Opcodes.DUP);
                else
                    super.visitInsn(Opcodes.ACONST_NULL);
                super.visitLdcInsn(region);
                super.visitLdcInsn(r.kind);
                object(r.comm);
                object(r.sType);
                integer(r.sCount, 0);
                object(r.sCounts);
                object(r.rType);
                integer(r.rCount, 0);
                object(r.rCounts);
                integer(r.root, -1);
                super.visitMethodInsn(Opcodes.INVOKESTATIC, HOOKS, "mpjEnd",
                                      "(Ljava/lang/Object;IILjava/lang/Object;Ljava/lang/Object;ILjava/lang/Object;"
                                      + "Ljava/lang/Object;ILjava/lang/Object;I)V", false);
            }
            super.visitInsn(opcode);
        }

        @Override
        public void visitMaxs(int maxStack, int maxLocals) {
            if (r.kind == BUFFER) {
                super.visitMaxs(maxStack, maxLocals);
                return;
            }
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
