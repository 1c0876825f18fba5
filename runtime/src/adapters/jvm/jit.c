/* The JVM's code made at run time, for naming sampled frames (with PLX_SAMPLE only): each
 * compiled method's range as the JVM installs it (CompiledMethodLoad; the methods compiled
 * before the JVM's start through GenerateEvents at VMInit) and frees it (CompiledMethodUnload),
 * and the code the JVM generates itself (DynamicCodeGenerated: the template interpreter, stubs),
 * as JitCode and JitUnload records. The engine names a sampled frame in no module by them
 * (spec/format.md "Call-stack samples"). These callbacks run on the JVM's compiler threads, the
 * thread freeing code, or the thread calling GenerateEvents: never on a method's hot path.
 * A compiled method's inlining (compile_info, JVMTI_CMLR_INLINE_INFO: the methods on the
 * compile-time stack at each pc the compiler kept) follows its JitCode as a JitInline record,
 * each method in it named once per process by a JitMethod record. */
#include "jvm.h"

#include <jvmticmlr.h>
#include <stdatomic.h>
#include <stdlib.h>
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

/* The methods JitInline records name: each jmethodID its JitMethod id and line table (bytecode
 * index -> line), kept for the process's life; the compiler threads' callbacks share it. */
struct known_method {
    jmethodID method; /* NULL: a free slot */
    uint32_t id;
    jint nlines;
    jvmtiLineNumberEntry *lines;
};
static struct known_method *known;
static uint32_t known_cap, known_n;
static atomic_flag known_lock = ATOMIC_FLAG_INIT;

static uint32_t line_at(const struct known_method *m, jint bci)
{
    jlocation best = -1;
    uint32_t line = 0;
    for (jint i = 0; i < m->nlines; i++)
        if (m->lines[i].start_location <= bci && m->lines[i].start_location > best) {
            best = m->lines[i].start_location;
            line = m->lines[i].line_number > 0 ? (uint32_t)m->lines[i].line_number : 0;
        }
    return line;
}

static void describe(jvmtiEnv *env, jmethodID method, struct plx_rec *rec, uint32_t id,
                     uint32_t line);

/* The table's entry of `method`, added (its JitMethod record into `rec`) when new; NULL when
 * the table cannot grow. Called with known_lock held. */
static struct known_method *known_of(jvmtiEnv *env, jmethodID method, struct plx_rec *rec)
{
    if (known_n * 2 >= known_cap) {
        uint32_t cap = known_cap ? known_cap * 2 : 256;
        struct known_method *t = calloc(cap, sizeof *t);
        if (!t)
            return NULL;
        for (uint32_t i = 0; i < known_cap; i++)
            for (uint32_t h = (uint32_t)(((uintptr_t)known[i].method >> 3) * 2654435761u) & (cap - 1);
                 known[i].method; h = (h + 1) & (cap - 1))
                if (!t[h].method) {
                    t[h] = known[i];
                    break;
                }
        free(known);
        known = t;
        known_cap = cap;
    }
    uint32_t h = (uint32_t)(((uintptr_t)method >> 3) * 2654435761u) & (known_cap - 1);
    for (; known[h].method; h = (h + 1) & (known_cap - 1))
        if (known[h].method == method)
            return &known[h];
    struct known_method *m = &known[h];
    m->method = method;
    m->id = known_n++;
    if ((*env)->GetLineNumberTable(env, method, &m->nlines, &m->lines) != JVMTI_ERROR_NONE) {
        m->nlines = 0;
        m->lines = NULL;
    }
    uint32_t first = 0; /* the smallest line of its table */
    for (jint i = 0; i < m->nlines; i++)
        if (m->lines[i].line_number > 0 && (first == 0 || (uint32_t)m->lines[i].line_number < first))
            first = (uint32_t)m->lines[i].line_number;
    describe(env, method, rec, m->id, first);
    return m;
}

/* The JitInline record of the compiled method at [start, start + size) into `rec` (after the
 * JitMethod records of the methods it names that are new). */
static void inline_record(jvmtiEnv *env, const void *start, jint size, uint64_t ticks,
                          const void *compile_info, struct plx_rec *rec)
{
    const jvmtiCompiledMethodLoadRecordHeader *h = compile_info;
    while (h && h->kind != JVMTI_CMLR_INLINE_INFO)
        h = h->next;
    if (!h)
        return;
    const jvmtiCompiledMethodLoadInlineRecord *in = (const void *)h;
    uintptr_t lo = (uintptr_t)start, hi = lo + (uintptr_t)size;
    uint32_t count = 0;
    for (jint i = 0; i < in->numpcs; i++) {
        uintptr_t pc = (uintptr_t)in->pcinfo[i].pc;
        if (pc >= lo && pc < hi && in->pcinfo[i].numstackframes > 0)
            count += (uint32_t)in->pcinfo[i].numstackframes;
    }
    if (!count)
        return;
    uint32_t *frames = malloc((size_t)count * 3 * sizeof *frames);
    if (!frames)
        return;
    uint32_t n = 0;
    while (atomic_flag_test_and_set_explicit(&known_lock, memory_order_acquire))
        sched_yield();
    for (jint i = 0; i < in->numpcs; i++) {
        const PCStackInfo *p = &in->pcinfo[i];
        uintptr_t pc = (uintptr_t)p->pc;
        if (pc < lo || pc >= hi)
            continue;
        for (jint k = 0; k < p->numstackframes && n < count; k++) {
            struct known_method *m = known_of(env, p->methods[k], rec);
            if (!m)
                break;
            frames[3 * n] = (uint32_t)(pc - lo);
            frames[3 * n + 1] = m->id;
            frames[3 * n + 2] = line_at(m, p->bcis[k]);
            n++;
        }
    }
    atomic_flag_clear_explicit(&known_lock, memory_order_release);
    plx_enc_jit_inline(rec, (uint64_t)lo, ticks, n);
    for (uint32_t i = 0; i < n; i++)
        plx_enc_jit_inline_frames(rec, frames[3 * i], frames[3 * i + 1], frames[3 * i + 2]);
    free(frames);
}

static void JNICALL method_load(jvmtiEnv *env, jmethodID method, jint size, const void *start,
                                jint map_length, const jvmtiAddrLocationMap *map,
                                const void *compile_info)
{
    (void)map_length;
    (void)map;
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
    uint64_t now = plx_ticks();
    plx_stack_sampler_jvm_code((uintptr_t)start, (uintptr_t)size);
    plx_enc_jit_code(&rec, (uint64_t)(uintptr_t)start, (uint64_t)size, now, 0,
                     first_line(env, method), class_sig ? class_sig : "", method_desc, file);
    if (compile_info)
        inline_record(env, start, size, now, compile_info, &rec);
    write_rec(&rec);
    char *owned[] = {name, sig, class_sig, source};
    for (size_t i = 0; i < sizeof owned / sizeof *owned; i++)
        if (owned[i])
            (*env)->Deallocate(env, (unsigned char *)owned[i]);
}

/* The JitMethod record of `method` as `id`, its first line `line`, into `rec`. */
static void describe(jvmtiEnv *env, jmethodID method, struct plx_rec *rec, uint32_t id,
                     uint32_t line)
{
    char *name = NULL, *sig = NULL, *class_sig = NULL, *source = NULL;
    jclass cls = NULL;
    (*env)->GetMethodName(env, method, &name, &sig, NULL);
    if ((*env)->GetMethodDeclaringClass(env, method, &cls) == JVMTI_ERROR_NONE) {
        (*env)->GetClassSignature(env, cls, &class_sig, NULL);
        (*env)->GetSourceFileName(env, cls, &source);
    }
    char method_desc[1024], file[512];
    snprintf(method_desc, sizeof method_desc, "%s%s", name ? name : "?", sig ? sig : "");
    source_path(class_sig, source, file, sizeof file);
    plx_enc_jit_method(rec, id, class_sig ? class_sig : "", method_desc, file, line);
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
    plx_stack_sampler_jvm_code((uintptr_t)start, (uintptr_t)size);
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
