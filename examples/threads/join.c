/* A shared-memory parallel hash join, the program of the IPS-2 paper's clock-precision study
 * at small scale: two relations are generated and shuffled, every thread partitions its slice
 * of both by the join key, the threads exchange their partitions (barriers between the steps),
 * then each joins its partition. Blocks are read and written by many short calls (readblk,
 * writeblk): a coarse clock gives their time to whatever runs when it ticks.
 *
 *   join [THREADS] [TUPLES]        defaults: 4 threads, 2000000 tuples per relation */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK 64

static int nthreads = 4;
static long ntuples = 2000000;
static uint32_t *rel_r, *rel_s;
static uint32_t **parts_r, **parts_s; /* [from thread * nthreads + to] */
static long *count_r, *count_s;
static uint32_t **mine_r, **mine_s;
static long *mine_nr, *mine_ns;
static long *matches;
static pthread_barrier_t step;

static uint32_t next_random(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return (uint32_t)*x;
}

static void random_shuffle(uint32_t *a, long n, uint64_t seed)
{
    for (long i = n - 1; i > 0; i--) {
        long j = next_random(&seed) % (uint64_t)(i + 1);
        uint32_t t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
}

static void init_relation(uint32_t *a, long n, uint64_t seed)
{
    for (long i = 0; i < n; i++)
        a[i] = (uint32_t)(i * 7 + 3);
    random_shuffle(a, n, seed);
}

static int owner(uint32_t key)
{
    return (int)((key * 2654435761u) >> 16) % nthreads;
}

/* Reads one block of a relation into buf; returns the tuples read. */
long readblk(const uint32_t *rel, long from, long to, uint32_t *buf)
{
    long n = to - from < BLOCK ? to - from : BLOCK;
    memcpy(buf, rel + from, (size_t)n * sizeof *buf);
    return n;
}

void writeblk(uint32_t *dst, const uint32_t *buf, long n)
{
    memcpy(dst, buf, (size_t)n * sizeof *buf);
}

static void partition(const uint32_t *rel, long from, long to, uint32_t **parts, long *counts,
                      int me)
{
    uint32_t buf[BLOCK];
    for (long i = from; i < to;) {
        long n = readblk(rel, i, to, buf);
        for (long k = 0; k < n; k++) {
            int o = owner(buf[k]);
            parts[me * nthreads + o][counts[me * nthreads + o]++] = buf[k];
        }
        i += n;
    }
}

static void exchange_buffers(int me, uint32_t **parts, long *counts, uint32_t **mine, long *n)
{
    long total = 0;
    for (int t = 0; t < nthreads; t++)
        total += counts[t * nthreads + me];
    mine[me] = malloc((size_t)(total ? total : 1) * sizeof(uint32_t));
    long at = 0;
    for (int t = 0; t < nthreads; t++) {
        uint32_t *src = parts[t * nthreads + me];
        for (long i = 0; i < counts[t * nthreads + me]; i += BLOCK) {
            long k = counts[t * nthreads + me] - i < BLOCK ? counts[t * nthreads + me] - i : BLOCK;
            writeblk(mine[me] + at, src + i, k);
            at += k;
        }
    }
    n[me] = total;
}

static long effect_join(const uint32_t *r, long nr, const uint32_t *s, long ns)
{
    long size = 2;
    int bits = 1;
    while (size < 2 * nr) {
        size <<= 1;
        bits++;
    }
    uint32_t *table = calloc((size_t)size, sizeof *table);
    for (long i = 0; i < nr; i++) {
        long h = (long)((r[i] * 2654435761u) >> (32 - bits));
        while (table[h])
            h = (h + 1) & (size - 1);
        table[h] = r[i] + 1;
    }
    long found = 0;
    for (long i = 0; i < ns; i++) {
        long h = (long)((s[i] * 2654435761u) >> (32 - bits));
        while (table[h]) {
            if (table[h] == s[i] + 1) {
                found++;
                break;
            }
            h = (h + 1) & (size - 1);
        }
    }
    free(table);
    return found;
}

static void *joiner(void *arg)
{
    int me = (int)(long)arg;
    long from = ntuples * me / nthreads, to = ntuples * (me + 1) / nthreads;
    partition(rel_r, from, to, parts_r, count_r, me);
    partition(rel_s, from, to, parts_s, count_s, me);
    pthread_barrier_wait(&step);
    exchange_buffers(me, parts_r, count_r, mine_r, mine_nr);
    exchange_buffers(me, parts_s, count_s, mine_s, mine_ns);
    pthread_barrier_wait(&step);
    matches[me] = effect_join(mine_r[me], mine_nr[me], mine_s[me], mine_ns[me]);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        nthreads = atoi(argv[1]);
    if (argc > 2)
        ntuples = atol(argv[2]);
    if (nthreads < 1 || nthreads > 64 || ntuples < 1) {
        fprintf(stderr, "usage: join [THREADS 1-64] [TUPLES]\n");
        return 2;
    }
    rel_r = malloc((size_t)ntuples * sizeof *rel_r);
    rel_s = malloc((size_t)ntuples * sizeof *rel_s);
    init_relation(rel_r, ntuples, 1);
    init_relation(rel_s, ntuples, 2);
    int nn = nthreads * nthreads;
    parts_r = malloc((size_t)nn * sizeof *parts_r);
    parts_s = malloc((size_t)nn * sizeof *parts_s);
    count_r = calloc((size_t)nn, sizeof *count_r);
    count_s = calloc((size_t)nn, sizeof *count_s);
    for (int i = 0; i < nn; i++) {
        long cap = ntuples / nthreads + 1;
        parts_r[i] = malloc((size_t)cap * sizeof(uint32_t));
        parts_s[i] = malloc((size_t)cap * sizeof(uint32_t));
    }
    mine_r = calloc((size_t)nthreads, sizeof *mine_r);
    mine_s = calloc((size_t)nthreads, sizeof *mine_s);
    mine_nr = calloc((size_t)nthreads, sizeof *mine_nr);
    mine_ns = calloc((size_t)nthreads, sizeof *mine_ns);
    matches = calloc((size_t)nthreads, sizeof *matches);
    pthread_barrier_init(&step, NULL, (unsigned)nthreads);
    pthread_t th[64];
    for (int t = 0; t < nthreads; t++)
        pthread_create(&th[t], NULL, joiner, (void *)(long)t);
    long total = 0;
    for (int t = 0; t < nthreads; t++) {
        pthread_join(th[t], NULL);
        total += matches[t];
    }
    printf("join: %ld x %ld tuples, %d threads, %ld matches\n", ntuples, ntuples, nthreads, total);
    return total == ntuples ? 0 : 1;
}
