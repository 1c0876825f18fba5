/* Probes: functions of unmodified code measured by rewriting their entry (Paradyn's
 * instrumentation of unmodified programs; the full-dynamic mode of uftrace).
 *
 * PLX_PROBE lists globs of function names, `GLOB` for the executable and `LIB:GLOB` for the
 * loaded objects whose file name starts with LIB. For each function found in a symbol table:
 * capstone (loaded with dlopen, so programs that use no probe never map it) decodes the first
 * whole instructions covering 5 bytes; they are copied, relocated, into a stub near the
 * function, and the function's entry becomes `jmp stub`. The stub enters the region and
 * replaces the return address with the shared exit trampoline (probe_entry.S), which leaves it
 * and returns to the saved address: the same per-thread state, profile and trace as the
 * compiler hooks (hotpath.h).
 *
 * Safety: a function is skipped, with its reason in a ProbeSite record, when it is shorter
 * than the jump, when any instruction of its body jumps into the displaced bytes, when a
 * displaced instruction is a conditional branch, a return or cannot be decoded, when it is
 * already instrumented by the compiler, or when no stub can be placed within reach. Entries are
 * rewritten at start-up, before the program's main() runs, in plx attach's call while the
 * program is stopped, or (plx ctl, over the control socket: control.c) with every other thread
 * stopped by world.c; stubs are prepared while the program runs, nothing reaches them yet.
 *
 * The entry and exit of a probed call run probe_fast.c (general registers only) and, for its
 * slow paths, plx_probe_enter_slow below and the runtime's own, through the thunks of
 * probe_entry.S that save the vector state; probe.h states the shadow stack's invariant. */
#include "probe.h"
#include "world.h"
#include "probe_api.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#ifdef PLX_HAVE_CAPSTONE
#include <capstone/capstone.h>
#endif

#define JMP_LEN PLX_PROBE_JMP_LEN
/* A stub: the address of plx_probe_entry_common (8 bytes, data), then at STUB_HEAD, where the
 * entry's jump lands: push %r11; movabs $probe, %r11; call *common; pop %r11 (20 bytes), then
 * the relocated instructions and an absolute jump back behind them. */
#define STUB_HEAD 8
#define STUB_RESUME 28
#define STUB_SIZE 128
#define POOL_SIZE (1u << 20)
#define MAX_PATTERNS 64

static struct plx_probe *inserted;
#define MAX_AVOID 4096
static uint64_t avoid[MAX_AVOID]; /* plx attach: where the stopped threads are */
static uint32_t navoid;
/* plx attach: functions skipped because a stopped thread was inside their first bytes, as
 * --probe globs, for the control thread to insert once the threads run (world.c steps them) */
static char retry[8192];
static size_t retry_len;

/* ---- the vector state the thunks save (probe_entry.S) ------------------------------------- */

/* XSAVE components the slow paths may change: x87, SSE, AVX, and AVX-512's opmask, ZMM_Hi256
 * and Hi16_ZMM (not MPX, PKRU or AMX's tiles, which no code of the runtime or libc touches);
 * 0 without XSAVE (then FXSAVE: x87, xmm0-15, MXCSR). */
PLX_HIDDEN uint64_t plx_probe_xsave_mask;
/* Bytes of the save area (standard form, >= 576 so that its XSAVE header is inside). */
PLX_HIDDEN uint64_t plx_probe_xsave_size = 576;

/* Before any probe can run: the loader calls it when libplx.so is loaded (plx run or attach). */
__attribute__((constructor)) static void vector_state_init(void)
{
    unsigned a, b, c, d;
    __asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(1), "c"(0));
    if (!(c & (1u << 27))) /* OSXSAVE: the system saves the extended state, XGETBV works */
        return;
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    uint64_t mask = lo & 0xE7u; /* x87 | SSE | AVX | opmask | ZMM_Hi256 | Hi16_ZMM */
    uint64_t size = 576;        /* legacy area 512 + XSAVE header 64 */
    for (unsigned i = 2; i < 8; i++) {
        if (!(mask & (1u << i)))
            continue;
        __asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0xD), "c"(i));
        if ((uint64_t)b + a > size)
            size = (uint64_t)b + a;
    }
    plx_probe_xsave_size = (size + 63) & ~(uint64_t)63;
    plx_probe_xsave_mask = mask;
}

/* ---- the slow half of a probe's entry (through the thunk: every register state saved) ----- */

static pthread_key_t shadow_key;
static pthread_once_t shadow_once = PTHREAD_ONCE_INIT;

static void shadow_free(void *p)
{
    if (p)
        munmap(p, (size_t)plx_probe_shadow_cap * sizeof *plx_probe_shadow);
}

static void shadow_key_make(void)
{
    pthread_key_create(&shadow_key, shadow_free);
}

/* The thread's first probe. */
static int shadow_make(void)
{
    uint32_t cap = plx_cfg.max_depth ? plx_cfg.max_depth : 4096;
    void *p = mmap(NULL, (size_t)cap * sizeof *plx_probe_shadow, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return 0;
    pthread_once(&shadow_once, shadow_key_make);
    plx_probe_shadow = p;
    plx_probe_shadow_cap = cap;
    pthread_setspecific(shadow_key, p);
    return 1;
}

void plx_probe_enter_slow(const struct plx_probe *p, uintptr_t *ret_slot)
{
    if (plx_probe_busy)
        return;
    plx_probe_busy = 1;
    if (PLX_UNLIKELY(plx_probe_generation != plx_attach_generation)) {
        plx_probe_generation = plx_attach_generation; /* a new plx attach: its own thread state */
        if (plx_self && plx_self->dead)
            plx_self = NULL;
    }
    struct plx_thread *t = plx_thread();
    if (t != NULL && (plx_probe_shadow_depth < plx_probe_shadow_cap ||
                      (plx_probe_shadow == NULL && shadow_make()))) {
        uint32_t v = plx_region_of_address(p->fn);
        t->guard = 1;
        atomic_signal_fence(memory_order_seq_cst);
        if (v & PLX_REGION_MISSING) { /* first sight: the lookup's cost is the runtime's own */
            uint64_t t0 = plx_ticks();
            v = plx_region_resolve(t, p->fn);
            plx_runtime_interval(t, PLX_REGION_SYMBOLS, t0, plx_ticks());
        }
        if (!(v & PLX_REGION_EXCLUDED))
            plx_probe_push(t, p, v, ret_slot);
        atomic_signal_fence(memory_order_seq_cst);
        t->guard = 0;
    }
    plx_probe_busy = 0;
}

/* ---- selection and rewriting (start-up, one thread) -------------------------------------- */

struct candidate {
    struct plx_function_symbol sym;
};

struct selection {
    char *patterns[MAX_PATTERNS];   /* glob, after an optional "LIB:" */
    char *libs[MAX_PATTERNS];       /* NULL: the executable */
    int n;
    struct candidate *found;
    size_t nfound, cap;
};

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* The ':' that ends a spec's LIB (`libm.so:exp`): the first one that is not half of a C++
 * scope `::` (`ns::Solver::step*` names no library). NULL: none. */
static char *lib_colon(char *spec)
{
    for (char *p = strchr(spec, ':'); p; p = strchr(p + 1, ':')) {
        if (p[1] == ':') {
            p++;
            continue;
        }
        return p;
    }
    return NULL;
}

typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);

/* Whether `glob` matches symbol `name`: its symbol-table name, or, for a C++ name, what filters
 * match (core/names.c: demangled, without a function template's return type), so that
 * `ns::Solver::step*` selects `_ZN2ns6Solver4stepEi`. */
static int name_matches(const char *glob, const char *name)
{
    static demangle_fn demangle;
    if (plx_glob_match(glob, name))
        return 1;
    if (name[0] != '_' || name[1] != 'Z')
        return 0;
    if (!demangle)
        demangle = (demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle");
    if (!demangle) { /* a C++ program that needs nothing of the C++ runtime has not loaded it */
        void *cxx = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL);
        demangle = cxx ? (demangle_fn)dlsym(cxx, "__cxa_demangle") : NULL;
    }
    int status = -1;
    char *d = demangle ? demangle(name, NULL, NULL, &status) : NULL;
    int match = status == 0 && d && plx_glob_match(glob, plx_name_qualified(d));
    free(d);
    return match;
}

static void collect(const struct plx_function_symbol *s, void *arg)
{
    struct selection *sel = arg;
    if (s->size == 0 && !s->unsized)
        return;
    for (int i = 0; i < sel->n; i++) {
        if (sel->libs[i] ? strncmp(base_name(s->module), sel->libs[i], strlen(sel->libs[i])) != 0
                         : s->module_id != 0)
            continue;
        if (!name_matches(sel->patterns[i], s->name))
            continue;
        for (size_t k = 0; k < sel->nfound; k++)
            if (sel->found[k].sym.address == s->address)
                return; /* an alias of a function already selected */
        for (const struct plx_probe *p = inserted; p; p = p->next)
            if (p->fn == s->address)
                return; /* probed already (plx ctl insert) */
        if (sel->nfound == sel->cap) {
            size_t cap = sel->cap ? sel->cap * 2 : 64;
            struct candidate *n = realloc(sel->found, cap * sizeof *n);
            if (!n)
                return;
            sel->found = n;
            sel->cap = cap;
        }
        sel->found[sel->nfound++].sym = *s;
        return;
    }
}

/* Record 29: when probe of `fn` was inserted (1) or removed (0), for the measured intervals. */
static void write_change(uintptr_t fn, int inserted_now)
{
    struct plx_rec rec;
    plx_rec_init(&rec);
    plx_enc_probe_change(&rec, plx_ticks(), fn, inserted_now ? 1 : 0);
    plx_rec_write(&rec, 0);
}

static void write_site(const struct plx_function_symbol *s, int ok, const char *reason)
{
    struct plx_rec rec;
    plx_rec_init(&rec);
    plx_enc_probe_site(&rec, s->module_id, s->address, ok ? 0 : 1, s->name, reason ? reason : "");
    plx_rec_write(&rec, 0);
}

#ifdef PLX_HAVE_CAPSTONE

struct capstone {
    cs_err (*open)(cs_arch, cs_mode, csh *);
    cs_err (*option)(csh, cs_opt_type, size_t);
    size_t (*disasm)(csh, const uint8_t *, size_t, uint64_t, size_t, cs_insn **);
    void (*free)(cs_insn *, size_t);
    cs_err (*close)(csh *);
    bool (*group)(csh, const cs_insn *, unsigned int);
    csh handle;
};

static int capstone_load(struct capstone *cs, const char **why)
{
    static const char *names[] = {"libcapstone.so.4", "libcapstone.so.5", "libcapstone.so"};
    void *lib = NULL;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !lib; i++)
        lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        *why = "the capstone library (libcapstone) could not be loaded";
        return -1;
    }
    cs->open = (cs_err(*)(cs_arch, cs_mode, csh *))dlsym(lib, "cs_open");
    cs->option = (cs_err(*)(csh, cs_opt_type, size_t))dlsym(lib, "cs_option");
    cs->disasm = (size_t(*)(csh, const uint8_t *, size_t, uint64_t, size_t, cs_insn **))dlsym(
        lib, "cs_disasm");
    cs->free = (void (*)(cs_insn *, size_t))dlsym(lib, "cs_free");
    cs->close = (cs_err(*)(csh *))dlsym(lib, "cs_close");
    cs->group = (bool (*)(csh, const cs_insn *, unsigned int))dlsym(lib, "cs_insn_group");
    if (!cs->open || !cs->option || !cs->disasm || !cs->free || !cs->close || !cs->group ||
        cs->open(CS_ARCH_X86, CS_MODE_64, &cs->handle) != CS_ERR_OK) {
        *why = "the capstone library has no usable x86-64 disassembler";
        return -1;
    }
    cs->option(cs->handle, CS_OPT_DETAIL, CS_OPT_ON);
    return 0;
}

/* The stub pool: executable memory within ±2 GiB of the code it serves (rel32 reach). */
struct pool {
    unsigned char *base;
    size_t used;
};
static struct pool pools[64];
static int npools;

static int reaches(uintptr_t from, uintptr_t to)
{
    intptr_t d = (intptr_t)(to - from);
    return d >= INT32_MIN && d <= INT32_MAX;
}

static unsigned char *stub_alloc(uintptr_t near)
{
    for (int i = 0; i < npools; i++)
        if (pools[i].used + STUB_SIZE <= POOL_SIZE &&
            reaches(near, (uintptr_t)pools[i].base) &&
            reaches(near, (uintptr_t)pools[i].base + POOL_SIZE)) {
            unsigned char *s = pools[i].base + pools[i].used;
            pools[i].used += STUB_SIZE;
            return s;
        }
    if (npools == (int)(sizeof pools / sizeof pools[0]))
        return NULL;
    /* below the code first (executables and libraries sit high or low; try both sides) */
    for (int k = 1; k < 2048; k++) {
        intptr_t step = (intptr_t)k * (1 << 20) * ((k & 1) ? -1 : 1) * ((k + 1) / 2);
        uintptr_t hint = ((near & ~(uintptr_t)0xFFFFF) + (uintptr_t)step);
        if (!reaches(near, hint) || !reaches(near, hint + POOL_SIZE))
            continue;
        void *p = mmap((void *)hint, POOL_SIZE, PROT_READ | PROT_WRITE | PROT_EXEC,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
        if (p == MAP_FAILED)
            continue;
        if ((uintptr_t)p != hint) { /* a kernel that ignores MAP_FIXED_NOREPLACE */
            munmap(p, POOL_SIZE);
            continue;
        }
        pools[npools].base = p;
        pools[npools].used = STUB_SIZE;
        npools++;
        return p;
    }
    return NULL;
}

static void put_abs_jmp(unsigned char **q, uintptr_t target)
{
    unsigned char *p = *q;
    p[0] = 0xff; p[1] = 0x25; memset(p + 2, 0, 4); /* jmp *0(%rip) */
    memcpy(p + 6, &target, 8);
    *q = p + 14;
}

/* The condition of a jcc (short 7x or near 0f 8x, after prefixes), or -1 (jrcxz, loop, ...). */
static int condition_code(const cs_insn *in)
{
    size_t i = 0;
    while (i < in->size && (in->bytes[i] == 0x2e || in->bytes[i] == 0x3e || in->bytes[i] == 0xf2))
        i++; /* branch hints, bnd */
    if (i < in->size && (in->bytes[i] & 0xf0) == 0x70)
        return in->bytes[i] & 0x0f;
    if (i + 1 < in->size && in->bytes[i] == 0x0f && (in->bytes[i + 1] & 0xf0) == 0x80)
        return in->bytes[i + 1] & 0x0f;
    return -1;
}

static int is_cyg_hook(uintptr_t target)
{
    uintptr_t hook = (uintptr_t)dlsym(RTLD_DEFAULT, "__cyg_profile_func_enter");
    return hook && (target == hook || plx_patch_plt_reaches(target, hook));
}

/* The length of a shadow-stack instruction (Intel CET) at `b`, which capstone 4 does not
 * decode, else 0: rdssp (f3 [rex] 0f 1e /1), incssp (f3 [rex] 0f ae /5), setssbsy (f3 0f 01
 * e8), saveprevssp (f3 0f 01 ea). None branches; glibc's and libgcc's unwinders use them. */
static size_t cet_length(const uint8_t *b, size_t avail)
{
    if (avail < 4 || b[0] != 0xf3)
        return 0;
    size_t i = (b[1] & 0xf0) == 0x40 ? 2 : 1; /* a REX prefix */
    if (avail < i + 3 || b[i] != 0x0f)
        return 0;
    uint8_t op = b[i + 1], modrm = b[i + 2];
    if ((op == 0x1e && (modrm & 0xf8) == 0xc8) || (op == 0xae && (modrm & 0xf8) == 0xe8))
        return i + 3;
    if (i == 1 && op == 0x01 && (modrm == 0xe8 || modrm == 0xea))
        return 4;
    return 0;
}

/* The bytes decoded from the entry without a gap. */
static size_t decoded_run(const cs_insn *insn, size_t n, uintptr_t start)
{
    size_t covered = 0;
    for (size_t i = 0; i < n && insn[i].address == start + covered; i++)
        covered += insn[i].size;
    return covered;
}

/* Disassembles s's body; a shadow-stack instruction capstone stops at is read as no-ops of
 * its length (in a copy) and the rest decoded on. *first_gap: the offset of the first such
 * instruction (s->size if none); *covered: the bytes decoded without a gap. */
static size_t disassemble(struct capstone *cs, const struct plx_function_symbol *s,
                          cs_insn **insn, size_t *first_gap, size_t *covered)
{
    const uint8_t *code = (const uint8_t *)s->address;
    uint8_t *copy = NULL;
    size_t n = cs->disasm(cs->handle, code, s->size, s->address, 0, insn);
    *covered = decoded_run(*insn, n, s->address);
    *first_gap = s->size;
    size_t len;
    while (*covered < s->size && (len = cet_length(code + *covered, s->size - *covered)) > 0) {
        if (!copy) {
            if ((copy = malloc(s->size)) == NULL)
                break;
            memcpy(copy, code, s->size);
            *first_gap = *covered;
        }
        memset(copy + *covered, 0x90, len);
        cs->free(*insn, n);
        n = cs->disasm(cs->handle, copy, s->size, s->address, 0, insn);
        *covered = decoded_run(*insn, n, s->address);
        code = copy;
    }
    free(copy);
    return n;
}

/* Decides whether `s` can be probed; fills `p` and the stub. NULL, or the reason it cannot. */
static const char *prepare(struct capstone *cs, const struct plx_function_symbol *s,
                           struct plx_probe *p, unsigned char **stub_out)
{
    static char why[160];
    if (s->unsized)
        return "its size is unknown: the implementation its loader chose (IFUNC) has no symbol";
    if (s->address == (uintptr_t)getauxval(AT_ENTRY))
        return "the program's entry point: it has no return address";
    static const char *unusual[] = {"_start", "__restore_rt", "setjmp", "_setjmp", "__setjmp",
                                    "sigsetjmp", "__sigsetjmp", "longjmp", "_longjmp",
                                    "siglongjmp", "__longjmp_chk", "__libc_longjmp",
                                    "__libc_siglongjmp", "vfork", "__vfork", "getcontext",
                                    "setcontext", "swapcontext", "makecontext", "__clone",
                                    "clone", "__clone3", "__libc_start_main", "_dl_start"};
    for (size_t i = 0; i < sizeof unusual / sizeof unusual[0]; i++)
        if (strcmp(s->name, unusual[i]) == 0)
            return "it returns twice or not at all (setjmp, vfork, context switches, entry "
                   "points): its return address cannot be replaced";
    /* GCC's hot/cold splitting: `f.cold` (or `f.cold.N`) holds f's unlikely blocks, entered
     * by a jump from f, so the word at the stack pointer there is no return address */
    const char *cold = strstr(s->name, ".cold");
    if (cold && (cold[5] == 0 || cold[5] == '.'))
        return "a cold part of a function (reached by a jump, not a call): it has no return "
               "address of its own";
    if (s->size < JMP_LEN) {
        snprintf(why, sizeof why, "too short: %llu bytes, the jump needs %d",
                 (unsigned long long)s->size, JMP_LEN);
        return why;
    }
    cs_insn *insn = NULL;
    size_t covered, first_gap;
    size_t n = disassemble(cs, s, &insn, &first_gap, &covered);
    size_t ndisp = 0, displaced = 0;
    for (size_t i = 0; i < n && ndisp == 0; i++)
        if ((displaced += insn[i].size) >= JMP_LEN)
            ndisp = i + 1;
    const char *bad = NULL;
    if (covered < s->size) {
        snprintf(why, sizeof why, "unrecognised instruction at +%zu", covered);
        bad = why;
    } else if (first_gap < displaced) { /* a displaced one is copied, never read as no-ops */
        snprintf(why, sizeof why, "a shadow-stack instruction at +%zu", first_gap);
        bad = why;
    }
    for (size_t i = 0; i < n && !bad; i++) { /* every branch of the body */
        const cs_x86 *x = &insn[i].detail->x86;
        int jump = cs->group(cs->handle, &insn[i], CS_GRP_JUMP);
        int call = cs->group(cs->handle, &insn[i], CS_GRP_CALL);
        if ((jump || call) && x->op_count == 1 && x->operands[0].type == X86_OP_IMM) {
            uint64_t target = (uint64_t)x->operands[0].imm;
            uint32_t len = 0;
            for (size_t k = 0; k < ndisp; k++)
                len += insn[k].size;
            if (jump && target == s->address) {
                snprintf(why, sizeof why, "a jump at +%llu goes back to its entry (a loop)",
                         (unsigned long long)(insn[i].address - s->address));
                bad = why;
            } else if (target > s->address && target < s->address + len) {
                snprintf(why, sizeof why, "a jump at +%llu targets byte +%llu of the %u displaced",
                         (unsigned long long)(insn[i].address - s->address),
                         (unsigned long long)(target - s->address), len);
                bad = why;
            } else if (call && is_cyg_hook((uintptr_t)target)) {
                bad = "already instrumented by the compiler (-finstrument-functions)";
            }
        }
    }
    if (!bad && ndisp == 0)
        bad = "too short: its instructions end before 5 bytes";
    for (uint32_t k = 0; k < navoid && !bad; k++) {
        uint32_t dl = 0;
        for (size_t i = 0; i < ndisp; i++)
            dl += insn[i].size;
        if (avoid[k] > s->address && avoid[k] < s->address + dl) {
            snprintf(why, sizeof why, "a thread is stopped at byte +%llu of its first %u",
                     (unsigned long long)(avoid[k] - s->address), dl);
            bad = why;
        }
    }
    unsigned char *stub = NULL;
    if (!bad && (stub = stub_alloc(s->address)) == NULL)
        bad = "no memory for its stub within 2 GiB of the code";
    uint32_t len = 0;
    unsigned char *q = stub ? stub + STUB_RESUME : NULL;
    for (size_t i = 0; i < ndisp && !bad; i++) {
        const cs_insn *in = &insn[i];
        const cs_x86 *x = &in->detail->x86;
        len += in->size;
        /* syscall returns to the next instruction, wherever it is: copied as it is */
        if (cs->group(cs->handle, in, CS_GRP_RET) || cs->group(cs->handle, in, CS_GRP_IRET) ||
            (cs->group(cs->handle, in, CS_GRP_INT) && in->id != X86_INS_SYSCALL)) {
            bad = "too short: it returns within the displaced bytes";
            break;
        }
        int rel = cs->group(cs->handle, in, CS_GRP_BRANCH_RELATIVE);
        if (rel && in->id == X86_INS_JMP) { /* jmp rel: an absolute jump, nothing after it runs */
            put_abs_jmp(&q, (uintptr_t)x->operands[0].imm);
            continue;
        }
        if (rel && in->id == X86_INS_CALL) {
            /* the call's own return address pushed (the instruction after it in the function,
             * where its unwind and exception tables know the frame; a call is 5 bytes, so that
             * is the end of the displaced ones), then a jump: lea -8(%rsp), %rsp (the flags
             * kept); movl $lo, (%rsp); movl $hi, 4(%rsp); jmp *target */
            uint64_t back = in->address + in->size;
            uint32_t lo = (uint32_t)back, hi = (uint32_t)(back >> 32);
            static const unsigned char lea[] = {0x48, 0x8d, 0x64, 0x24, 0xf8};
            memcpy(q, lea, sizeof lea);
            q += sizeof lea;
            q[0] = 0xc7; q[1] = 0x04; q[2] = 0x24;
            memcpy(q + 3, &lo, 4);
            q[7] = 0xc7; q[8] = 0x44; q[9] = 0x24; q[10] = 4;
            memcpy(q + 11, &hi, 4);
            q += 15;
            put_abs_jmp(&q, (uintptr_t)x->operands[0].imm);
            continue;
        }
        int cc = rel ? condition_code(in) : -1;
        if (cc >= 0) { /* jcc taken; jmp next; taken: jmp *target; next: */
            uintptr_t target = (uintptr_t)x->operands[0].imm;
            q[0] = (unsigned char)(0x70 | cc); q[1] = 2;
            q[2] = 0xeb; q[3] = 14;
            q += 4;
            put_abs_jmp(&q, target);
            continue;
        }
        if (rel) {
            snprintf(why, sizeof why, "a branch (%s) that cannot be relocated in its first %u bytes",
                     in->mnemonic, len);
            bad = why;
            break;
        }
        memcpy(q, in->bytes, in->size);
        for (int k = 0; k < x->op_count; k++) {
            const cs_x86_op *o = &x->operands[k];
            if (o->type != X86_OP_MEM || o->mem.base != X86_REG_RIP)
                continue;
            if (x->encoding.disp_offset == 0 || x->encoding.disp_size != 4) {
                bad = "a rip-relative operand that cannot be relocated";
                break;
            }
            int64_t target = (int64_t)(in->address + in->size) + o->mem.disp;
            int64_t disp = target - (int64_t)((uintptr_t)q + in->size);
            if (disp < INT32_MIN || disp > INT32_MAX) {
                bad = "a rip-relative operand out of reach of its stub";
                break;
            }
            int32_t d32 = (int32_t)disp;
            memcpy(q + x->encoding.disp_offset, &d32, 4);
        }
        q += in->size;
    }
    if (n)
        cs->free(insn, n);
    if (bad)
        return bad; /* the stub slot stays unused: a few bytes */
    put_abs_jmp(&q, s->address + len);
    /* .quad plx_probe_entry_common; head: push %r11; movabs $p, %r11; call *-26(%rip);
     * pop %r11. A call, not a jump: the trampoline's ret then matches it (the processor's
     * return prediction stays in step with the stack). */
    uintptr_t common = (uintptr_t)plx_probe_entry_common;
    memcpy(stub, &common, 8);
    unsigned char *h = stub + STUB_HEAD;
    h[0] = 0x41; h[1] = 0x53;
    h[2] = 0x49; h[3] = 0xbb;
    uintptr_t pv = (uintptr_t)p;
    memcpy(h + 4, &pv, 8);
    int32_t back = -(int32_t)(STUB_HEAD + 18); /* from the call's end to the stub's start */
    h[12] = 0xff; h[13] = 0x15; memcpy(h + 14, &back, 4);
    h[18] = 0x41; h[19] = 0x5b;
    p->fn = s->address;
    p->resume = (uintptr_t)(stub + STUB_RESUME);
    p->len = len;
    *stub_out = h; /* where the entry's jump lands */
    return NULL;
}

/* Writes `jmp stub` over the function's entry. No other thread runs: start-up, plx attach's
 * injected call, or every other thread stopped (world.c) and none inside the bytes. */
static const char *insert(struct plx_probe *p, const unsigned char *stub)
{
    long pagesz = sysconf(_SC_PAGESIZE);
    uintptr_t lo = p->fn & ~(uintptr_t)(pagesz - 1);
    uintptr_t hi = (p->fn + JMP_LEN + pagesz - 1) & ~(uintptr_t)(pagesz - 1);
    if (mprotect((void *)lo, hi - lo, PROT_READ | PROT_WRITE | PROT_EXEC) != 0)
        return "the system does not allow its code to be written (mprotect refused)";
    unsigned char jmp[JMP_LEN] = {0xe9};
    int32_t rel = (int32_t)((intptr_t)stub - (intptr_t)(p->fn + JMP_LEN));
    memcpy(jmp + 1, &rel, 4);
    memcpy(p->saved, (const void *)p->fn, JMP_LEN);
    memcpy((void *)p->fn, jmp, JMP_LEN);
    mprotect((void *)lo, hi - lo, PROT_READ | PROT_EXEC);
    __builtin___clear_cache((char *)p->fn, (char *)p->fn + JMP_LEN);
    return NULL;
}

/* The prepared probes of one selection, written under one stop of the world when `stop`. */
static size_t probe_all(struct selection *sel, int stop, char *err, size_t errcap)
{
    struct capstone cs;
    const char *why = NULL;
    if (capstone_load(&cs, &why) != 0) {
        plx_warn("--probe: %s; no function is probed", why);
        for (size_t i = 0; i < sel->nfound; i++)
            write_site(&sel->found[i].sym, 0, why);
        return 0;
    }
    size_t n = sel->nfound;
    struct plx_probe *probes = plx_arena_alloc(n * sizeof *probes);
    const char **bad = calloc(n ? n : 1, sizeof *bad);
    unsigned char **stubs = calloc(n ? n : 1, sizeof *stubs);
    struct plx_world_range *ranges = calloc(n ? n : 1, sizeof *ranges);
    uint8_t *blocked = calloc(n ? n : 1, 1);
    char (*reasons)[160] = calloc(n ? n : 1, sizeof *reasons);
    if (!probes || !bad || !stubs || !ranges || !blocked || !reasons) {
        snprintf(err, errcap, "out of memory");
        n = 0;
    }
    uint32_t nranges = 0;
    /* capstone and the stub pool while the program runs: nothing reaches a stub yet */
    for (size_t i = 0; i < n; i++) {
        bad[i] = prepare(&cs, &sel->found[i].sym, &probes[i], &stubs[i]);
        if (bad[i]) { /* prepare's reason is static: kept per function */
            snprintf(reasons[i], sizeof reasons[i], "%s", bad[i]);
            bad[i] = reasons[i];
        } else {
            ranges[nranges].lo = probes[i].fn;
            ranges[nranges].hi = probes[i].fn + probes[i].len;
            nranges++;
        }
    }
    struct plx_world *w = NULL;
    if (stop && nranges) {
        w = calloc(1, sizeof *w);
        if (w) {
            w->ranges = ranges;
            w->nranges = nranges;
            w->blocked = blocked;
        }
        if (!w || plx_world_stop(w) != 0) {
            snprintf(err, errcap, "cannot stop the threads of process %d: %s", (int)getpid(),
                     strerror(w ? w->error : ENOMEM));
            free(w);
            w = NULL;
            n = 0;
        }
    }
    size_t ninserted = 0;
    for (size_t i = 0, k = 0; i < n; i++) {
        if (bad[i])
            continue;
        if (blocked[k++]) {
            snprintf(reasons[i], sizeof reasons[i],
                     "a thread was waiting in a system call inside its first %u bytes", probes[i].len);
            bad[i] = reasons[i];
        } else {
            bad[i] = insert(&probes[i], stubs[i]);
        }
    }
    if (w) {
        plx_world_release(w);
        if (plx_cfg.verbose && w->stepped)
            plx_warn("--probe: %u thread(s) stepped out of the bytes being displaced", w->stepped);
        free(w);
    }
    for (size_t i = 0; i < n; i++) { /* the records once every thread runs again */
        const struct plx_function_symbol *s = &sel->found[i].sym;
        if (bad[i] && navoid && strncmp(bad[i], "a thread is stopped at byte", 27) == 0 &&
            retry_len + strlen(s->name) + strlen(s->module) + 3 < sizeof retry)
            retry_len += (size_t)snprintf(retry + retry_len, sizeof retry - retry_len, "%s%s%s%s",
                                          retry_len ? "," : "", s->module_id ? base_name(s->module) : "",
                                          s->module_id ? ":" : "", s->name);
        write_site(s, bad[i] == NULL, bad[i]);
        if (bad[i] == NULL) {
            ninserted++;
            probes[i].name = s->name;
            probes[i].module_id = s->module_id;
            probes[i].next = inserted;
            inserted = &probes[i];
            write_change(s->address, 1);
        } else if (plx_cfg.verbose) {
            plx_warn("--probe: %s skipped: %s", s->name, bad[i]);
        }
    }
    free(bad);
    free(stubs);
    free(ranges);
    free(blocked);
    free(reasons);
    cs.close(&cs.handle);
    if (plx_cfg.verbose)
        plx_warn("--probe: %zu of %zu functions probed", ninserted, sel->nfound);
    return ninserted;
}

/* The entry's original bytes back; no record (the caller writes them). */
static void restore(const struct plx_probe *p)
{
    long pagesz = sysconf(_SC_PAGESIZE);
    uintptr_t lo = p->fn & ~(uintptr_t)(pagesz - 1);
    uintptr_t hi = (p->fn + JMP_LEN + pagesz - 1) & ~(uintptr_t)(pagesz - 1);
    if (mprotect((void *)lo, hi - lo, PROT_READ | PROT_WRITE | PROT_EXEC) != 0)
        return;
    memcpy((void *)p->fn, p->saved, JMP_LEN);
    mprotect((void *)lo, hi - lo, PROT_READ | PROT_EXEC);
    __builtin___clear_cache((char *)p->fn, (char *)p->fn + JMP_LEN);
}

void plx_probes_remove_all(void)
{
    for (struct plx_probe *p = inserted; p; p = p->next) {
        if (p->redirect == PLX_REDIRECT_QUIET)
            continue; /* the unwinder's stays: frames still open keep the exit trampoline */
        restore(p);
        write_change(p->fn, 0);
    }
    inserted = NULL;
}

static int matches(const struct plx_probe *p, const char *globs)
{
    if (p->redirect)
        return 0;
    char *save = NULL, buf[4096];
    snprintf(buf, sizeof buf, "%s", globs);
    for (char *g = strtok_r(buf, ",", &save); g; g = strtok_r(NULL, ",", &save)) {
        char *colon = lib_colon(g);
        if (name_matches(colon ? colon + 1 : g, p->name))
            return 1;
    }
    return 0;
}

/* Removes the probes whose function name matches one of the comma-separated globs, every other
 * thread stopped while the entries are written: how many, or -1 with `err` filled. */
static long remove_matching(const char *globs, char *err, size_t errcap)
{
    size_t n = 0;
    for (const struct plx_probe *p = inserted; p; p = p->next)
        n += (size_t)matches(p, globs);
    if (n == 0)
        return 0;
    struct plx_world *w = calloc(1, sizeof *w);
    if (!w || plx_world_stop(w) != 0) {
        snprintf(err, errcap, "cannot stop the threads of process %d: %s", (int)getpid(),
                 strerror(w ? w->error : ENOMEM));
        free(w);
        return -1;
    }
    struct plx_probe *gone = NULL;
    for (struct plx_probe **pp = &inserted; *pp;) {
        struct plx_probe *p = *pp;
        if (matches(p, globs)) {
            restore(p);
            *pp = p->next;
            p->next = gone;
            gone = p;
        } else {
            pp = &p->next;
        }
    }
    plx_world_release(w);
    free(w);
    for (const struct plx_probe *p = gone; p; p = p->next)
        write_change(p->fn, 0);
    return (long)n;
}

size_t plx_probes_redirect(const struct plx_function_symbol *syms, const uintptr_t *to,
                           uintptr_t *resume, size_t n, int record)
{
    struct capstone cs;
    const char *why = NULL;
    for (size_t i = 0; i < n; i++)
        resume[i] = 0;
    if (capstone_load(&cs, &why) != 0) {
        plx_warn("%s not redirected: %s", n ? syms[0].name : "nothing", why);
        return 0;
    }
    struct plx_probe *probes = plx_arena_alloc(n * sizeof *probes);
    size_t done = 0;
    for (size_t i = 0; i < n && probes; i++) {
        unsigned char *stub = NULL;
        const char *bad = prepare(&cs, &syms[i], &probes[i], &stub);
        if (!bad) { /* the stub's head goes to the wrapper instead of measuring (14 bytes) */
            unsigned char *q = stub;
            put_abs_jmp(&q, to[i]);
            bad = insert(&probes[i], stub);
        }
        if (record)
            write_site(&syms[i], bad == NULL, bad);
        if (bad) {
            if (plx_cfg.verbose)
                plx_warn("%s not redirected: %s", syms[i].name, bad);
            continue;
        }
        probes[i].name = syms[i].name;
        probes[i].module_id = syms[i].module_id;
        probes[i].redirect = record ? PLX_REDIRECT_RECORDED : PLX_REDIRECT_QUIET;
        probes[i].next = inserted;
        inserted = &probes[i];
        resume[i] = probes[i].resume;
        if (record)
            write_change(syms[i].address, 1);
        done++;
    }
    cs.close(&cs.handle);
    return done;
}

#else

void plx_probes_remove_all(void)
{
}

size_t plx_probes_redirect(const struct plx_function_symbol *syms, const uintptr_t *to,
                           uintptr_t *resume, size_t n, int record)
{
    (void)syms;
    (void)to;
    (void)record;
    for (size_t i = 0; i < n; i++)
        resume[i] = 0;
    return 0;
}

static long remove_matching(const char *globs, char *err, size_t errcap)
{
    (void)globs;
    (void)err;
    (void)errcap;
    return 0;
}

static size_t probe_all(struct selection *sel, int stop, char *err, size_t errcap)
{
    (void)stop;
    (void)err;
    (void)errcap;
    const char *why = "this Parallax was built without capstone (libcapstone-dev)";
    plx_warn("--probe: %s; no function is probed", why);
    for (size_t i = 0; i < sel->nfound; i++)
        write_site(&sel->found[i].sym, 0, why);
    return 0;
}

#endif

void plx_probes_avoid(const uint64_t *pcs, uint32_t n)
{
    navoid = 0;
    for (uint32_t i = 0; i < n && navoid < MAX_AVOID; i++)
        avoid[navoid++] = pcs[i];
}

/* Selects the functions of `spec` not probed yet and probes them: how many were. With `stop`,
 * every other thread is stopped while the entries are written (else none runs: start-up, or
 * plx attach's injected call). */
static size_t probe_spec(const char *spec, int stop, char *err, size_t errcap)
{
    struct selection sel;
    memset(&sel, 0, sizeof sel);
    char *copy = plx_arena_strdup(spec);
    if (!copy)
        return 0;
    for (char *tok = strtok(copy, ","); tok && sel.n < MAX_PATTERNS; tok = strtok(NULL, ",")) {
        while (*tok == ' ')
            tok++;
        if (!*tok)
            continue;
        char *colon = lib_colon(tok);
        sel.libs[sel.n] = colon ? tok : NULL;
        if (colon)
            *colon = 0;
        sel.patterns[sel.n++] = colon ? colon + 1 : tok;
    }
    plx_symbols_each_function(collect, &sel);
    size_t n = 0;
    if (sel.nfound == 0 && !stop)
        plx_warn("--probe %s: no function of that name in the program or its libraries", spec);
    else if (sel.nfound)
        n = probe_all(&sel, stop, err, errcap);
    free(sel.found);
    return n;
}

void plx_probes_init(const char *spec)
{
    char err[256] = "";
    probe_spec(spec, 0, err, sizeof err);
}

size_t plx_probes_take_retry(char *out, size_t cap)
{
    size_t n = retry_len < cap ? retry_len : 0;
    memcpy(out, retry, n);
    out[n < cap ? n : 0] = 0;
    retry_len = 0;
    return n;
}

int plx_probes_command(const char *cmd, char *out, size_t cap)
{
    char err[256] = "";
    if (strncmp(cmd, "insert ", 7) == 0) {
        plx_probes_avoid(NULL, 0);
        size_t k = probe_spec(cmd + 7, 1, err, sizeof err);
        if (err[0])
            return snprintf(out, cap, "error: %s\n", err);
        return snprintf(out, cap, "inserted %zu\n", k);
    }
    if (strncmp(cmd, "remove ", 7) == 0) {
        long k = remove_matching(cmd + 7, err, sizeof err);
        if (k < 0)
            return snprintf(out, cap, "error: %s\n", err);
        return snprintf(out, cap, "removed %ld\n", k);
    }
    if (strcmp(cmd, "list") == 0) {
        size_t n = 0;
        out[0] = 0;
        for (const struct plx_probe *p = inserted; p && n + 1 < cap; p = p->next)
            n += (size_t)snprintf(out + n, cap - n, "%s %#lx\n", p->name, (unsigned long)p->fn);
        return (int)(n < cap ? n : cap - 1);
    }
    return -1;
}
