/* The comparison of bench/java/run.sh: a JVMTI agent that receives MethodEntry and MethodExit
 * for every method and only counts them (the paper's JVMPI approach, done with JVMTI). */
#include <jvmti.h>
#include <string.h>

static volatile unsigned long entries, exits;

static void JNICALL on_entry(jvmtiEnv *j, JNIEnv *e, jthread t, jmethodID m)
{
    (void)j, (void)e, (void)t, (void)m;
    entries++;
}

static void JNICALL on_exit(jvmtiEnv *j, JNIEnv *e, jthread t, jmethodID m, jboolean x, jvalue v)
{
    (void)j, (void)e, (void)t, (void)m, (void)x, (void)v;
    exits++;
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    (void)options, (void)reserved;
    jvmtiEnv *jvmti;
    if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK)
        return 1;
    jvmtiCapabilities caps;
    memset(&caps, 0, sizeof caps);
    caps.can_generate_method_entry_events = 1;
    caps.can_generate_method_exit_events = 1;
    if ((*jvmti)->AddCapabilities(jvmti, &caps) != JVMTI_ERROR_NONE)
        return 1;
    jvmtiEventCallbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.MethodEntry = on_entry;
    cb.MethodExit = on_exit;
    (*jvmti)->SetEventCallbacks(jvmti, &cb, sizeof cb);
    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_METHOD_ENTRY, NULL);
    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_METHOD_EXIT, NULL);
    return 0;
}
