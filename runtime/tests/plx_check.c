/* plx_check: reads an experiment the way spec/format.md defines it and checks expectations.
 * The runtime tests use it so they run without the engine, under the sanitizers.
 *
 *   plx_check DIR [--processes N] [--threads N] [--calls NAME=N] [--thread-name NAME=N]
 *                 [--min-calls NAME=N] [--ended] [--end-signal N] [--min-events N] [--print]
 *                 [--sent S:D=N] [--sent-bytes S:D=N] [--received S:D=N] [--traced S:D=N]
 *                 [--traced-recv S:D=N] [--ranks N]
 * Calls come from the profile, or from the trace's enter events when the profile has none.
 * Messages between world ranks S and D: --sent/--sent-bytes from the sender's MessageStats,
 * --received from the receiver's, --traced/--traced-recv from send/receive trace events. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXR 65536
static char *region_name[MAXR];
static uint64_t calls_by_region[MAXR];
static uint64_t incl_by_region[MAXR], excl_by_region[MAXR];
static int processes, threads, ended, end_signal = -1, errors;
static uint64_t trace_enters, trace_events;
static char thread_names[32768][64];
static unsigned thread_name_count;
static int printing;

#define MAXRANK 256
static int cur_rank = -1, ranks_seen;
static uint64_t sent[MAXRANK][MAXRANK], sent_bytes[MAXRANK][MAXRANK], recvd[MAXRANK][MAXRANK];
static uint64_t tsent[MAXRANK][MAXRANK], trecvd[MAXRANK][MAXRANK];
struct pending { uint32_t thread, peer; uint8_t dir; uint64_t count, bytes; };
/* SyncStats records, applied after the live files: a thread's live file replaces its records
 * (the records of a process killed while writing them may be partial) */
struct srec { uint32_t thread, object; uint64_t v[5]; };
static struct srec srecs[65536];
static int nsrecs;
static unsigned char live_mpi[65536], live_sync[65536];
/* synchronization objects of the process being read, then of all processes */
#define MAXOBJ 4096
struct sobj { int kind, by_init; uint64_t acq, contended, wait, hold, releases; };
static struct sobj sobjs[MAXOBJ], all_sobjs[65536];
static int nsobjs, nall_sobjs;
static unsigned char has_sync[65536];
static unsigned char profiled[65536], has_stats[65536]; /* by thread index, this process */
/* CPU ns of `cputime` functions by region name: NodeCpu needs the nodes' regions */
static uint32_t node_region[1 << 16];
static uint64_t cpu_by_region[MAXR];
static struct pending pend[65536];
static int npend;

static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *p = malloc((size_t)n + 1);
    *len = fread(p, 1, (size_t)n, f);
    fclose(f);
    return p;
}

struct cur { const unsigned char *p, *end; };
static uint32_t u32(struct cur *c) { uint32_t v = 0; if (c->p + 4 <= c->end) memcpy(&v, c->p, 4); c->p += 4; return v; }
static uint64_t u64(struct cur *c) { uint64_t v = 0; if (c->p + 8 <= c->end) memcpy(&v, c->p, 8); c->p += 8; return v; }
static char *str(struct cur *c)
{
    uint32_t n = u32(c);
    if (c->p + n > c->end) { errors++; return strdup("?"); }
    char *s = malloc(n + 1);
    memcpy(s, c->p, n);
    s[n] = 0;
    c->p += n;
    return s;
}

/* Live files (spec/format.md): the tree and MPI statistics of threads killed before they were
 * written as records. */
static void read_live_files(const char *process_path)
{
    char dir[8192];
    snprintf(dir, sizeof dir, "%s", process_path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        return;
    *slash = 0;
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        unsigned thread;
        char kind[32];
        if (sscanf(e->d_name, "live.%u.%31s", &thread, kind) != 2 || thread >= 65536)
            continue;
        char path[8500];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        size_t len;
        unsigned char *b = slurp(path, &len);
        if (!b || len < 64 || memcmp(b, "PLXL", 4) != 0) {
            free(b);
            continue;
        }
        uint16_t item;
        uint32_t count;
        memcpy(&item, b + 6, 2);
        memcpy(&count, b + 12, 4);
        if (strcmp(kind, "nodes") == 0 && !profiled[thread] && item == 48) {
            for (uint32_t i = 1; i < count && 64 + (size_t)(i + 1) * 48 <= len; i++) {
                uint32_t region;
                uint64_t calls;
                memcpy(&region, b + 64 + i * 48 + 4, 4);
                memcpy(&calls, b + 64 + i * 48 + 16, 8);
                if (region < MAXR)
                    calls_by_region[region] += calls;
            }
            if (printing)
                printf("recovered live.%u.nodes\n", thread);
        } else if (strcmp(kind, "sync") == 0 && item == 64) {
            live_sync[thread] = 1;
            for (uint32_t i = 0; i < count && 64 + (size_t)(i + 1) * 64 <= len; i++) {
                const unsigned char *x = b + 64 + (size_t)i * 64;
                uint32_t id;
                uint16_t used;
                memcpy(&id, x + 8, 4);
                memcpy(&used, x + 12, 2);
                if (!used || id >= MAXOBJ)
                    continue;
                uint64_t v[5];
                memcpy(v, x + 16, sizeof v);
                sobjs[id].acq += v[0];
                sobjs[id].contended += v[1];
                sobjs[id].wait += v[2];
                sobjs[id].hold += v[3];
                sobjs[id].releases += v[4];
            }
        } else if (strcmp(kind, "mpi") == 0 && item == 56) {
            live_mpi[thread] = 1;
            for (uint32_t i = 0; i < count && 64 + (size_t)(i + 1) * 56 <= len; i++) {
                const unsigned char *x = b + 64 + (size_t)i * 56;
                uint32_t peer, used;
                uint64_t n, bytes;
                memcpy(&peer, x + 4, 4);
                memcpy(&used, x + 12, 4);
                memcpy(&n, x + 24, 8);
                memcpy(&bytes, x + 32, 8);
                if (used && peer != 0xFFFFFFFFu && npend < 65536)
                    pend[npend++] = (struct pending){0xFFFFFFFFu, peer, x[16], n, bytes};
            }
        }
        free(b);
    }
    closedir(d);
}

/* Thread index → slot in thread_names (per process; processes are read one at a time). */
static unsigned name_base;

static void read_process(const char *path)
{
    size_t len;
    unsigned char *buf = slurp(path, &len);
    if (!buf || len < 16 || memcmp(buf, "PLX1", 4) != 0) {
        fprintf(stderr, "plx_check: %s: not a process file\n", path);
        errors++;
        return;
    }
    processes++;
    name_base = thread_name_count;
    cur_rank = -1;
    npend = 0;
    memset(profiled, 0, sizeof profiled);
    memset(has_stats, 0, sizeof has_stats);
    memset(has_sync, 0, sizeof has_sync);
    memset(sobjs, 0, sizeof sobjs);
    memset(live_mpi, 0, sizeof live_mpi);
    memset(live_sync, 0, sizeof live_sync);
    nsobjs = 0;
    nsrecs = 0;
    size_t off = 16;
    while (off + 8 <= len) {
        uint16_t type;
        uint32_t plen;
        memcpy(&type, buf + off, 2);
        memcpy(&plen, buf + off + 4, 4);
        if (off + 8 + plen > len) {
            fprintf(stderr, "plx_check: %s: truncated record at %zu\n", path, off);
            break;
        }
        struct cur c = {buf + off + 8, buf + off + 8 + plen};
        switch (type) {
        case 5: {
            uint32_t id = u32(&c);
            c.p += 1 + 1 + 4 + 8;
            char *name = str(&c);
            if (id < MAXR && !region_name[id])
                region_name[id] = name;
            else
                free(name);
            if (printing)
                printf("region %u %s\n", id, name);
            break;
        }
        case 6: {
            uint32_t idx = u32(&c);
            c.p += 4 + 4 + 8 + 8;
            char *name = str(&c);
            threads++;
            if (name_base + idx < 32768) {
                snprintf(thread_names[name_base + idx], 64, "%s", name);
                if (name_base + idx + 1 > thread_name_count)
                    thread_name_count = name_base + idx + 1;
            }
            free(name);
            break;
        }
        case 7: {
            uint32_t idx = u32(&c);
            char *name = str(&c);
            if (name_base + idx < 32768)
                snprintf(thread_names[name_base + idx], 64, "%s", name);
            free(name);
            break;
        }
        case 8: {
            uint32_t pt;
            memcpy(&pt, c.p, 4);
            if (pt < 65536)
                profiled[pt] = 1;
            c.p += 4 + 8 + 8 + 8 + 8 + 8;
            uint32_t n = u32(&c);
            for (uint32_t i = 0; i < n; i++) {
                u32(&c);
                uint32_t region = u32(&c);
                if (i < (1u << 16))
                    node_region[i] = region;
                uint64_t calls = u64(&c);
                u64(&c);
                uint64_t incl = u64(&c), excl = u64(&c);
                if (excl > incl) {
                    fprintf(stderr, "plx_check: exclusive > inclusive for region %u\n", region);
                    errors++;
                }
                if (region < MAXR) {
                    calls_by_region[region] += calls;
                    incl_by_region[region] += incl;
                    excl_by_region[region] += excl;
                }
            }
            break;
        }
        case 18: {
            uint32_t id = u32(&c);
            if (id < MAXOBJ) {
                sobjs[id].kind = *c.p;
                sobjs[id].by_init = c.p[1] == 0;
                if ((int)id >= nsobjs)
                    nsobjs = (int)id + 1;
            }
            break;
        }
        case 19: {
            uint32_t th = u32(&c), id = u32(&c);
            if (th < 65536)
                has_sync[th] = 1;
            if (nsrecs < 65536) {
                struct srec *r = &srecs[nsrecs++];
                r->thread = th;
                r->object = id;
                for (int k = 0; k < 5; k++)
                    r->v[k] = u64(&c);
            }
            break;
        }
        case 20: { /* NodeCpu follows its thread's ThreadProfile */
            u32(&c);
            uint32_t n = u32(&c);
            for (uint32_t i = 0; i < n; i++) {
                uint32_t node = u32(&c);
                uint64_t ns = u64(&c);
                if (node < (1u << 16) && node_region[node] < MAXR)
                    cpu_by_region[node_region[node]] += ns;
            }
            break;
        }
        case 14: {
            cur_rank = (int)u32(&c);
            ranks_seen++;
            break;
        }
        case 17: {
            uint32_t st;
            memcpy(&st, c.p, 4);
            if (st < 65536)
                has_stats[st] = 1;
            c.p += 8;
            uint32_t peer = u32(&c);
            uint8_t dir = *c.p++;
            c.p += 4;
            uint64_t count = u64(&c), bytes = u64(&c);
            if (peer != 0xFFFFFFFFu && npend < 65536)
                pend[npend++] = (struct pending){st, peer, dir, count, bytes};
            break;
        }
        case 12: {
            u64(&c);
            uint8_t reason = *c.p++;
            int32_t status;
            memcpy(&status, c.p, 4);
            ended++;
            if (reason == 1)
                end_signal = status;
            break;
        }
        default:
            break;
        }
        off += 8 + plen;
    }
    free(buf);
    read_live_files(path);
    for (int i = 0; i < nsrecs; i++) {
        const struct srec *r = &srecs[i];
        if (r->object >= MAXOBJ || (r->thread < 65536 && live_sync[r->thread]))
            continue;
        sobjs[r->object].acq += r->v[0];
        sobjs[r->object].contended += r->v[1];
        sobjs[r->object].wait += r->v[2];
        sobjs[r->object].hold += r->v[3];
        sobjs[r->object].releases += r->v[4];
    }
    for (int i = 0; i < nsobjs && nall_sobjs < 65536; i++)
        all_sobjs[nall_sobjs++] = sobjs[i];
    for (int i = 0; i < npend && cur_rank >= 0 && cur_rank < MAXRANK; i++) {
        if (pend[i].peer >= MAXRANK || (pend[i].thread < 65536 && live_mpi[pend[i].thread]))
            continue;
        if (pend[i].dir == 0) {
            sent[cur_rank][pend[i].peer] += pend[i].count;
            sent_bytes[cur_rank][pend[i].peer] += pend[i].bytes;
        } else {
            recvd[pend[i].peer][cur_rank] += pend[i].count;
        }
    }
}

static void read_trace(const char *path)
{
    size_t len;
    unsigned char *buf = slurp(path, &len);
    if (!buf)
        return;
    size_t off = 16;
    while (off + 8 <= len) {
        uint16_t type;
        uint32_t plen;
        memcpy(&type, buf + off, 2);
        memcpy(&plen, buf + off + 4, 4);
        if (off + 8 + plen > len)
            break;
        if (type == 32) {
            uint32_t count;
            memcpy(&count, buf + off + 8 + 4, 4);
            const unsigned char *ev = buf + off + 8 + 32;
            for (uint32_t i = 0; i < count; i++) {
                uint64_t w;
                memcpy(&w, ev + 8 * i, 8);
                unsigned kind = (unsigned)(w >> 62);
                trace_events++;
                if (kind == 0) {
                    uint32_t region = (uint32_t)((w >> 40) & 0x3FFFFF);
                    trace_enters++;
                    if (region < MAXR)
                        calls_by_region[region]++;
                } else if (kind == 2) {
                    unsigned sub = (unsigned)((w >> 56) & 0x3F), words = (unsigned)((w >> 48) & 0xFF);
                    if ((sub == 2 || sub == 3) && i + 1 < count && cur_rank >= 0 && cur_rank < MAXRANK) {
                        uint64_t pt;
                        memcpy(&pt, ev + 8 * (i + 1), 8);
                        uint32_t peer = (uint32_t)pt;
                        if (peer < MAXRANK) {
                            if (sub == 2)
                                tsent[cur_rank][peer]++;
                            else
                                trecvd[peer][cur_rank]++;
                        }
                    }
                    i += words;
                }
            }
        }
        off += 8 + plen;
    }
    free(buf);
}

/* Region ids are per process: totals are kept by name. */
static struct { char *name; uint64_t calls, cpu; } totals[MAXR];
static int ntotals;

static void fold_process(void)
{
    for (int i = 0; i < MAXR; i++) {
        if (!region_name[i])
            continue;
        int j = 0;
        while (j < ntotals && strcmp(totals[j].name, region_name[i]) != 0)
            j++;
        if (j == ntotals && ntotals < MAXR)
            totals[ntotals++].name = strdup(region_name[i]);
        totals[j].calls += calls_by_region[i];
        totals[j].cpu += cpu_by_region[i];
        cpu_by_region[i] = 0;
        if (printing && calls_by_region[i])
            printf("%-40s calls=%llu incl=%llu excl=%llu\n", region_name[i],
                   (unsigned long long)calls_by_region[i], (unsigned long long)incl_by_region[i],
                   (unsigned long long)excl_by_region[i]);
        free(region_name[i]);
        region_name[i] = NULL;
        calls_by_region[i] = incl_by_region[i] = excl_by_region[i] = 0;
    }
}

static uint64_t calls_of(const char *name)
{
    for (int j = 0; j < ntotals; j++)
        if (strcmp(totals[j].name, name) == 0)
            return totals[j].calls;
    return 0;
}

static int expect(const char *what, long long got, long long want)
{
    if (got == want)
        return 0;
    fprintf(stderr, "plx_check: %s: got %lld, expected %lld\n", what, got, want);
    return 1;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: plx_check DIR [expectations]\n");
        return 2;
    }
    for (int i = 2; i < argc; i++)
        if (strcmp(argv[i], "--print") == 0)
            printing = 1;
    DIR *d = opendir(argv[1]);
    if (!d) {
        fprintf(stderr, "plx_check: cannot open %s\n", argv[1]);
        return 2;
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[8192];
        snprintf(path, sizeof path, "%s/%s/process.plx", argv[1], e->d_name);
        /* trace events refer to this process's regions: read the trace right after */
        read_process(path);
        snprintf(path, sizeof path, "%s/%s/trace.plx", argv[1], e->d_name);
        read_trace(path);
        fold_process();
    }
    closedir(d);
    int fails = errors;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : "";
        if (strcmp(a, "--processes") == 0) {
            fails += expect("processes", processes, atoll(v)); i++;
        } else if (strcmp(a, "--threads") == 0) {
            fails += expect("threads", threads, atoll(v)); i++;
        } else if (strcmp(a, "--ended") == 0) {
            fails += expect("processes ended", ended, processes);
        } else if (strcmp(a, "--end-signal") == 0) {
            fails += expect("end signal", end_signal, atoll(v)); i++;
        } else if (strcmp(a, "--min-events") == 0) {
            if ((long long)trace_events < atoll(v)) {
                fprintf(stderr, "plx_check: %llu trace events, expected at least %s\n",
                        (unsigned long long)trace_events, v);
                fails++;
            }
            i++;
        } else if (strcmp(a, "--sync-acq") == 0 || strcmp(a, "--sync-releases") == 0) {
            /* KIND=N: total over the objects of a kind (0 mutex ... 6 thread) */
            int kind;
            long long want, got = 0;
            if (sscanf(v, "%d=%lld", &kind, &want) != 2) {
                fprintf(stderr, "plx_check: bad %s %s\n", a, v);
                return 2;
            }
            for (int k = 0; k < nall_sobjs; k++)
                if (all_sobjs[k].kind == kind)
                    got += (long long)(a[7] == 'a' ? all_sobjs[k].acq : all_sobjs[k].releases);
            char what[64];
            snprintf(what, sizeof what, "%s kind %d", a + 2, kind);
            fails += expect(what, got, want);
            i++;
        } else if (strcmp(a, "--sync-quiet") == 0 || strcmp(a, "--sync-waited") == 0 ||
                   strcmp(a, "--sync-named-by-init") == 0 || strcmp(a, "--sync-named-by-use") == 0) {
            /* N: the object with exactly N acquisitions was never contended nor waited /
             * waited and was contended / was named by its init call / by its first use */
            long long n = atoll(v);
            int found = 0;
            for (int k = 0; k < nall_sobjs; k++) {
                const struct sobj *o = &all_sobjs[k];
                if ((long long)o->acq != n)
                    continue;
                found = 1;
                int ok = a[7] == 'q'   ? o->contended == 0 && o->wait == 0
                         : a[7] == 'w' ? o->contended > 0 && o->wait > 0
                         : a[16] == 'i' ? o->by_init
                                        : !o->by_init;
                if (!ok) {
                    fprintf(stderr, "plx_check: %s %lld: contended %llu wait %llu by_init %d\n", a, n,
                            (unsigned long long)o->contended, (unsigned long long)o->wait, o->by_init);
                    fails++;
                }
            }
            if (!found) {
                fprintf(stderr, "plx_check: %s: no object with %lld acquisitions\n", a, n);
                fails++;
            }
            i++;
        } else if (strcmp(a, "--cpu-ms-min") == 0 || strcmp(a, "--cpu-ms-max") == 0) {
            char name[512];
            const char *eq = strrchr(v, '=');
            if (!eq) { fprintf(stderr, "plx_check: bad %s %s\n", a, v); return 2; }
            snprintf(name, sizeof name, "%.*s", (int)(eq - v), v);
            double want = atof(eq + 1), got = -1;
            for (int j = 0; j < ntotals; j++)
                if (strcmp(totals[j].name, name) == 0)
                    got = (double)totals[j].cpu / 1e6;
            int bad = a[10] == 'i' ? got < want : got > want;
            if (got < 0 || bad) {
                fprintf(stderr, "plx_check: CPU time of %s: %.3f ms (%s %.3f)\n", name, got, a + 10, want);
                fails++;
            }
            i++;
        } else if (strcmp(a, "--ranks") == 0) {
            fails += expect("ranks", ranks_seen, atoll(v)); i++;
        } else if (strncmp(a, "--sent", 6) == 0 || strcmp(a, "--received") == 0 ||
                   strncmp(a, "--traced", 8) == 0) {
            int src, dst;
            long long want;
            if (sscanf(v, "%d:%d=%lld", &src, &dst, &want) != 3 || src < 0 || dst < 0 ||
                src >= MAXRANK || dst >= MAXRANK) {
                fprintf(stderr, "plx_check: bad %s %s (expected S:D=N)\n", a, v);
                return 2;
            }
            uint64_t(*m)[MAXRANK] = strcmp(a, "--sent") == 0         ? sent
                                    : strcmp(a, "--sent-bytes") == 0 ? sent_bytes
                                    : strcmp(a, "--received") == 0  ? recvd
                                    : strcmp(a, "--traced") == 0    ? tsent
                                                                    : trecvd;
            char what[64];
            snprintf(what, sizeof what, "%s %d:%d", a + 2, src, dst);
            fails += expect(what, (long long)m[src][dst], want);
            i++;
        } else if (strcmp(a, "--calls") == 0 || strcmp(a, "--thread-name") == 0 ||
                   strcmp(a, "--min-calls") == 0) {
            char name[512];
            const char *eq = strrchr(v, '=');
            if (!eq) { fprintf(stderr, "plx_check: bad %s %s\n", a, v); return 2; }
            snprintf(name, sizeof name, "%.*s", (int)(eq - v), v);
            long long want = atoll(eq + 1), got = 0;
            if (a[2] == 'm') {
                got = (long long)calls_of(name);
                if (got < want)
                    fprintf(stderr, "plx_check: calls %s: got %lld, expected at least %lld\n",
                            name, got, want), fails++;
                i++;
                continue;
            }
            if (a[2] == 'c') {
                got = (long long)calls_of(name);
            } else {
                for (unsigned t = 0; t < thread_name_count; t++)
                    got += strcmp(thread_names[t], name) == 0;
            }
            char what[600];
            snprintf(what, sizeof what, "%s %s", a + 2, name);
            fails += expect(what, got, want);
            i++;
        }
    }
    return fails ? 1 : 0;
}
