/* Built with plain gcc -O2 (no instrumentation): measured by probes (tests/e2e/test_probes.py). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>

__attribute__((noinline)) double solve(int n) { double s = 0; for (int i = 0; i < n; i++) s += sqrt((double)i); return s; }
__attribute__((noinline)) double update_a(double x) { return solve(10) + x; }
__attribute__((noinline)) double update_b(double x) { return x * 2 + solve(5); }
__attribute__((noinline)) int tiny(int x) { return x; }

static void *worker(void *arg) {
    long id = (long)arg; double acc = 0;
    for (int i = 0; i < 200 + id; i++) acc += update_a(i);
    return (void*)(long)(acc > 0);
}
int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    double acc = 0;
    for (int i = 0; i < n; i++) acc += update_b(i);
    for (int i = 0; i < 3; i++) acc += update_a(i);
    pthread_t th[4];
    for (long i = 0; i < 4; i++) pthread_create(&th[i], 0, worker, (void*)i);
    for (int i = 0; i < 4; i++) pthread_join(th[i], 0);
    volatile int v = 0; for (int i = 0; i < 7; i++) v += tiny(i);
    printf("%f %d\n", acc, v);
    return 0;
}
