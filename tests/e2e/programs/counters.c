/* Functions with known counter behaviour: touch_pages(N) makes N minor faults on fresh pages,
 * no_touch() none, nap(K) K voluntary context switches, spin() CPU time only. Each thread of
 * `threads` faults its own number of pages. Usage: counters [pages K spins threads calls
 * sync_dir] (defaults below). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

__attribute__((noinline)) void touch_pages(int n)
{
    char *p = mmap(NULL, (size_t)n * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    for (int i = 0; i < n; i++)
        p[(size_t)i * 4096] = 1;
    munmap(p, (size_t)n * 4096);
}

__attribute__((noinline)) void no_touch(void)
{
    for (int i = 0; i < 1000; i++)
        sink += (unsigned long)i;
}

__attribute__((noinline)) void nap(int k)
{
    for (int i = 0; i < k; i++) {
        struct timespec d = {0, 1000000};
        nanosleep(&d, NULL);
    }
}

__attribute__((noinline)) void spin(long iters)
{
    for (long i = 0; i < iters; i++)
        sink += (unsigned long)i * 7;
}

__attribute__((noinline)) void step(int i)
{
    sink += (unsigned long)i;
}

static void *worker(void *arg)
{
    int n = (int)(long)arg;
    touch_pages(n);
    spin(2000000);
    return NULL;
}

int main(int argc, char **argv)
{
    int pages = argc > 1 ? atoi(argv[1]) : 500;
    int naps = argc > 2 ? atoi(argv[2]) : 20;
    long spins = argc > 3 ? atol(argv[3]) : 50000000;
    int threads = argc > 4 ? atoi(argv[4]) : 2;
    int calls = argc > 5 ? atoi(argv[5]) : 100;
    const char *sync_dir = argc > 6 ? argv[6] : NULL;
    touch_pages(pages);
    no_touch();
    nap(naps);
    spin(spins);
    for (int i = 0; i < calls; i++) {
        if (sync_dir && i == calls / 2) { /* half way: DIR/half holds our pid; wait for DIR/go */
            char path[4096];
            snprintf(path, sizeof path, "%s/half.tmp", sync_dir);
            FILE *f = fopen(path, "w");
            fprintf(f, "%d\n", (int)getpid());
            fclose(f);
            char done[4096];
            snprintf(done, sizeof done, "%s/half", sync_dir);
            rename(path, done);
            snprintf(path, sizeof path, "%s/go", sync_dir);
            while (access(path, F_OK) != 0) {
                struct timespec d = {0, 2000000};
                nanosleep(&d, NULL);
            }
        }
        step(i);
    }
    pthread_t th[16];
    for (int i = 0; i < threads && i < 16; i++)
        pthread_create(&th[i], NULL, worker, (void *)(long)(1000 * (i + 1)));
    for (int i = 0; i < threads && i < 16; i++)
        pthread_join(th[i], NULL);
    printf("done %lu\n", sink);
    return 0;
}
