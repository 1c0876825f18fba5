/* A program that takes SIGTRAP behind the C library's back, as the Go runtime does: its handler
 * is installed by the raw rt_sigaction system call (with the C library's restorer, read from a
 * signal the C library set up). Then a worker thread and main each spin known CPU times
 * ("truth THREAD FUNCTION SECONDS"), main raises one SIGTRAP of its own, and the program prints
 * how many SIGTRAPs its handler saw: its own (`own`) and those a perf event raised (`perf`,
 * si_code TRAP_PERF: samples that reached the program), and exits with status 7. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct ksigaction {
    void *handler;
    unsigned long flags;
    void *restorer;
    uint64_t mask;
};

static volatile int own, perf;
static volatile double sink;

static void on_trap(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)uc;
    if (si->si_code == 6) /* TRAP_PERF */
        perf++;
    else
        own++;
}

static double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

__attribute__((noinline)) static void spin(double seconds)
{
    double t0 = cpu_now(), x = 0;
    while (cpu_now() - t0 < seconds)
        for (int i = 0; i < 20000; i++)
            x += i * 0.5;
    sink = x;
}

__attribute__((noinline)) void worker_spin(double s)
{
    double t0 = cpu_now();
    spin(s);
    printf("truth worker worker_spin %.6f\n", cpu_now() - t0);
}

__attribute__((noinline)) void main_spin(double s)
{
    double t0 = cpu_now();
    spin(s);
    printf("truth main main_spin %.6f\n", cpu_now() - t0);
}

static void *worker(void *arg)
{
    (void)arg;
    worker_spin(0.4);
    return NULL;
}

int main(void)
{
    struct sigaction usr;
    memset(&usr, 0, sizeof usr);
    usr.sa_handler = SIG_IGN;
    sigaction(SIGUSR2, &usr, NULL);
    struct ksigaction k;
    memset(&k, 0, sizeof k);
    syscall(SYS_rt_sigaction, SIGUSR2, NULL, &k, sizeof k.mask); /* the C library's restorer */
    struct ksigaction trap = {(void *)on_trap, SA_SIGINFO | SA_RESTART | 0x04000000 /* SA_RESTORER */,
                              k.restorer, 0};
    if (syscall(SYS_rt_sigaction, SIGTRAP, &trap, NULL, sizeof trap.mask) != 0) {
        perror("rt_sigaction");
        return 1;
    }
    pthread_t th;
    pthread_create(&th, NULL, worker, NULL);
    pthread_join(th, NULL);
    main_spin(0.4);
    raise(SIGTRAP);
    printf("own %d perf %d\n", own, perf);
    fflush(stdout);
    return 7;
}
