/* The JNI half of the Java agent: org.parallax.agent.Hooks' natives, feeding the same per-thread
 * state as the compiler hooks (core/hotpath.h), so Java methods, native code called through JNI
 * and MPI calls made below it form one call path on one thread; the table binding every one of
 * them (RegisterNatives, as the JVMTI agent sees Hooks prepared: jvmti.c).
 *
 * Invariants: enter/exit are the hot path (no allocation, lock or system call beyond the clock);
 * a Java frame's key is its region id tagged with JAVA_KEY, never equal to a function address
 * or a user region's key. A thread's first Java event names it after Thread.getName() (slow
 * path, guard held). */
#include "jvm.h"

#include <string.h>

static PLX_TLS int java_named; /* the calling thread carries its Java name */
static jclass thread_class;
static jmethodID current_thread, get_name;
static jmethodID caught_hook; /* Hooks.caught, skipped when the stack is read */

/* Names the calling thread after its java.lang.Thread; called with the guard held. */
static void name_from_java(JNIEnv *env, struct plx_thread *t)
{
    java_named = 1;
    if (!current_thread)
        return;
    jobject th = (*env)->CallStaticObjectMethod(env, thread_class, current_thread);
    jstring s = th ? (jstring)(*env)->CallObjectMethod(env, th, get_name) : NULL;
    if ((*env)->ExceptionCheck(env)) {
        (*env)->ExceptionClear(env);
        return;
    }
    if (!s)
        return;
    const char *name = (*env)->GetStringUTFChars(env, s, NULL);
    if (name) {
        plx_jvm_name_thread(t, name);
        (*env)->ReleaseStringUTFChars(env, s, name);
    }
    (*env)->DeleteLocalRef(env, s);
    (*env)->DeleteLocalRef(env, th);
}

void plx_jvm_name_thread(struct plx_thread *t, const char *name)
{
    java_named = 1;
    t->java_name = 1;
    plx_thread_set_name(t, name);
}

void plx_jvm_thread_named(void)
{
    java_named = 1;
}

static jint JNICALL hooks_init(JNIEnv *env, jclass cls)
{
    if (!plx_active)
        return 1;
    jclass c = (*env)->FindClass(env, "java/lang/Thread");
    if (c) {
        thread_class = (jclass)(*env)->NewGlobalRef(env, c);
        current_thread = (*env)->GetStaticMethodID(env, c, "currentThread", "()Ljava/lang/Thread;");
        get_name = (*env)->GetMethodID(env, c, "getName", "()Ljava/lang/String;");
    }
    if ((*env)->ExceptionCheck(env)) {
        (*env)->ExceptionClear(env);
        current_thread = NULL;
    }
    caught_hook = (*env)->GetStaticMethodID(env, cls, "caught", "(I)V");
    if ((*env)->ExceptionCheck(env)) {
        (*env)->ExceptionClear(env);
        caught_hook = NULL;
    }
    plx_jvm_agent_started();
    return 0;
}

__attribute__((noinline, cold)) static void enter_slow(JNIEnv *env, jint id)
{
    struct plx_thread *t = plx_thread();
    if (t == NULL) {
        t = plx_self;
        if (t && !t->dead)
            t->lost_events++; /* inside the runtime (a measured method run from our JNI call) */
        return;
    }
    t->guard = 1;
    if (!java_named && env) /* without env (a critical call) the next JNI call names it */
        name_from_java(env, t);
    plx_enter(t, JAVA_KEY(id), (uint32_t)id);
    t->guard = 0;
}

static inline __attribute__((always_inline)) void enter(JNIEnv *env, jint id)
{
    struct plx_thread *t = plx_self;
    if (PLX_UNLIKELY(t == NULL || t->guard || !java_named)) {
        enter_slow(env, id);
        return;
    }
    t->guard = 1;
    atomic_signal_fence(memory_order_seq_cst);
    plx_enter(t, JAVA_KEY(id), (uint32_t)id);
    atomic_signal_fence(memory_order_seq_cst);
    t->guard = 0;
}

static void JNICALL hooks_enter(JNIEnv *env, jclass cls, jint id)
{
    (void)cls;
    enter(env, id);
}

/* The JVM's critical native (-XX:+CriticalJNINatives, JDK 17 and earlier): called from compiled
 * code without the JNI transition. The JVM finds it by this name in the library holding the
 * method's bound native (hooks_enter), hence exported. */
JNIEXPORT void JNICALL JavaCritical_org_parallax_agent_Hooks_enter(jint id)
{
    enter(NULL, id);
}

/* The innermost frame is not this method's: the methods above it were left by an exception
 * without a handler of ours (constructors), or its entry was not recorded. Java frames above
 * it are closed at `now`; anything else leaves the stack as it is. */
__attribute__((noinline, cold)) static void exit_unwind(struct plx_thread *t, uintptr_t key,
                                                         uint64_t now)
{
    uint32_t d = t->depth;
    while (d > 0 && t->stack[d - 1].key != key && JAVA_IS_KEY(t->stack[d - 1].key))
        d--;
    if (d == 0 || t->stack[d - 1].key != key) {
        t->lost_events++;
        return;
    }
    t->guard = 1;
    while (t->depth >= d)
        plx_leave(t, &t->stack[t->depth - 1], now);
    t->guard = 0;
}

static inline __attribute__((always_inline)) void leave(jint id)
{
    uint64_t now = plx_ticks();
    struct plx_thread *t = plx_self;
    if (PLX_UNLIKELY(t == NULL || t->guard))
        return;
    if (PLX_UNLIKELY(t->overflow)) { /* deeper than the stack: its entry was counted, not pushed */
        t->overflow--;
        return;
    }
    if (PLX_UNLIKELY(t->depth == 0))
        return;
    struct plx_frame *f = &t->stack[t->depth - 1];
    if (PLX_UNLIKELY(f->key != JAVA_KEY(id))) {
        exit_unwind(t, JAVA_KEY(id), now);
        return;
    }
    t->guard = 1;
    atomic_signal_fence(memory_order_seq_cst);
    plx_leave(t, f, now);
    atomic_signal_fence(memory_order_seq_cst);
    t->guard = 0;
}

static void JNICALL hooks_exit(JNIEnv *env, jclass cls, jint id)
{
    (void)env;
    (void)cls;
    leave(id);
}

JNIEXPORT void JNICALL JavaCritical_org_parallax_agent_Hooks_exit(jint id)
{
    leave(id);
}

/* The index + 1 in the thread's stack of method `id`'s live frame: its `live`-th frame from the
 * bottom, or its innermost when `live` is negative; 0 when there is none. */
static uint32_t live_frame(const struct plx_thread *t, uintptr_t key, int live)
{
    if (live < 0) {
        for (uint32_t d = t->depth; d > 0; d--)
            if (t->stack[d - 1].key == key)
                return d;
        return 0;
    }
    int seen = 0;
    for (uint32_t d = 0; d < t->depth; d++)
        if (t->stack[d].key == key && ++seen == live)
            return d + 1;
    return 0;
}

/* A handler of method `id` begins (the program catches an exception, or runs a finally block
 * on one): every frame above that method's live frame is gone, closed now, those whose exit
 * hook could not run included (a StackOverflowError: the catch-all handler's own call of
 * Hooks.exit overflows too). With a recursive method the JVM's count of its frames on the
 * stack (JVMTI) tells which of its frames is live; without the JVMTI agent, the innermost. */
static void JNICALL hooks_caught(JNIEnv *env, jclass cls, jint id)
{
    (void)env;
    (void)cls;
    uint64_t now = plx_ticks();
    struct plx_thread *t = plx_self;
    if (t == NULL || t->guard || t->dead || t->depth == 0)
        return;
    t->guard = 1;
    uint32_t d = live_frame(t, JAVA_KEY(id), plx_jvm_frames_of_caller(caught_hook));
    if (d) {
        t->overflow = 0; /* entries deeper than the stack were above the method's frame */
        while (t->depth > d)
            plx_leave(t, &t->stack[t->depth - 1], now);
    }
    t->guard = 0;
}

/* ---- class rewriting (slow path: once per method and class) -------------------------------- */

static jint JNICALL hooks_method(JNIEnv *env, jclass cls, jstring name)
{
    (void)cls;
    const char *s = (*env)->GetStringUTFChars(env, name, NULL);
    if (!s)
        return -1;
    struct plx_thread *t = plx_self;
    if (t)
        t->guard++;
    jint id = -1;
    if (!plx_filter_excludes(s, NULL)) {
        uint32_t v = plx_region_of_text(s, PLX_KIND_JAVA);
        if (!(v & PLX_REGION_EXCLUDED))
            id = (jint)(v & PLX_REGION_ID_MASK);
    }
    if (t)
        t->guard--;
    (*env)->ReleaseStringUTFChars(env, name, s);
    return id;
}

static jboolean JNICALL hooks_class_measured(JNIEnv *env, jclass cls, jstring name)
{
    (void)cls;
    const char *s = (*env)->GetStringUTFChars(env, name, NULL);
    if (!s)
        return JNI_FALSE;
    int measured = plx_jvm_class_filter(s);
    (*env)->ReleaseStringUTFChars(env, name, s);
    return measured ? JNI_TRUE : JNI_FALSE;
}

static void JNICALL hooks_class_done(JNIEnv *env, jclass cls, jstring name, jint methods,
                                     jlong nanos, jint flags)
{
    (void)cls;
    const char *s = (*env)->GetStringUTFChars(env, name, NULL);
    if (!s)
        return;
    plx_jvm_class_record(s, (uint32_t)methods, (uint64_t)nanos, (uint32_t)flags);
    (*env)->ReleaseStringUTFChars(env, name, s);
}

/* ---- user API (org.parallax.Profile) ------------------------------------------------------- */

static void JNICALL hooks_region_begin(JNIEnv *env, jclass cls, jstring name, jint kind)
{
    (void)cls;
    struct plx_thread *t = plx_thread();
    if (!t || !name)
        return;
    const char *s = (*env)->GetStringUTFChars(env, name, NULL);
    if (!s)
        return;
    t->guard++;
    if (!java_named)
        name_from_java(env, t);
    uint32_t v = plx_region_of_text(s, kind == PLX_KIND_PHASE ? PLX_KIND_PHASE : PLX_KIND_USER);
    if (!(v & PLX_REGION_EXCLUDED))
        plx_enter(t, USER_KEY(v & PLX_REGION_ID_MASK), v & PLX_REGION_ID_MASK);
    t->guard--;
    (*env)->ReleaseStringUTFChars(env, name, s);
}

static void JNICALL hooks_region_end(JNIEnv *env, jclass cls, jstring name, jint kind)
{
    (void)cls;
    uint64_t now = plx_ticks();
    struct plx_thread *t = plx_thread();
    if (!t || !name || t->depth == 0)
        return;
    const char *s = (*env)->GetStringUTFChars(env, name, NULL);
    if (!s)
        return;
    t->guard++;
    uint32_t v = plx_region_of_text(s, kind == PLX_KIND_PHASE ? PLX_KIND_PHASE : PLX_KIND_USER);
    struct plx_frame *f = &t->stack[t->depth - 1];
    if (f->key == USER_KEY(v & PLX_REGION_ID_MASK))
        plx_leave(t, f, now);
    else
        t->lost_events++; /* an end that does not match the innermost begin */
    t->guard--;
    (*env)->ReleaseStringUTFChars(env, name, s);
}

static void JNICALL hooks_event(JNIEnv *env, jclass cls, jstring name, jdouble value)
{
    (void)cls;
    struct plx_thread *t = plx_thread();
    if (!t || !name)
        return;
    const char *s = (*env)->GetStringUTFChars(env, name, NULL);
    if (!s)
        return;
    t->guard++;
    plx_uevent_record(t, plx_uevent_id(s), value);
    t->guard--;
    (*env)->ReleaseStringUTFChars(env, name, s);
}

static void JNICALL hooks_thread_name(JNIEnv *env, jclass cls, jstring name)
{
    (void)cls;
    struct plx_thread *t = plx_thread();
    if (!t || !name)
        return;
    const char *s = (*env)->GetStringUTFChars(env, name, NULL);
    if (!s)
        return;
    t->guard++;
    plx_jvm_name_thread(t, s);
    t->guard--;
    (*env)->ReleaseStringUTFChars(env, name, s);
}

/* ---- binding ------------------------------------------------------------------------------- */

#define OBJ "Ljava/lang/Object;"
#define STR "Ljava/lang/String;"

/* Every native method of Hooks (java/agent/.../Hooks.java): name, JNI signature, function. */
static const JNINativeMethod natives[] = {
    {"init", "()I", (void *)hooks_init},
    {"enter", "(I)V", (void *)hooks_enter},
    {"exit", "(I)V", (void *)hooks_exit},
    {"caught", "(I)V", (void *)hooks_caught},
    {"notified", "(" OBJ ")V", (void *)plx_jvm_notified},
    {"method", "(" STR ")I", (void *)hooks_method},
    {"classMeasured", "(" STR ")Z", (void *)hooks_class_measured},
    {"classDone", "(" STR "IJI)V", (void *)hooks_class_done},
    {"mpjRoutine", "(" STR ")I", (void *)plx_jvm_mpj_routine},
    {"mpjBegin", "(II" OBJ OBJ "III)V", (void *)plx_jvm_mpj_begin},
    {"mpjEnd", "(" OBJ "II" OBJ OBJ "I" OBJ OBJ "I" OBJ "I)V", (void *)plx_jvm_mpj_end},
    {"mpjAbort", "(I)V", (void *)plx_jvm_mpj_abort},
    {"mpjInit", "(" OBJ "II" OBJ ")V", (void *)plx_jvm_mpj_init},
    {"mpjBuffer", "(" OBJ ")V", (void *)plx_jvm_mpj_buffer},
    {"regionBegin", "(" STR "I)V", (void *)hooks_region_begin},
    {"regionEnd", "(" STR "I)V", (void *)hooks_region_end},
    {"event", "(" STR "D)V", (void *)hooks_event},
    {"threadName", "(" STR ")V", (void *)hooks_thread_name},
};
#define NNATIVES ((jint)(sizeof natives / sizeof *natives))

/* The number of native methods the class declares; -1 when JVMTI cannot list them. */
static jint natives_declared(jvmtiEnv *jvmti, jclass cls)
{
    jint n = 0, count = 0;
    jmethodID *methods = NULL;
    if ((*jvmti)->GetClassMethods(jvmti, cls, &n, &methods) != JVMTI_ERROR_NONE)
        return -1;
    for (jint i = 0; i < n; i++) {
        jint mods = 0;
        if ((*jvmti)->GetMethodModifiers(jvmti, methods[i], &mods) == JVMTI_ERROR_NONE &&
            (mods & 0x0100)) /* ACC_NATIVE */
            count++;
    }
    (*jvmti)->Deallocate(jvmti, (unsigned char *)methods);
    return count;
}

int plx_jvm_bind_hooks(jvmtiEnv *jvmti, JNIEnv *jni, jclass cls)
{
    /* RegisterNatives fails on a name the class has no native of; the count catches a native
     * the table lacks, which would otherwise throw UnsatisfiedLinkError in a measured method */
    jint declared = natives_declared(jvmti, cls);
    if (declared >= 0 && declared != NNATIVES) {
        plx_warn("the Java agent's class org.parallax.agent.Hooks declares %d native methods, "
                 "libplx binds %d (plx-agent.jar and libplx.so of different builds?): Java "
                 "methods are not measured",
                 (int)declared, (int)NNATIVES);
        return -1;
    }
    if ((*jni)->RegisterNatives(jni, cls, natives, NNATIVES) != JNI_OK) {
        (*jni)->ExceptionClear(jni);
        (*jni)->UnregisterNatives(jni, cls);
        plx_warn("cannot bind the natives of org.parallax.agent.Hooks (plx-agent.jar and "
                 "libplx.so of different builds?): Java methods are not measured");
        return -1;
    }
    return 0;
}
