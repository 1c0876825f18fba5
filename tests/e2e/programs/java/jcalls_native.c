/* The native half of JCalls.nativeSum (tests/e2e/test_java.py): Java -> JNI -> c_helper. */
#include <jni.h>

__attribute__((noinline)) int c_helper(int n)
{
    int s = 0;
    for (int i = 1; i <= n; i++)
        s += i;
    return s;
}

JNIEXPORT jint JNICALL Java_JCalls_nativeSum(JNIEnv *env, jclass cls, jint n)
{
    (void)env;
    (void)cls;
    return c_helper(n);
}
