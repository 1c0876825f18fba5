/* Virtual threads (JDK 21 and later): each virtual thread is a location of its own
 * (plx_location_new), made at its JVMTI VirtualThreadStart and written at its VirtualThreadEnd.
 * The carrier thread that mounts it makes that location its plx_self from HotSpot's
 * VirtualThreadMount extension event to its VirtualThreadUnmount, and takes its own back after:
 * the hooks record a virtual thread's methods into its own stack and callpath tree whichever
 * carrier runs it, and a virtual thread parked with open frames keeps them open, apart from the
 * virtual thread mounted next on the same carrier. The hot path is the same: it reads plx_self.
 *
 * Invariants: the events run on the carrier, in the virtual thread's context, with none of the
 * runtime's frames on the stack (a virtual thread inside a native method is pinned: it never
 * unmounts there); a virtual thread's location is in this module's own JVMTI environment's
 * thread-local storage of the virtual thread (the first environment's is the monitors' thread
 * index); `carrier` is the carrier's own plx_self while `mounted`, the location of the
 * virtual thread it runs, is its plx_self. Written
 * against JDK 17's jvmti.h: the JDK 21 events and capability by their numbers. */
#include "jvm.h"

#include <stdio.h>
#include <string.h>

#define EVENT_VIRTUAL_THREAD_START 87
#define EVENT_VIRTUAL_THREAD_END 88
#define FIRST_EVENT 50 /* JVMTI_EVENT_VM_INIT: the callbacks' first slot */
#define CAN_SUPPORT_VIRTUAL_THREADS_BIT 44 /* its bit in jvmtiCapabilities */

static PLX_TLS struct plx_thread *carrier, *mounted;

static struct plx_thread *location_of(jvmtiEnv *env, jthread vthread)
{
    void *p = NULL;
    if (!vthread || (*env)->GetThreadLocalStorage(env, vthread, &p) != JVMTI_ERROR_NONE)
        return NULL;
    return p;
}

/* The virtual thread's name: Thread.getName(), or `virtual#ID` (Thread.threadId) when empty,
 * as virtual threads are by default. */
static void name_of(jvmtiEnv *env, JNIEnv *jni, jthread vthread, char *out, size_t size)
{
    jvmtiThreadInfo info;
    memset(&info, 0, sizeof info);
    out[0] = 0;
    if ((*env)->GetThreadInfo(env, vthread, &info) == JVMTI_ERROR_NONE && info.name) {
        snprintf(out, size, "%s", info.name);
        (*env)->Deallocate(env, (unsigned char *)info.name);
    }
    (*jni)->DeleteLocalRef(jni, info.thread_group);
    (*jni)->DeleteLocalRef(jni, info.context_class_loader);
    if (out[0])
        return;
    jclass c = (*jni)->GetObjectClass(jni, vthread);
    jmethodID id = c ? (*jni)->GetMethodID(jni, c, "threadId", "()J") : NULL;
    jlong tid = id ? (*jni)->CallLongMethod(jni, vthread, id) : -1;
    if ((*jni)->ExceptionCheck(jni)) {
        (*jni)->ExceptionClear(jni);
        tid = -1;
    }
    (*jni)->DeleteLocalRef(jni, c);
    snprintf(out, size, "virtual#%lld", (long long)tid);
}

static void JNICALL vthread_start(jvmtiEnv *env, JNIEnv *jni, jthread vthread)
{
    struct plx_thread *self = plx_self;
    if (self)
        self->guard++;
    char name[64];
    name_of(env, jni, vthread, name, sizeof name);
    struct plx_thread *t = plx_location_new(name);
    if (t)
        (*env)->SetThreadLocalStorage(env, vthread, t);
    if (self)
        self->guard--;
}

static void unmount(void)
{
    /* the process end may have made plx_self the dead state meanwhile: it stays */
    if (plx_self == mounted)
        plx_self = carrier;
    mounted = carrier = NULL;
}

static void JNICALL vthread_unmount(jvmtiEnv *env, JNIEnv *jni, jthread vthread)
{
    (void)env;
    (void)jni;
    (void)vthread;
    if (mounted)
        unmount();
}

static void JNICALL vthread_mount(jvmtiEnv *env, JNIEnv *jni, jthread vthread)
{
    (void)jni;
    struct plx_thread *t = location_of(env, vthread);
    if (!t || mounted)
        return;
    carrier = plx_self;
    mounted = t;
    plx_self = t;
    plx_jvm_thread_named(); /* the location carries the virtual thread's name */
}

/* HotSpot posts the virtual thread's last unmount before its end. */
static void JNICALL vthread_end(jvmtiEnv *env, JNIEnv *jni, jthread vthread)
{
    (void)jni;
    struct plx_thread *t = location_of(env, vthread);
    if (!t)
        return;
    if (mounted == t)
        unmount();
    (*env)->SetThreadLocalStorage(env, vthread, NULL);
    plx_location_end(t, plx_ticks());
}

/* HotSpot's extension event `id` delivered to `fn` and enabled (by its index, as an event);
 * 0 when this JVM has no such event. */
static int extension_event(jvmtiEnv *env, const char *id, void (*fn)(jvmtiEnv *, JNIEnv *, jthread))
{
    jint n = 0;
    jvmtiExtensionEventInfo *events = NULL;
    if ((*env)->GetExtensionEvents(env, &n, &events) != JVMTI_ERROR_NONE)
        return 0;
    int found = 0;
    for (jint i = 0; i < n; i++) {
        jint index = events[i].extension_event_index;
        if (!found && strcmp(events[i].id, id) == 0)
            found = (*env)->SetExtensionEventCallback(env, index, (jvmtiExtensionEvent)(void *)fn) ==
                        JVMTI_ERROR_NONE &&
                    (*env)->SetEventNotificationMode(env, JVMTI_ENABLE, (jvmtiEvent)index, NULL) ==
                        JVMTI_ERROR_NONE;
        for (jint p = 0; p < events[i].param_count; p++)
            (*env)->Deallocate(env, (unsigned char *)events[i].params[p].name);
        (*env)->Deallocate(env, (unsigned char *)events[i].params);
        (*env)->Deallocate(env, (unsigned char *)events[i].id);
        (*env)->Deallocate(env, (unsigned char *)events[i].short_description);
    }
    (*env)->Deallocate(env, (unsigned char *)events);
    return found;
}

void plx_jvm_vthreads_start(JavaVM *vm)
{
    jvmtiEnv *env = NULL;
    if ((*vm)->GetEnv(vm, (void **)&env, JVMTI_VERSION_1_2) != JNI_OK)
        return;
    jvmtiCapabilities caps;
    memset(&caps, 0, sizeof caps);
    ((unsigned char *)&caps)[CAN_SUPPORT_VIRTUAL_THREADS_BIT / 8] |=
        (unsigned char)(1u << (CAN_SUPPORT_VIRTUAL_THREADS_BIT % 8));
    if ((*env)->AddCapabilities(env, &caps) != JVMTI_ERROR_NONE) {
        (*env)->DisposeEnvironment(env); /* a JVM before JDK 21: no virtual threads */
        return;
    }
    void *cb[EVENT_VIRTUAL_THREAD_END - FIRST_EVENT + 1];
    memset(cb, 0, sizeof cb);
    cb[EVENT_VIRTUAL_THREAD_START - FIRST_EVENT] = (void *)vthread_start;
    cb[EVENT_VIRTUAL_THREAD_END - FIRST_EVENT] = (void *)vthread_end;
    if ((*env)->SetEventCallbacks(env, (const jvmtiEventCallbacks *)(void *)cb,
                                  (jint)sizeof cb) != JVMTI_ERROR_NONE ||
        !extension_event(env, "com.sun.hotspot.events.VirtualThreadMount", vthread_mount) ||
        !extension_event(env, "com.sun.hotspot.events.VirtualThreadUnmount", vthread_unmount)) {
        plx_warn("JVMTI: no virtual thread mount events; a virtual thread's methods are "
                 "recorded on its carrier thread");
        (*env)->DisposeEnvironment(env);
        return;
    }
    (*env)->SetEventNotificationMode(env, JVMTI_ENABLE, EVENT_VIRTUAL_THREAD_START, NULL);
    (*env)->SetEventNotificationMode(env, JVMTI_ENABLE, EVENT_VIRTUAL_THREAD_END, NULL);
}
