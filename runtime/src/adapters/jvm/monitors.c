/* Java monitors through JVMTI: a thread blocked entering a `synchronized` block or method held
 * by another thread (MonitorContendedEnter/Entered), and a thread in Object.wait until notified
 * (MonitorWait/Waited), recorded as acquire events of sync objects of kind monitor and monitor
 * wait. The owner of a contended monitor is read when the wait begins (GetObjectMonitorUsage)
 * and named by the plx thread that runs it: each Java thread's JVMTI thread-local storage holds
 * 1 + its Thread index, set on the thread itself as it starts. A monitor is keyed by its
 * identity hash code (objects move), with the top bits set apart from real addresses. Only
 * contended entries and waits call in here, never an uncontended `synchronized`. The JVM's own
 * pthread calls inside a monitor wait (its locks, its waits) are that wait: not traced apart
 * (java_blocked).
 * JVMTI has no event for Object.notify: the agent calls Hooks.notified before each
 * notify/notifyAll call site of the classes it rewrites, a release of the object's monitor-wait
 * object, so that a wait's cause is the notifying thread where it notified. Thread.join waits
 * in Object.wait on the Thread object, which the JVM notifies as the thread ends: a wait on a
 * Thread object is recorded as a join, an acquire of that thread's Java thread object (keyed by
 * the Thread object's identity hash code: the joiner may wait before the thread has started to
 * run, and after it ended), which the thread releases at its JVMTI ThreadEnd (posted on it
 * before the JVM wakes its joiners).
 * Each object is named on first sight (plx_sync_define_named): a monitor by its object's class
 * (`java.util.ArrayList`), a Thread object by its Thread name. JVMTI has no event for a
 * monitor's exit nor for an uncontended entry: a monitor's hold time is not measured. */
#include "jvm.h"

#include <stdio.h>
#include <string.h>

#define MONITOR_KEY(hash) ((const void *)(((uintptr_t)0x7F << 56) | (uint32_t)(hash)))
/* A Java thread's thread object (Thread.join), by its Thread object's identity hash code. */
#define JTHREAD_KEY(hash) ((const void *)(((uintptr_t)0x7E << 56) | (uint32_t)(hash)))

/* The JVMTI environment whose monitor events are on (for the identity hash of notified objects). */
static jvmtiEnv *monitors_env;

/* Owned by the thread: the start of its current contended entry or wait, and the owner then. */
static PLX_TLS uint64_t wait_start;
static PLX_TLS uint32_t wait_holder;
/* The current Object.wait is on a Thread object (a Thread.join). */
static PLX_TLS int wait_joined;
/* java.lang.Thread (a global reference, taken at the first wait). */
static jclass thread_class;

void plx_jvm_monitor_thread(jvmtiEnv *jvmti, jthread thread)
{
    struct plx_thread *t = plx_thread();
    if (t && jvmti)
        (*jvmti)->SetThreadLocalStorage(jvmti, thread, (const void *)(uintptr_t)(t->index + 1));
}

/* `java.util.ArrayList` from the class signature `Ljava/util/ArrayList;`, `int[][]` from
 * `[[I`. */
static void type_name(const char *sig, char *out, size_t cap)
{
    static const char prim[] = "BbyteCcharDdoubleFfloatIintJlongSshortZboolean";
    size_t dims = strspn(sig, "["), n = 0;
    const char *p = sig + dims;
    if (*p == 'L') {
        for (p++; *p && *p != ';' && n + 1 < cap; p++)
            out[n++] = *p == '/' ? '.' : *p;
    } else {
        const char *q = *p ? strchr(prim, *p) : NULL;
        for (q = q ? q + 1 : "?"; *q >= 'a' && *q <= 'z' && n + 1 < cap; q++)
            out[n++] = *q;
    }
    for (; dims > 0 && n + 3 < cap; dims--, n += 2)
        memcpy(out + n, "[]", 2);
    out[n] = 0;
}

/* Names the object `key` stands for on first sight: a monitor by its object's class, a Thread
 * object (`thread_object`) by its Thread name. */
static void name_object(jvmtiEnv *env, JNIEnv *jni, const void *key, int kind, jobject object,
                        int thread_object)
{
    if (!object || plx_sync_known(key))
        return;
    char name[256] = "";
    if (thread_object) {
        jvmtiThreadInfo info;
        memset(&info, 0, sizeof info);
        if ((*env)->GetThreadInfo(env, object, &info) == JVMTI_ERROR_NONE && info.name) {
            snprintf(name, sizeof name, "%s", info.name);
            (*env)->Deallocate(env, (unsigned char *)info.name);
        }
    } else if (jni) {
        jclass c = (*jni)->GetObjectClass(jni, object);
        char *sig = NULL;
        if (c && (*env)->GetClassSignature(env, c, &sig, NULL) == JVMTI_ERROR_NONE && sig) {
            type_name(sig, name, sizeof name);
            (*env)->Deallocate(env, (unsigned char *)sig);
        }
        if (c)
            (*jni)->DeleteLocalRef(jni, c);
    }
    if (name[0])
        plx_sync_define_named(key, kind, name);
}

/* The measured thread a Thread object runs (1 + its index), 0 if none. */
static uint32_t thread_of(jvmtiEnv *env, jthread thread)
{
    void *index = NULL;
    if ((*env)->GetThreadLocalStorage(env, thread, &index) != JVMTI_ERROR_NONE)
        return 0;
    return (uint32_t)(uintptr_t)index;
}

static uint32_t owner_of(jvmtiEnv *env, jobject object)
{
    jvmtiMonitorUsage u;
    memset(&u, 0, sizeof u);
    if ((*env)->GetObjectMonitorUsage(env, object, &u) != JVMTI_ERROR_NONE)
        return 0;
    uint32_t owner = u.owner ? thread_of(env, u.owner) : 0;
    (*env)->Deallocate(env, (unsigned char *)u.waiters);
    (*env)->Deallocate(env, (unsigned char *)u.notify_waiters);
    return owner;
}

static void waited(jvmtiEnv *env, JNIEnv *jni, jobject object, int kind)
{
    uint64_t now = plx_ticks(), start = wait_start;
    int joined = wait_joined;
    struct plx_thread *t = plx_self;
    jint hash = 0;
    wait_start = 0;
    wait_joined = 0;
    if (!t)
        return;
    /* the JVM's locks taken for the hash code are the runtime's work, not the thread's: the
     * wait's acquire is the thread's first event after the wait (plx critical-path places the
     * wait's start before it) */
    t->guard++;
    t->java_blocked = 0;
    if (t->guard > 1 || !start || (*env)->GetObjectHashCode(env, object, &hash) != JVMTI_ERROR_NONE) {
        t->guard--;
        return;
    }
    if (joined && kind == PLX_SYNC_JAVA_WAIT) {
        name_object(env, jni, JTHREAD_KEY(hash), PLX_SYNC_THREAD, object, 1);
        struct plx_sync_entry *e = plx_sync_entry(t, JTHREAD_KEY(hash), PLX_SYNC_THREAD, 0);
        if (e)
            plx_sync_waited_for(t, e, PLX_SYNC_THREAD, now - start, 0);
        t->guard--;
        return;
    }
    name_object(env, jni, MONITOR_KEY(hash), kind, object, 0);
    struct plx_sync_entry *e = plx_sync_entry(t, MONITOR_KEY(hash), kind, 0);
    if (e)
        plx_sync_waited_for(t, e, kind, now - start, wait_holder);
    t->guard--;
}

static void blocked(uint32_t holder)
{
    struct plx_thread *t = plx_self;
    wait_holder = holder;
    wait_start = plx_ticks();
    if (t)
        t->java_blocked = 1;
}

static void JNICALL contended_enter(jvmtiEnv *env, JNIEnv *jni, jthread thread, jobject object)
{
    (void)jni;
    (void)thread;
    blocked(owner_of(env, object));
}

static void JNICALL contended_entered(jvmtiEnv *env, JNIEnv *jni, jthread thread, jobject object)
{
    (void)thread;
    waited(env, jni, object, PLX_SYNC_JAVA_MONITOR);
}

static void JNICALL wait_begin(jvmtiEnv *env, JNIEnv *jni, jthread thread, jobject object,
                               jlong timeout)
{
    (void)env;
    (void)thread;
    (void)timeout;
    if (!thread_class) { /* a race takes two global references of the same class: harmless */
        jclass c = (*jni)->FindClass(jni, "java/lang/Thread");
        if (c) {
            thread_class = (jclass)(*jni)->NewGlobalRef(jni, c);
            (*jni)->DeleteLocalRef(jni, c);
        } else {
            (*jni)->ExceptionClear(jni);
        }
    }
    int joined = thread_class && object && (*jni)->IsInstanceOf(jni, object, thread_class);
    blocked(0); /* the notifier is not known to JVMTI */
    wait_joined = joined;
}

static void JNICALL wait_end(jvmtiEnv *env, JNIEnv *jni, jthread thread, jobject object,
                             jboolean timed_out)
{
    (void)thread;
    if (timed_out) { /* a timed sleep, not a wait for another thread */
        struct plx_thread *t = plx_self;
        if (t)
            t->java_blocked = 0;
        wait_start = 0;
        return;
    }
    waited(env, jni, object, PLX_SYNC_JAVA_WAIT);
}

void plx_jvm_monitors_callbacks(jvmtiEnv *jvmti, jvmtiEventCallbacks *cb)
{
    jvmtiCapabilities caps;
    memset(&caps, 0, sizeof caps);
    caps.can_generate_monitor_events = 1;
    caps.can_get_monitor_info = 1;
    if ((*jvmti)->AddCapabilities(jvmti, &caps) != JVMTI_ERROR_NONE) {
        plx_warn("JVMTI: no monitor events; Java monitor contention is not recorded");
        return;
    }
    cb->MonitorContendedEnter = contended_enter;
    cb->MonitorContendedEntered = contended_entered;
    cb->MonitorWait = wait_begin;
    cb->MonitorWaited = wait_end;
}

/* JVMTI ThreadEnd, on the ending thread: it releases its Java thread object, which its
 * joiners' waits acquire. */
void plx_jvm_monitor_thread_end(jvmtiEnv *env, jthread thread)
{
    struct plx_thread *t = plx_self;
    jint hash = 0;
    if (!t || t->guard || t->dead || !thread ||
        (*env)->GetObjectHashCode(env, thread, &hash) != JVMTI_ERROR_NONE)
        return;
    t->guard++;
    name_object(env, NULL, JTHREAD_KEY(hash), PLX_SYNC_THREAD, thread, 1);
    struct plx_sync_entry *e = plx_sync_entry(t, JTHREAD_KEY(hash), PLX_SYNC_THREAD, 0);
    if (e)
        plx_sync_released(t, e, PLX_SYNC_THREAD, plx_ticks(), 0);
    t->guard--;
}

/* Object.notify or notifyAll is about to be called on `object` (by a rewritten class). */
void JNICALL plx_jvm_notified(JNIEnv *jni, jclass cls, jobject object)
{
    (void)cls;
    jvmtiEnv *env = monitors_env;
    struct plx_thread *t = plx_thread();
    jint hash = 0;
    if (!t || !env || !object || (*env)->GetObjectHashCode(env, object, &hash) != JVMTI_ERROR_NONE)
        return;
    t->guard++;
    name_object(env, jni, MONITOR_KEY(hash), PLX_SYNC_JAVA_WAIT, object, 0);
    struct plx_sync_entry *e = plx_sync_entry(t, MONITOR_KEY(hash), PLX_SYNC_JAVA_WAIT, 0);
    if (e)
        plx_sync_released(t, e, PLX_SYNC_JAVA_WAIT, plx_ticks(), 0);
    t->guard--;
}

void plx_jvm_monitors_enable(jvmtiEnv *jvmti)
{
    monitors_env = jvmti;
    static const jvmtiEvent events[] = {JVMTI_EVENT_MONITOR_CONTENDED_ENTER,
                                        JVMTI_EVENT_MONITOR_CONTENDED_ENTERED,
                                        JVMTI_EVENT_MONITOR_WAIT, JVMTI_EVENT_MONITOR_WAITED};
    for (size_t i = 0; i < sizeof events / sizeof *events; i++)
        (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, events[i], NULL);
}
