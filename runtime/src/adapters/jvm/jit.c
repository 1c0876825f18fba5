/* The JVM's code made at run time, for naming sampled frames (with PLX_SAMPLE only): each
 * compiled method's range as the JVM installs it (CompiledMethodLoad; the methods compiled
 * before the JVM's start through GenerateEvents at VMInit) and frees it (CompiledMethodUnload),
 * and the code the JVM generates itself (DynamicCodeGenerated: the template interpreter, stubs),
 * as JitCode and JitUnload records. The engine names a sampled frame in no module by them
 * (spec/format.md "Call-stack samples"). These callbacks run on the JVM's compiler threads, the
 * thread freeing code, or the thread calling GenerateEvents: never on a method's hot path. */
#include "jvm.h"

#include <string.h>

static int wanted; /* sampling is on and the JVM grants the capabilities */

/* Records are the runtime's own work: nothing recorded into the calling thread's calls. */
static void write_rec(struct plx_rec *rec)
{
    struct plx_thread *t = plx_self;
    if (t)
        t->guard++;
    plx_rec_write(rec, 0);
    if (t)
        t->guard--;
}

/* The method's first source line (the smallest of its line table), 0 when unknown. */
static uint32_t first_line(jvmtiEnv *env, jmethodID method)
{
    jint n = 0;
    jvmtiLineNumberEntry *table = NULL;
    if ((*env)->GetLineNumberTable(env, method, &n, &table) != JVMTI_ERROR_NONE)
        return 0;
    uint32_t line = 0;
    for (jint i = 0; i < n; i++)
        if (table[i].line_number > 0 && (line == 0 || (uint32_t)table[i].line_number < line))
            line = (uint32_t)table[i].line_number;
    (*env)->Deallocate(env, (unsigned char *)table);
    return line;
}

/* `pkg/Hot.java` from the class signature `Lpkg/Hot;` and its source file `Hot.java`. */
static void source_path(const char *class_sig, const char *source, char *out, size_t cap)
{
    out[0] = 0;
    if (!source)
        return;
    const char *name = class_sig && class_sig[0] == 'L' ? class_sig + 1 : "";
    const char *slash = strrchr(name, '/');
    size_t dir = slash ? (size_t)(slash - name) + 1 : 0;
    if (dir + strlen(source) + 1 > cap)
        dir = 0;
    memcpy(out, name, dir);
    strncpy(out + dir, source, cap - dir - 1);
    out[cap - 1] = 0;
}

static void JNICALL method_load(jvmtiEnv *env, jmethodID method, jint size, const void *start,
                                jint map_length, const jvmtiAddrLocationMap *map,
                                const void *compile_info)
{
    (void)map_length;
    (void)map;
    (void)compile_info;
    char *name = NULL, *sig = NULL, *class_sig = NULL, *source = NULL;
    jclass cls = NULL;
    if ((*env)->GetMethodName(env, method, &name, &sig, NULL) != JVMTI_ERROR_NONE)
        return;
    if ((*env)->GetMethodDeclaringClass(env, method, &cls) == JVMTI_ERROR_NONE) {
        (*env)->GetClassSignature(env, cls, &class_sig, NULL);
        (*env)->GetSourceFileName(env, cls, &source);
    }
    char method_desc[1024], file[512];
    snprintf(method_desc, sizeof method_desc, "%s%s", name ? name : "?", sig ? sig : "");
    source_path(class_sig, source, file, sizeof file);
    struct plx_rec rec;
    plx_rec_init(&rec);
    plx_enc_jit_code(&rec, (uint64_t)(uintptr_t)start, (uint64_t)size, plx_ticks(), 0,
                     first_line(env, method), class_sig ? class_sig : "", method_desc, file);
    write_rec(&rec);
    char *owned[] = {name, sig, class_sig, source};
    for (size_t i = 0; i < sizeof owned / sizeof *owned; i++)
        if (owned[i])
            (*env)->Deallocate(env, (unsigned char *)owned[i]);
}

static void JNICALL method_unload(jvmtiEnv *env, jmethodID method, const void *start)
{
    (void)env;
    (void)method;
    struct plx_rec rec;
    plx_rec_init(&rec);
    plx_enc_jit_unload(&rec, (uint64_t)(uintptr_t)start, plx_ticks());
    write_rec(&rec);
}

static void JNICALL code_generated(jvmtiEnv *env, const char *name, const void *start, jint size)
{
    (void)env;
    struct plx_rec rec;
    plx_rec_init(&rec);
    plx_enc_jit_code(&rec, (uint64_t)(uintptr_t)start, (uint64_t)size, plx_ticks(), 1, 0, "",
                     name ? name : "?", "");
    write_rec(&rec);
}

void plx_jvm_jit_callbacks(jvmtiEnv *jvmti, jvmtiEventCallbacks *cb)
{
    if (!plx_cfg.sample_hz)
        return;
    jvmtiCapabilities caps;
    memset(&caps, 0, sizeof caps);
    caps.can_generate_compiled_method_load_events = 1;
    if ((*jvmti)->AddCapabilities(jvmti, &caps) != JVMTI_ERROR_NONE) {
        plx_warn("JVMTI: no compiled method events; sampled frames in compiled Java code are "
                 "not named");
        return;
    }
    memset(&caps, 0, sizeof caps); /* names' files and lines: where the JVM grants them */
    caps.can_get_source_file_name = 1;
    caps.can_get_line_numbers = 1;
    (*jvmti)->AddCapabilities(jvmti, &caps);
    cb->CompiledMethodLoad = method_load;
    cb->CompiledMethodUnload = method_unload;
    cb->DynamicCodeGenerated = code_generated;
    wanted = 1;
}

void plx_jvm_jit_enable(jvmtiEnv *jvmti)
{
    if (!wanted)
        return;
    static const jvmtiEvent events[] = {JVMTI_EVENT_COMPILED_METHOD_LOAD,
                                        JVMTI_EVENT_COMPILED_METHOD_UNLOAD,
                                        JVMTI_EVENT_DYNAMIC_CODE_GENERATED};
    for (size_t i = 0; i < sizeof events / sizeof *events; i++)
        (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, events[i], NULL);
}

void plx_jvm_jit_existing(jvmtiEnv *jvmti)
{
    if (!wanted)
        return;
    (*jvmti)->GenerateEvents(jvmti, JVMTI_EVENT_DYNAMIC_CODE_GENERATED);
    (*jvmti)->GenerateEvents(jvmti, JVMTI_EVENT_COMPILED_METHOD_LOAD);
}
