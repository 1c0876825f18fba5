/* The JVMTI half of the agent (-agentpath:libplx.so, added by plx run): the agent jar's natives
 * bound as its class Hooks is prepared (hooks.c's table), Java threads named by
 * Thread.getName() from their start, every JVM thread listed (JavaThread records: at the JVM's
 * start, at each thread start and at the JVM's end, measured code or not), and garbage
 * collections as regions of the thread running them (the JVM's VM thread), so a method's time
 * that was a collection shows as such; with sampling, the compiled code's ranges (jit.c). */
#include "jvm.h"

#include <jvmti.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static jvmtiEnv *jvmti;
static uint32_t gc_region = PLX_NO_INDEX;
#define GC_KEY ((uintptr_t)3 << 62)

enum { SEEN_VM_START = 1, SEEN_STARTING = 2, SEEN_VM_END = 4 };

static void list_thread(const char *name, uint32_t flags)
{
    struct plx_thread *t = plx_self;
    if (t)
        t->guard++;
    struct plx_rec rec;
    plx_rec_init(&rec);
    plx_enc_java_thread(&rec, flags, name);
    plx_rec_write(&rec, 0);
    if (t)
        t->guard--;
}

/* Every live Java thread of the JVM now, as JavaThread records. */
static void list_all(jvmtiEnv *env, JNIEnv *jni, uint32_t flags)
{
    jint n = 0;
    jthread *threads = NULL;
    if ((*env)->GetAllThreads(env, &n, &threads) != JVMTI_ERROR_NONE)
        return;
    for (jint i = 0; i < n; i++) {
        jvmtiThreadInfo info;
        memset(&info, 0, sizeof info);
        if ((*env)->GetThreadInfo(env, threads[i], &info) == JVMTI_ERROR_NONE && info.name) {
            list_thread(info.name, flags);
            (*env)->Deallocate(env, (unsigned char *)info.name);
        }
        if (jni) {
            (*jni)->DeleteLocalRef(jni, info.thread_group);
            (*jni)->DeleteLocalRef(jni, info.context_class_loader);
            (*jni)->DeleteLocalRef(jni, threads[i]);
        }
    }
    (*env)->Deallocate(env, (unsigned char *)threads);
}

int plx_jvm_frames_of_caller(jmethodID hook)
{
    jint n = 0;
    if (!jvmti || (*jvmti)->GetFrameCount(jvmti, NULL, &n) != JVMTI_ERROR_NONE || n <= 0)
        return -1;
    jvmtiFrameInfo *frames = malloc((size_t)n * sizeof *frames);
    jint got = 0;
    if (!frames || (*jvmti)->GetStackTrace(jvmti, NULL, 0, n, frames, &got) != JVMTI_ERROR_NONE) {
        free(frames);
        return -1;
    }
    jint i = 0;
    while (i < got && frames[i].method == hook)
        i++;
    int count = 0;
    for (jint j = i; j < got; j++)
        count += frames[j].method == frames[i].method;
    free(frames);
    return i < got ? count : -1;
}

/* The first class org.parallax.agent.Hooks prepared (the agent jar's, by the boot loader) gets
 * its natives before any of its code runs; the event is turned off after it. */
static void JNICALL class_prepare(jvmtiEnv *env, JNIEnv *jni, jthread thread, jclass klass)
{
    (void)thread;
    static atomic_int bound;
    char *sig = NULL;
    if (atomic_load(&bound) ||
        (*env)->GetClassSignature(env, klass, &sig, NULL) != JVMTI_ERROR_NONE)
        return;
    if (strcmp(sig, "Lorg/parallax/agent/Hooks;") == 0 && !atomic_exchange(&bound, 1)) {
        (*env)->SetEventNotificationMode(env, JVMTI_DISABLE, JVMTI_EVENT_CLASS_PREPARE, NULL);
        plx_jvm_bind_hooks(env, jni, klass);
    }
    (*env)->Deallocate(env, (unsigned char *)sig);
}

static void JNICALL vm_init(jvmtiEnv *env, JNIEnv *jni, jthread thread)
{
    plx_jvm_monitor_thread(env, thread);
    plx_jvm_jit_existing(env);
    list_all(env, jni, SEEN_VM_START);
}

static void JNICALL vm_death(jvmtiEnv *env, JNIEnv *jni)
{
    list_all(env, jni, SEEN_VM_END);
}

static void JNICALL thread_start(jvmtiEnv *env, JNIEnv *jni, jthread thread)
{
    (void)jni;
    jvmtiThreadInfo info;
    if ((*env)->GetThreadInfo(env, thread, &info) != JVMTI_ERROR_NONE)
        return;
    plx_jvm_monitor_thread(env, thread);
    if (info.name)
        list_thread(info.name, SEEN_STARTING);
    /* A thread attached again keeps its first name (the launcher's main thread re-attaches as
     * DestroyJavaVM to wait for the others). */
    struct plx_thread *t = plx_thread();
    if (t && info.name && !t->java_name) {
        t->guard++;
        plx_jvm_name_thread(t, info.name);
        t->guard--;
    }
    if (info.name)
        (*env)->Deallocate(env, (unsigned char *)info.name);
}

static void JNICALL thread_end(jvmtiEnv *env, JNIEnv *jni, jthread thread)
{
    (void)jni;
    plx_jvm_monitor_thread_end(env, thread);
    /* renamed since it started (Thread.setName; the JVM's native name holds 15 characters,
     * and only of the thread itself): the thread is its last name. The launcher's thread
     * attached again as DestroyJavaVM keeps `main`. (JVMTI's thread-local storage is the
     * monitors' thread index: monitors.c.) */
    jvmtiThreadInfo info;
    struct plx_thread *t = plx_self;
    if (!t || t->dead || (*env)->GetThreadInfo(env, thread, &info) != JVMTI_ERROR_NONE)
        return;
    if (info.name && strcmp(info.name, "DestroyJavaVM") != 0 &&
        strncmp(info.name, t->name, sizeof t->name - 1) != 0) {
        t->guard++;
        plx_jvm_name_thread(t, info.name);
        t->guard--;
    }
    if (info.name)
        (*env)->Deallocate(env, (unsigned char *)info.name);
}

/* Runs on the VM thread at a safepoint: only the runtime's own code, no JNI. */
static void JNICALL gc_start(jvmtiEnv *env)
{
    (void)env;
    struct plx_thread *t = plx_thread();
    if (!t || gc_region == PLX_NO_INDEX)
        return;
    t->guard++;
    if (!t->java_name) { /* the JVM's own thread: its native name ("VM Thread") */
        char name[64];
        if (pthread_getname_np(pthread_self(), name, sizeof name) == 0 && name[0])
            plx_jvm_name_thread(t, name);
    }
    plx_enter(t, GC_KEY, gc_region);
    t->guard--;
}

static void JNICALL gc_finish(jvmtiEnv *env)
{
    (void)env;
    uint64_t now = plx_ticks();
    struct plx_thread *t = plx_self;
    if (!t || t->guard || t->depth == 0 || t->stack[t->depth - 1].key != GC_KEY)
        return;
    t->guard++;
    plx_leave(t, &t->stack[t->depth - 1], now);
    t->guard--;
}

/* The measuring part of the agent (an experiment is written): its capabilities and callbacks;
 * whether collections can be recorded. */
static int measure_callbacks(jvmtiEventCallbacks *cb)
{
    jvmtiCapabilities caps;
    memset(&caps, 0, sizeof caps);
    caps.can_generate_garbage_collection_events = 1;
    int gc = (*jvmti)->AddCapabilities(jvmti, &caps) == JVMTI_ERROR_NONE;
    cb->ThreadStart = thread_start;
    cb->ThreadEnd = thread_end;
    cb->VMInit = vm_init;
    cb->VMDeath = vm_death;
    cb->GarbageCollectionStart = gc_start;
    cb->GarbageCollectionFinish = gc_finish;
    plx_jvm_monitors_callbacks(jvmti, cb);
    plx_jvm_jit_callbacks(jvmti, cb);
    return gc;
}

static void measure_enable(JavaVM *vm, int gc)
{
    plx_jvm_monitors_enable(jvmti);
    plx_jvm_jit_enable(jvmti);
    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_THREAD_START, NULL);
    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_THREAD_END, NULL);
    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_VM_INIT, NULL);
    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_VM_DEATH, NULL);
    if (gc) {
        gc_region = plx_region_of_name("(garbage collection)", PLX_KIND_JAVA) & PLX_REGION_ID_MASK;
        (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE,
                                           JVMTI_EVENT_GARBAGE_COLLECTION_START, NULL);
        (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE,
                                           JVMTI_EVENT_GARBAGE_COLLECTION_FINISH, NULL);
    } else {
        plx_warn("JVMTI: no garbage collection events; collections are not recorded");
    }
    plx_jvm_vthreads_start(vm);
}

/* The agent jar's natives are bound whether an experiment is written or not (Hooks.init then
 * tells the agent to rewrite no class); the rest of the agent runs only when one is. */
JNI_EXPORT_PLX jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    (void)options;
    (void)reserved;
    jvmtiEnv *env = NULL;
    if ((*vm)->GetEnv(vm, (void **)&env, JVMTI_VERSION_1_2) != JNI_OK) {
        if (plx_active)
            plx_warn("JVMTI is not available: Java methods, threads and collections are not "
                     "recorded");
        return 0;
    }
    jvmtiEventCallbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.ClassPrepare = class_prepare;
    int gc = 0;
    if (plx_active) {
        jvmti = env;
        gc = measure_callbacks(&cb);
    }
    (*env)->SetEventCallbacks(env, &cb, sizeof cb);
    (*env)->SetEventNotificationMode(env, JVMTI_ENABLE, JVMTI_EVENT_CLASS_PREPARE, NULL);
    if (plx_active)
        measure_enable(vm, gc);
    return 0;
}

void plx_jvm_agent_started(void)
{
}
