/* Threads that wait to be told to start, so that `perf stat --per-thread -p PID` can attach to
 * each of them first. Usage: counters_wait DIR: starts 2 workers, writes DIR/ready (its pid)
 * once they wait, waits for DIR/go, then worker i (1, 2) touches 1000*i fresh pages, sleeps
 * 10*i times and spins; main joins them. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int waiting, go;
static volatile unsigned long sink;

static void *worker(void *arg)
{
    int i = (int)(long)arg;
    pthread_mutex_lock(&lock);
    waiting++;
    pthread_cond_broadcast(&cond);
    while (!go)
        pthread_cond_wait(&cond, &lock);
    pthread_mutex_unlock(&lock);
    size_t n = 1000 * (size_t)i;
    char *p = mmap(NULL, n * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    for (size_t k = 0; k < n; k++)
        p[k * 4096] = 1;
    munmap(p, n * 4096);
    for (int k = 0; k < 10 * i; k++) {
        struct timespec d = {0, 1000000};
        nanosleep(&d, NULL);
    }
    for (long k = 0; k < 20000000L * i; k++)
        sink += (unsigned long)k;
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&th[i], NULL, worker, (void *)(long)(i + 1));
    pthread_mutex_lock(&lock);
    while (waiting < 2)
        pthread_cond_wait(&cond, &lock);
    pthread_mutex_unlock(&lock);
    char path[4096], tmp[4096];
    snprintf(tmp, sizeof tmp, "%s/ready.tmp", argv[1]);
    snprintf(path, sizeof path, "%s/ready", argv[1]);
    FILE *f = fopen(tmp, "w");
    fprintf(f, "%d\n", (int)getpid());
    fclose(f);
    rename(tmp, path);
    snprintf(path, sizeof path, "%s/go", argv[1]);
    while (access(path, F_OK) != 0) {
        struct timespec d = {0, 2000000};
        nanosleep(&d, NULL);
    }
    pthread_mutex_lock(&lock);
    go = 1;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    printf("done %lu\n", sink);
    return 0;
}
