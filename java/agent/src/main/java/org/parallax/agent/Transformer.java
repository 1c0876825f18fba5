package org.parallax.agent;

import java.lang.instrument.ClassFileTransformer;
import java.security.ProtectionDomain;
import java.util.Map;

import org.objectweb.asm.ClassReader;
import org.objectweb.asm.ClassVisitor;
import org.objectweb.asm.ClassWriter;
import org.objectweb.asm.Label;
import org.objectweb.asm.MethodVisitor;
import org.objectweb.asm.Opcodes;

/**
 * Rewrites each measured class as it loads: every method with code calls {@link Hooks#enter} on
 * entry and {@link Hooks#exit} before each return and, through a catch-all handler placed last in
 * the method's exception table, on an exception thrown out of it. In a constructor the handler
 * covers the code after its super() or this() call (code before it may not be covered): an
 * exception thrown by that call itself leaves the frame to be closed by the next exit of an
 * enclosing method. Each handler of the method's own exception table begins with a call of
 * {@link Hooks#caught}, which closes the frames the exception left open (those whose exit could
 * not be recorded: a StackOverflowError overflows the handler's call of Hooks.exit too). Classes
 * the filter excludes are returned unchanged (not rewritten), except
 * MPJ Express's communication methods ({@link Mpj}), rewritten to record MPI whatever the filter.
 */
final class Transformer implements ClassFileTransformer {
    private static final String HOOKS = "org/parallax/agent/Hooks";
    private static volatile boolean warned;

    @Override
    public byte[] transform(ClassLoader loader, String className, Class<?> redefined,
                            ProtectionDomain domain, byte[] bytes) {
        if (className == null || redefined != null || className.startsWith("org/parallax/agent/"))
            return null;
        boolean measured = Hooks.classMeasured(className);
        Map<String, Mpj.Routine> mpj = Mpj.of(className, loader);
        if (!measured && mpj == null)
            return null;
        long t0 = System.nanoTime();
        try {
            ClassReader reader = new ClassReader(bytes);
            ClassWriter writer = new ClassWriter(ClassWriter.COMPUTE_MAXS);
            ClassHook hook = new ClassHook(writer, measured, mpj);
            reader.accept(hook, ClassReader.EXPAND_FRAMES);
            if (hook.methods == 0 && hook.mpjMethods == 0)
                return null;
            byte[] out = writer.toByteArray();
            if (hook.methods > 0)
                Hooks.classDone(className.replace('/', '.'), hook.methods, System.nanoTime() - t0, 0);
            return out;
        } catch (Throwable e) {
            if (!warned) {
                warned = true;
                System.err.println("plx: class " + className + " left unmeasured: " + e);
            }
            Hooks.classDone(className.replace('/', '.'), 0, System.nanoTime() - t0, 1);
            return null;
        }
    }

    private static final class ClassHook extends ClassVisitor {
        final boolean measured;
        final Map<String, Mpj.Routine> mpj;
        String owner;
        boolean frames;
        int methods, mpjMethods;

        ClassHook(ClassVisitor next, boolean measured, Map<String, Mpj.Routine> mpj) {
            super(Opcodes.ASM9, next);
            this.measured = measured;
            this.mpj = mpj;
        }

        @Override
        public void visit(int version, int access, String name, String signature, String superName,
                          String[] interfaces) {
            owner = name;
            frames = (version & 0xFFFF) >= Opcodes.V1_7;
            super.visit(version, access, name, signature, superName, interfaces);
        }

        @Override
        public MethodVisitor visitMethod(int access, String name, String desc, String signature,
                                         String[] exceptions) {
            MethodVisitor mv = super.visitMethod(access, name, desc, signature, exceptions);
            if ((access & (Opcodes.ACC_ABSTRACT | Opcodes.ACC_NATIVE | Opcodes.ACC_BRIDGE)) != 0)
                return mv;
            Mpj.Routine routine = mpj != null ? mpj.get(name + desc) : null;
            /* MPJ's buffer commit reports after the method's exit (its message is the MPI
             * routine's, not the commit's); an MPI routine's hooks run inside the method's. */
            if (routine != null && routine.kind == Mpj.BUFFER) {
                mpjMethods++;
                mv = new Mpj.Hook(mv, routine, 0, frames);
                routine = null;
            }
            int id = measured ? Hooks.method(Names.method(owner, name, desc)) : -1;
            if (id >= 0) {
                methods++;
                mv = new MethodHook(mv, id, name.equals("<init>"), frames);
            }
            int region = routine != null ? Hooks.mpjRoutine(routine.mpiName) : -1;
            if (region >= 0) {
                mpjMethods++;
                mv = new Mpj.Hook(mv, routine, region, frames);
            }
            return mv;
        }
    }

    private static final class MethodHook extends MethodVisitor {
        private final int id;
        private final boolean frames;
        private boolean covering; /* the handler's range has begun */
        private int pendingNews;  /* in a constructor: NEWs whose <init> call is still to come */
        private final Label start = new Label();
        private final Label end = new Label();
        private final Label onThrow = new Label();
        private final java.util.Set<Label> handlers = new java.util.HashSet<>();
        private boolean inHandler; /* a handler's label seen: its first instruction is next */

        MethodHook(MethodVisitor next, int id, boolean constructor, boolean frames) {
            super(Opcodes.ASM9, next);
            this.id = id;
            this.frames = frames;
            this.pendingNews = constructor ? 0 : -1;
        }

        private void call(String hook) {
            if (id <= Short.MAX_VALUE)
                super.visitIntInsn(Opcodes.SIPUSH, id);
            else
                super.visitLdcInsn(id);
            super.visitMethodInsn(Opcodes.INVOKESTATIC, HOOKS, hook, "(I)V", false);
        }

        @Override
        public void visitTryCatchBlock(Label from, Label to, Label handler, String type) {
            handlers.add(handler);
            super.visitTryCatchBlock(from, to, handler, type);
        }

        @Override
        public void visitLabel(Label label) {
            super.visitLabel(label);
            if (handlers.contains(label))
                inHandler = true;
        }

        /* Before a handler's first instruction (after its label and stack map frame). */
        private void handlerBegins() {
            if (inHandler) {
                inHandler = false;
                call("caught");
            }
        }

        @Override
        public void visitIntInsn(int opcode, int operand) {
            handlerBegins();
            super.visitIntInsn(opcode, operand);
        }

        @Override
        public void visitVarInsn(int opcode, int var) {
            handlerBegins();
            super.visitVarInsn(opcode, var);
        }

        @Override
        public void visitFieldInsn(int opcode, String owner, String name, String desc) {
            handlerBegins();
            super.visitFieldInsn(opcode, owner, name, desc);
        }

        @Override
        public void visitInvokeDynamicInsn(String name, String desc, org.objectweb.asm.Handle bsm,
                                           Object... args) {
            handlerBegins();
            super.visitInvokeDynamicInsn(name, desc, bsm, args);
        }

        @Override
        public void visitJumpInsn(int opcode, Label label) {
            handlerBegins();
            super.visitJumpInsn(opcode, label);
        }

        @Override
        public void visitLdcInsn(Object value) {
            handlerBegins();
            super.visitLdcInsn(value);
        }

        @Override
        public void visitIincInsn(int var, int increment) {
            handlerBegins();
            super.visitIincInsn(var, increment);
        }

        @Override
        public void visitTableSwitchInsn(int min, int max, Label dflt, Label... labels) {
            handlerBegins();
            super.visitTableSwitchInsn(min, max, dflt, labels);
        }

        @Override
        public void visitLookupSwitchInsn(Label dflt, int[] keys, Label[] labels) {
            handlerBegins();
            super.visitLookupSwitchInsn(dflt, keys, labels);
        }

        @Override
        public void visitMultiANewArrayInsn(String desc, int dims) {
            handlerBegins();
            super.visitMultiANewArrayInsn(desc, dims);
        }

        @Override
        public void visitCode() {
            super.visitCode();
            call("enter");
            if (pendingNews < 0)
                begin();
        }

        private void begin() {
            covering = true;
            super.visitLabel(start);
        }

        @Override
        public void visitTypeInsn(int opcode, String type) {
            handlerBegins();
            super.visitTypeInsn(opcode, type);
            if (opcode == Opcodes.NEW && pendingNews >= 0 && !covering)
                pendingNews++;
        }

        @Override
        public void visitMethodInsn(int opcode, String owner, String name, String desc, boolean itf) {
            handlerBegins();
            if (opcode == Opcodes.INVOKEVIRTUAL && desc.equals("()V")
                    && (name.equals("notify") || name.equals("notifyAll"))) {
                /* Object's final notify: its receiver, once more, to the runtime first */
                super.visitInsn(Opcodes.DUP);
                super.visitMethodInsn(Opcodes.INVOKESTATIC, HOOKS, "notified", "(Ljava/lang/Object;)V", false);
            }
            super.visitMethodInsn(opcode, owner, name, desc, itf);
            if (opcode == Opcodes.INVOKESPECIAL && name.equals("<init>") && !covering && pendingNews >= 0) {
                if (pendingNews == 0)
                    begin(); /* the super() or this() call: `this` is initialized from here */
                else
                    pendingNews--;
            }
        }

        @Override
        public void visitInsn(int opcode) {
            handlerBegins();
            if (opcode >= Opcodes.IRETURN && opcode <= Opcodes.RETURN)
                call("exit");
            super.visitInsn(opcode);
        }

        @Override
        public void visitMaxs(int maxStack, int maxLocals) {
            if (covering) {
                /* Last in the exception table: the method's own handlers are searched first. */
                super.visitLabel(end);
                super.visitTryCatchBlock(start, end, onThrow, null);
                super.visitLabel(onThrow);
                if (frames)
                    super.visitFrame(Opcodes.F_NEW, 0, new Object[0], 1, new Object[] {"java/lang/Throwable"});
                call("exit");
                super.visitInsn(Opcodes.ATHROW);
            }
            super.visitMaxs(maxStack, maxLocals);
        }
    }
}
