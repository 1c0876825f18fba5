/* Call-stack sampling's truth: functions that spin known CPU times on two threads, each
 * printing the CPU time it took by its thread's clock ("truth THREAD FUNCTION SECONDS").
 * Built plain (gcc/clang -O2 -g -fomit-frame-pointer, no instrumentation). -DREGION: alpha runs
 * inside the API region "solve"; -DMPI: every rank does the same between MPI_Init and
 * MPI_Finalize; -DDEEP: everything runs 80 calls deep (more frames than a small sample tree);
 * -DLIBM: the spin loop calls libm's cos (frames in a shared library); -DKILL: once both threads
 * have spun, main prints "ready PID" and both threads block forever (for a SIGKILL); -DREUSE
 * (with KILL): a thread spinning delta runs and ends before the worker starts. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#ifdef LIBM
#include <math.h>
#endif
#ifdef MPI
#include <mpi.h>
#endif
#ifdef KILL
#include <semaphore.h>
#include <unistd.h>
static sem_t spun;
#endif

#ifdef REGION
/* weak: the program runs without libplx; under plx run the preloaded runtime defines them */
void plx_region_begin(const char *name) __attribute__((weak));
void plx_region_end(const char *name) __attribute__((weak));
#endif

static double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static volatile double sink;

__attribute__((noinline)) static void spin(double seconds)
{
    double t0 = cpu_now(), x = 0;
    while (cpu_now() - t0 < seconds)
        for (int i = 0; i < 20000; i++)
#ifdef LIBM
            x += cos(x + i);
#else
            x += i * 0.5;
#endif
    sink = x;
}

__attribute__((noinline)) void alpha(double s)
{
    double t0 = cpu_now();
    spin(s);
    printf("truth main alpha %.6f\n", cpu_now() - t0);
}

__attribute__((noinline)) void beta(double s)
{
    double t0 = cpu_now();
    spin(s);
    printf("truth main beta %.6f\n", cpu_now() - t0);
}

__attribute__((noinline)) void gamma_(double s)
{
    double t0 = cpu_now();
    spin(s);
    printf("truth worker gamma_ %.6f\n", cpu_now() - t0);
}

#ifdef REUSE
__attribute__((noinline)) void delta(double s)
{
    double t0 = cpu_now();
    spin(s);
    printf("truth early delta %.6f\n", cpu_now() - t0);
}

static void *early(void *arg)
{
    (void)arg;
    delta(0.2);
    return NULL;
}
#endif

static void *worker(void *arg)
{
    (void)arg;
    gamma_(0.6);
#ifdef KILL
    fflush(stdout);
    sem_post(&spun);
    for (;;)
        pause();
#endif
    return NULL;
}

__attribute__((noinline)) static int work(int depth)
{
    if (depth > 0) {
        int r = work(depth - 1);
        sink += r;
        return r + 1;
    }
    pthread_t th;
#ifdef REUSE
    pthread_create(&th, NULL, early, NULL);
    pthread_join(th, NULL);
#endif
    pthread_create(&th, NULL, worker, NULL);
#ifdef REGION
    plx_region_begin("solve");
#endif
    alpha(0.5);
#ifdef REGION
    plx_region_end("solve");
#endif
    beta(0.3);
#ifdef KILL
    while (sem_wait(&spun) != 0)
        ;
    printf("ready %d\n", (int)getpid());
    fflush(stdout);
    for (;;)
        pause();
#endif
    pthread_join(th, NULL);
    return 0;
}

int main(int argc, char **argv)
{
#ifdef MPI
    MPI_Init(&argc, &argv);
#endif
#ifdef KILL
    sem_init(&spun, 0, 0);
#endif
    int depth = 0;
#ifdef DEEP
    depth = 80;
#endif
    work(depth);
    fflush(stdout);
#ifdef MPI
    MPI_Finalize();
#endif
    (void)argc;
    (void)argv;
    return 0;
}
