/* Shared by the JVM adapter's files: frame keys, and the functions between them. */
#ifndef PLX_JVM_H
#define PLX_JVM_H

#include "../../core/hotpath.h"

#include <jni.h>
#include <jvmti.h>

#define JNI_EXPORT_PLX __attribute__((visibility("default")))

/* A Java method's frame key: its region id with bit 62 set (function addresses stay below
 * 2^47; user regions set bit 63, as in api.c). */
#define JAVA_KEY(id) ((uintptr_t)(uint32_t)(id) | ((uintptr_t)1 << 62))
#define JAVA_IS_KEY(k) (((k) >> 62) == 1)
#define USER_KEY(id) ((uintptr_t)(id) | ((uintptr_t)1 << 63))

/* hooks.c: the thread's experiment name from Java, once set no longer read from Thread. */
PLX_HIDDEN void plx_jvm_name_thread(struct plx_thread *t, const char *name);
/* classes.c: whether a class (internal name) is rewritten; a rewritten class's cost. */
PLX_HIDDEN int plx_jvm_class_filter(const char *internal_name);
PLX_HIDDEN void plx_jvm_class_record(const char *name, uint32_t methods, uint64_t nanos,
                                     uint32_t flags);
/* jvmti.c: how many frames of the Java method calling `hook` (a native of Hooks, skipped) the
 * calling thread's stack holds, that one included; -1 without the JVMTI agent. Allocates. */
PLX_HIDDEN int plx_jvm_frames_of_caller(jmethodID hook);
/* monitors.c: asks for the monitor capabilities and sets its callbacks (before the JVMTI
 * environment's SetEventCallbacks), enables its events after; names a Java thread's monitor
 * owner by the plx thread that runs it (called on the thread itself, as it starts). */
PLX_HIDDEN void plx_jvm_monitors_callbacks(jvmtiEnv *jvmti, jvmtiEventCallbacks *cb);
PLX_HIDDEN void plx_jvm_monitors_enable(jvmtiEnv *jvmti);
PLX_HIDDEN void plx_jvm_monitor_thread(jvmtiEnv *jvmti, jthread thread);
PLX_HIDDEN void plx_jvm_monitor_thread_end(jvmtiEnv *env, jthread thread);
/* jit.c (with PLX_SAMPLE): asks for the compiled-code capabilities and sets its callbacks
 * (before SetEventCallbacks), enables its events after; at VMInit, the code made before. */
PLX_HIDDEN void plx_jvm_jit_callbacks(jvmtiEnv *jvmti, jvmtiEventCallbacks *cb);
PLX_HIDDEN void plx_jvm_jit_enable(jvmtiEnv *jvmti);
PLX_HIDDEN void plx_jvm_jit_existing(jvmtiEnv *jvmti);
/* vthreads.c: a JVMTI environment of its own for virtual threads (JDK 21 and later), each
 * recorded as a location of its own (Agent_OnLoad). */
PLX_HIDDEN void plx_jvm_vthreads_start(JavaVM *vm);
/* hooks.c: the calling thread's plx_self carries its Java name (a mounted virtual thread's). */
PLX_HIDDEN void plx_jvm_thread_named(void);
/* jvmti.c: the agent jar has bound the natives (Hooks.init). */
PLX_HIDDEN void plx_jvm_agent_started(void);
/* hooks.c: binds every native method of org.parallax.agent.Hooks (`cls`, just prepared) to its
 * function in libplx with RegisterNatives, all or none; 0 when bound. The JVM looks up no JNI
 * name and the agent loads no library (System.load is a restricted method from JDK 24 on). */
PLX_HIDDEN int plx_jvm_bind_hooks(jvmtiEnv *jvmti, JNIEnv *jni, jclass cls);
/* Hooks' natives defined beside the state they use (monitors.c, mpj.c); bound by hooks.c. */
PLX_HIDDEN void JNICALL plx_jvm_notified(JNIEnv *jni, jclass cls, jobject object);
PLX_HIDDEN jint JNICALL plx_jvm_mpj_routine(JNIEnv *env, jclass cls, jstring name);
PLX_HIDDEN void JNICALL plx_jvm_mpj_init(JNIEnv *env, jclass cls, jobject world, jint rank,
                                         jint size, jobject self);
PLX_HIDDEN void JNICALL plx_jvm_mpj_begin(JNIEnv *env, jclass cls, jint region, jint kind,
                                          jobject comm, jobject dt, jint count, jint peer,
                                          jint tag);
PLX_HIDDEN void JNICALL plx_jvm_mpj_buffer(JNIEnv *env, jclass cls, jobject buf);
PLX_HIDDEN void JNICALL plx_jvm_mpj_end(JNIEnv *env, jclass cls, jobject result, jint region,
                                        jint kind, jobject self, jobject sdt, jint scount,
                                        jobject scounts, jobject rdt, jint rcount, jobject rcounts,
                                        jint root);
PLX_HIDDEN void JNICALL plx_jvm_mpj_abort(JNIEnv *env, jclass cls, jint region);

#endif /* PLX_JVM_H */
