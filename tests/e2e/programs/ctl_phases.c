/* Built with plain gcc -O2: the target of plx ctl over the control socket (test_probes.py).
 * ctl_phases DIR N: writes DIR/pid, then for phase p = 1, 2, 3: waits for DIR/go<p>, calls
 * phase_marker() once and, in each of 2 threads, work() N*p times, then writes DIR/done<p>.
 * Meanwhile a thread sleeps in 2 ms nanosleep()s; at DIR/quit the program prints how many it
 * slept, how many returned early with EINTR and how many were cut short of 2 ms. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static const char *dir;
static long n_calls;
static atomic_int quit;
static long sleeps, eintr, short_sleeps;

__attribute__((noinline)) long work(long x)
{
    volatile long s = 0;
    for (int i = 0; i < 50; i++)
        s += i ^ x;
    return s;
}

static volatile long phases_seen;

__attribute__((noinline)) void phase_marker(int p)
{
    for (int i = 0; i < p; i++)
        phases_seen += i + 1;
}

static int exists(const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return access(path, F_OK) == 0;
}

static void touch(const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (f)
        fclose(f);
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void *sleeper(void *arg)
{
    (void)arg;
    while (!atomic_load(&quit)) {
        struct timespec d = {0, 2000000};
        double t0 = now();
        int rc = nanosleep(&d, NULL);
        double took = now() - t0;
        sleeps++;
        if (rc != 0 && errno == EINTR)
            eintr++;
        else if (took < 0.002)
            short_sleeps++;
    }
    return NULL;
}

static long sums[2];
static int phase;

static void *worker(void *arg)
{
    long id = (long)arg, s = 0;
    for (long i = 0; i < n_calls * phase; i++)
        s += work(i + id);
    sums[id] += s;
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    dir = argv[1];
    n_calls = atol(argv[2]);
    char path[4096], tmp[4200]; /* written whole, then renamed: never read empty */
    snprintf(path, sizeof path, "%s/pid", dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return 1;
    fprintf(f, "%d\n", (int)getpid());
    fclose(f);
    rename(tmp, path);
    pthread_t s;
    pthread_create(&s, NULL, sleeper, NULL);
    for (phase = 1; phase <= 3; phase++) {
        char go[16], done[16];
        snprintf(go, sizeof go, "go%d", phase);
        snprintf(done, sizeof done, "done%d", phase);
        while (!exists(go))
            usleep(1000);
        phase_marker(phase);
        pthread_t th[2];
        for (long i = 0; i < 2; i++)
            pthread_create(&th[i], NULL, worker, (void *)i);
        for (int i = 0; i < 2; i++)
            pthread_join(th[i], NULL);
        touch(done);
    }
    while (!exists("quit"))
        usleep(1000);
    atomic_store(&quit, 1);
    pthread_join(s, NULL);
    printf("checksum %ld\nsleeps %s eintr %ld short %ld\n", sums[0] + sums[1],
           sleeps > 0 ? "some" : "none", eintr, short_sleeps);
    return 0;
}
