/* Built with plain gcc -O2 (no instrumentation): callers that keep values in registers across
 * calls of step, as a compiler's interprocedural register allocation may (step changes rax
 * only). A probe of step must change no register (tests/e2e/test_probes.py).
 *
 * check(): xmm0-15 (all of ymm0-15 when the processor has AVX) and the caller-saved general
 * registers but rax hold a pattern of the call's number across `call step`, and are compared
 * after it; every differing register is counted. blend(): ordinary C whose doubles GCC keeps in
 * xmm registers across calls of count (IPA-RA: it knows count changes rax only). Usage: probe_vectors CALLS THREAD_CALLS: CALLS calls of
 * each kind in main, then THREAD_CALLS of each in a new thread (its first probed call is the
 * thread's first sight of the runtime). Prints the registers' width, the mismatches and blend's
 * result, which no probe may change; exit status 1 when a register changed. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* lea 1(%rdi,%rdi,2),%rax (5 bytes: the probe displaces exactly it); ret */
__asm__(".text\n.globl step\n.type step,@function\nstep:\n"
        "  lea 1(%rdi,%rdi,2), %rax\n  ret\n.size step, .-step\n");
long step(long x);

__attribute__((noinline)) long count(long x)
{
    return x * 5 + 3; /* lea 3(%rdi,%rdi,4),%rax; ret */
}

#define NGPR 7 /* rcx, rdx, rsi, rdi, r8, r9, r10, r11 but rdi (the argument) */
#define NVEC 16

struct regs {
    unsigned char v[NVEC][32];
    unsigned long g[NGPR + 1]; /* the last: rdi after the call is not compared */
};

static int use_ymm;

static void fill(struct regs *r, long n)
{
    for (int i = 0; i < NVEC; i++)
        for (int k = 0; k < 32; k++)
            r->v[i][k] = (unsigned char)(n * 131 + i * 17 + k * 7 + 1);
    for (int i = 0; i < NGPR; i++)
        r->g[i] = (unsigned long)n * 0x9E3779B97F4A7C15ul + (unsigned long)i;
}

/* Loads the registers from *in, calls step(n), stores them into *out. The call is made below
 * the red zone; the stack's alignment is whatever it is (an IPA caller's may be 8). */
#define CALL_STEP(LOAD, STORE)                                                                     \
    __asm__ volatile("mov %[in], %%r12\n mov %[out], %%r13\n"                                      \
                     LOAD                                                                          \
                     "mov 512(%%r12), %%rcx\n mov 520(%%r12), %%rdx\n mov 528(%%r12), %%rsi\n"     \
                     "mov 536(%%r12), %%r8\n mov 544(%%r12), %%r9\n mov 552(%%r12), %%r10\n"       \
                     "mov 560(%%r12), %%r11\n mov %[n], %%rdi\n"                                   \
                     "lea -128(%%rsp), %%rsp\n call step\n lea 128(%%rsp), %%rsp\n"                \
                     "mov %%rcx, 512(%%r13)\n mov %%rdx, 520(%%r13)\n mov %%rsi, 528(%%r13)\n"     \
                     "mov %%r8, 536(%%r13)\n mov %%r9, 544(%%r13)\n mov %%r10, 552(%%r13)\n"       \
                     "mov %%r11, 560(%%r13)\n" STORE                                               \
                     : "=a"(ret)                                                                   \
                     : [in] "r"(in), [out] "r"(out), [n] "r"(n)                                    \
                     : "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "r12", "r13",        \
                       "memory", "cc", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6",     \
                       "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14",        \
                       "xmm15")

#define V16(OP, A, B)                                                                              \
    OP " " A "0*32" B "0\n" OP " " A "1*32" B "1\n" OP " " A "2*32" B "2\n" OP " " A "3*32" B "3\n" \
    OP " " A "4*32" B "4\n" OP " " A "5*32" B "5\n" OP " " A "6*32" B "6\n" OP " " A "7*32" B "7\n" \
    OP " " A "8*32" B "8\n" OP " " A "9*32" B "9\n" OP " " A "10*32" B "10\n"                     \
    OP " " A "11*32" B "11\n" OP " " A "12*32" B "12\n" OP " " A "13*32" B "13\n"                \
    OP " " A "14*32" B "14\n" OP " " A "15*32" B "15\n"
#define LOADX V16("movdqu", "", "(%%r12), %%xmm")
#define LOADY V16("vmovdqu", "", "(%%r12), %%ymm")
#define SV16(OP, R)                                                                                \
    OP " %%" R "0, 0*32(%%r13)\n" OP " %%" R "1, 1*32(%%r13)\n" OP " %%" R "2, 2*32(%%r13)\n"     \
    OP " %%" R "3, 3*32(%%r13)\n" OP " %%" R "4, 4*32(%%r13)\n" OP " %%" R "5, 5*32(%%r13)\n"     \
    OP " %%" R "6, 6*32(%%r13)\n" OP " %%" R "7, 7*32(%%r13)\n" OP " %%" R "8, 8*32(%%r13)\n"     \
    OP " %%" R "9, 9*32(%%r13)\n" OP " %%" R "10, 10*32(%%r13)\n" OP " %%" R "11, 11*32(%%r13)\n" \
    OP " %%" R "12, 12*32(%%r13)\n" OP " %%" R "13, 13*32(%%r13)\n"                              \
    OP " %%" R "14, 14*32(%%r13)\n" OP " %%" R "15, 15*32(%%r13)\n"
#define STOREX SV16("movdqu", "xmm")
#define STOREY SV16("vmovdqu", "ymm") "vzeroupper\n"

static void call_xmm(struct regs *in, struct regs *out, long n)
{
    long ret;
    CALL_STEP(LOADX, STOREX);
    if (ret != 3 * n + 1)
        out->g[NGPR] = 1;
}

__attribute__((target("avx"))) static void call_ymm(struct regs *in, struct regs *out, long n)
{
    long ret;
    CALL_STEP(LOADY, STOREY);
    if (ret != 3 * n + 1)
        out->g[NGPR] = 1;
}

/* The registers that differ after one call of step. */
static long check(long n)
{
    struct regs in, out;
    fill(&in, n);
    memset(&out, 0, sizeof out);
    if (use_ymm)
        call_ymm(&in, &out, n);
    else
        call_xmm(&in, &out, n);
    int width = use_ymm ? 32 : 16;
    long bad = out.g[NGPR] != 0;
    for (int i = 0; i < NVEC; i++)
        bad += memcmp(in.v[i], out.v[i], width) != 0;
    for (int i = 0; i < NGPR; i++)
        bad += in.g[i] != out.g[i];
    return bad;
}

__attribute__((noinline)) static double blend(long calls)
{
    double a = 1.0, b = 0.25, c = 3.0;
    long k = 1;
    for (long i = 0; i < calls; i++) {
        k = count(k) & 0xffff;
        a = a * 1.0000001 + b;
        b = b * 0.9999999 + c * 1e-9;
        c = c + a * 1e-12 + (double)(k & 7);
    }
    return a + b * 3 + c * 7;
}

struct work {
    long calls, bad;
    double result;
};

static void run(struct work *w)
{
    w->bad = 0;
    for (long i = 0; i < w->calls; i++)
        w->bad += check(i + 1);
    w->result = blend(w->calls);
}

static void *thread_main(void *arg)
{
    run(arg);
    return NULL;
}

int main(int argc, char **argv)
{
    struct work m = {argc > 1 ? atol(argv[1]) : 1000, 0, 0};
    struct work t = {argc > 2 ? atol(argv[2]) : 100, 0, 0};
    __builtin_cpu_init();
    use_ymm = __builtin_cpu_supports("avx");
    run(&m);
    pthread_t th;
    if (pthread_create(&th, NULL, thread_main, &t) != 0)
        return 2;
    pthread_join(th, NULL);
    printf("width %d\nmismatches %ld %ld\nblend %.17g %.17g\n", use_ymm ? 256 : 128, m.bad, t.bad,
           m.result, t.result);
    return m.bad || t.bad ? 1 : 0;
}
