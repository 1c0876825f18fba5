/* Java monitors through JVMTI: a thread blocked entering a `synchronized` block or method held
 * by another thread (MonitorContendedEnter/Entered), and a thread in Object.wait until notified
 * (MonitorWait/Waited), recorded as acquire events of sync objects of kind monitor and monitor
 * wait. The owner of a contended monitor is read when the wait begins (GetObjectMonitorUsage)
 * and named by the plx thread that runs it: each Java thread's JVMTI thread-local storage holds
 * 1 + its Thread index, set on the thread itself as it starts. A monitor is keyed by its
 * identity hash code (objects move), with the top bits set apart from real addresses. Only
 * contended entries and waits call in here, never an uncontended `synchronized`. The JVM's own
 * pthread waits inside a monitor wait are that wait: not traced apart (java_blocked).
 * JVMTI has no event for Object.notify: the agent calls Hooks.notified before each
 * notify/notifyAll call site of the classes it rewrites, a release of the object's monitor-wait
 * object, so that a wait's cause is the notifying thread where it notified. */
#include "jvm.h"

#include <string.h>

#define MONITOR_KEY(hash) ((const void *)(((uintptr_t)0x7F << 56) | (uint32_t)(hash)))

/* The JVMTI environment whose monitor events are on (for the identity hash of notified objects). */
static jvmtiEnv *monitors_env;

/* Owned by the thread: the start of its current contended entry or wait, and the owner then. */
static PLX_TLS uint64_t wait_start;
static PLX_TLS uint32_t wait_holder;

void plx_jvm_monitor_thread(jvmtiEnv *jvmti, jthread thread)
{
    struct plx_thread *t = plx_thread();
    if (t && jvmti)
        (*jvmti)->SetThreadLocalStorage(jvmti, thread, (const void *)(uintptr_t)(t->index + 1));
}

static uint32_t owner_of(jvmtiEnv *env, jobject object)
{
    jvmtiMonitorUsage u;
    memset(&u, 0, sizeof u);
    if ((*env)->GetObjectMonitorUsage(env, object, &u) != JVMTI_ERROR_NONE)
        return 0;
    void *index = NULL;
    if (u.owner)
        (*env)->GetThreadLocalStorage(env, u.owner, &index);
    (*env)->Deallocate(env, (unsigned char *)u.waiters);
    (*env)->Deallocate(env, (unsigned char *)u.notify_waiters);
    return (uint32_t)(uintptr_t)index;
}

static void waited(jvmtiEnv *env, jobject object, int kind)
{
    uint64_t now = plx_ticks(), start = wait_start;
    struct plx_thread *t = plx_self;
    jint hash = 0;
    wait_start = 0;
    if (t)
        t->java_blocked = 0;
    if (!t || t->guard || !start || (*env)->GetObjectHashCode(env, object, &hash) != JVMTI_ERROR_NONE)
        return;
    t->guard++;
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
    (void)jni;
    (void)thread;
    waited(env, object, PLX_SYNC_JAVA_MONITOR);
}

static void JNICALL wait_begin(jvmtiEnv *env, JNIEnv *jni, jthread thread, jobject object,
                               jlong timeout)
{
    (void)env;
    (void)jni;
    (void)thread;
    (void)object;
    (void)timeout;
    blocked(0); /* the notifier is not known to JVMTI */
}

static void JNICALL wait_end(jvmtiEnv *env, JNIEnv *jni, jthread thread, jobject object,
                             jboolean timed_out)
{
    (void)jni;
    (void)thread;
    if (timed_out) { /* a timed sleep, not a wait for another thread */
        struct plx_thread *t = plx_self;
        if (t)
            t->java_blocked = 0;
        wait_start = 0;
        return;
    }
    waited(env, object, PLX_SYNC_JAVA_WAIT);
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

/* Object.notify or notifyAll is about to be called on `object` (by a rewritten class). */
JNIEXPORT void JNICALL Java_org_parallax_agent_Hooks_notified(JNIEnv *jni, jclass cls,
                                                              jobject object)
{
    (void)jni;
    (void)cls;
    jvmtiEnv *env = monitors_env;
    struct plx_thread *t = plx_thread();
    jint hash = 0;
    if (!t || !env || !object || (*env)->GetObjectHashCode(env, object, &hash) != JVMTI_ERROR_NONE)
        return;
    t->guard++;
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
