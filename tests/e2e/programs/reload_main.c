/* Loads plugin argv[1], then argv[2], then argv[1] again, each with dlopen, calls its
 * plugin_entry(10), (20), (30) and unloads it with dlclose. Prints the sums, then "same
 * address" when the three plugin_entry were at one address (the loader reused the place).
 * With argv[3], each plugin's spin function (alpha_spin or beta_spin, not instrumented) also
 * runs argv[3] iterations, and "truth main NAME SECONDS" gives each one's CPU time in all (on
 * thread main, as sample_spin.c). With argv[4] "spin-only", no plugin_entry is called: no
 * instrumented function of a plugin runs, only its spin function. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    const char *libs[] = {argv[1], argv[2], argv[1]};
    long spins = argc > 3 ? atol(argv[3]) : 0;
    int entries = !(argc > 4 && strcmp(argv[4], "spin-only") == 0);
    void *at[3];
    double alpha = 0, beta = 0;
    for (int k = 0; k < 3; k++) {
        void *h = dlopen(libs[k], RTLD_NOW);
        if (!h) {
            fprintf(stderr, "dlopen: %s\n", dlerror());
            return 3;
        }
        int (*entry)(int) = (int (*)(int))dlsym(h, "plugin_entry");
        void (*alpha_spin)(long) = (void (*)(long))dlsym(h, "alpha_spin");
        void (*beta_spin)(long) = (void (*)(long))dlsym(h, "beta_spin");
        if (!entry || !(alpha_spin || beta_spin))
            return 4;
        at[k] = (void *)entry;
        if (entries)
            printf("%d\n", entry(10 * (k + 1)));
        if (spins) {
            double t0 = cpu_now();
            (alpha_spin ? alpha_spin : beta_spin)(spins);
            *(alpha_spin ? &alpha : &beta) += cpu_now() - t0;
        }
        dlclose(h);
    }
    printf("%s\n", at[0] == at[1] && at[1] == at[2] ? "same address" : "moved");
    if (spins)
        printf("truth main alpha_spin %.6f\ntruth main beta_spin %.6f\n", alpha, beta);
    return 0;
}
