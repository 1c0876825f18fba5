/* The JNI half of the Java agent: org.parallax.agent.Hooks' natives, feeding the same per-thread
 * state as the compiler hooks (core/hotpath.h), so Java methods, native code called through JNI
 * and MPI calls made below it form one call path on one thread.
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

JNIEXPORT jint JNICALL Java_org_parallax_agent_Hooks_init(JNIEnv *env, jclass cls)
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

JNIEXPORT void JNICALL Java_org_parallax_agent_Hooks_enter(JNIEnv *env, jclass cls, jint id)
{
    (void)cls;
    enter(env, id);
}

/* The JVM's critical native (-XX:+CriticalJNINatives, JDK 17 and earlier; plx run adds it when
 * the JVM has it): called from compiled code without the JNI transition. */
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

JNIEXPORT void JNICALL Java_org_parallax_agent_Hooks_exit(JNIEnv *env, jclass cls, jint id)
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
JNIEXPORT void JNICALL Java_org_parallax_agent_Hooks_caught(JNIEnv *env, jclass cls, jint id)
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

JNIEXPORT jint JNICALL Java_org_parallax_agent_Hooks_method(JNIEnv *env, jclass cls, jstring name)
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

JNIEXPORT jboolean JNICALL Java_org_parallax_agent_Hooks_classMeasured(JNIEnv *env, jclass cls,
                                                                        jstring name)
{
    (void)cls;
    const char *s = (*env)->GetStringUTFChars(env, name, NULL);
    if (!s)
        return JNI_FALSE;
    int measured = plx_jvm_class_filter(s);
    (*env)->ReleaseStringUTFChars(env, name, s);
    return measured ? JNI_TRUE : JNI_FALSE;
}

JNIEXPORT void JNICALL Java_org_parallax_agent_Hooks_classDone(JNIEnv *env, jclass cls,
                                                               jstring name, jint methods,
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

JNIEXPORT void JNICALL Java_org_parallax_agent_Hooks_regionBegin(JNIEnv *env, jclass cls,
                                                                 jstring name, jint kind)
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

JNIEXPORT void JNICALL Java_org_parallax_agent_Hooks_regionEnd(JNIEnv *env, jclass cls,
                                                               jstring name, jint kind)
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

JNIEXPORT void JNICALL Java_org_parallax_agent_Hooks_event(JNIEnv *env, jclass cls, jstring name,
                                                           jdouble value)
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

JNIEXPORT void JNICALL Java_org_parallax_agent_Hooks_threadName(JNIEnv *env, jclass cls,
                                                                jstring name)
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
