/* plx_check: reads an experiment by the schema (spec/records.toml, through plx_walk.h) and checks
 * expectations; `plx_check --dump DIR [--expect FILE]` prints (or compares) the golden dump;
 * `plx_check DIR --counts` prints the counts the blessed e2e cases compare (case.sh).
 * The runtime tests use it so they run without the engine, under the sanitizers.
 *
 *   plx_check DIR [--processes N] [--threads N] [--calls NAME=N] [--thread-name NAME=N]
 *                 [--min-calls NAME=N] [--ended] [--end-signal N] [--min-events N] [--print]
 *                 [--sent S:D=N] [--sent-bytes S:D=N] [--received S:D=N] [--traced S:D=N]
 *                 [--traced-recv S:D=N] [--ranks N] [--region-kind NAME=K] [--clock K]
 *                 [--coarse-deltas] [--join-pairs N] [--streams N] [--streams-match]
 *                 [--stream-sends THREAD=N] [--stream-recvs THREAD=N]
 *                 [--stream-bytes-sent THREAD=N] [--stream-bytes-recvd THREAD=N]
 *                 [--stream-opens THREAD=N]
 *                 [--cpu-samples MS] [--cpu-intervals FILE] [--stack-samples N]
 * Calls come from the profile, or from the trace's enter events when the profile has none.
 * Messages between world ranks S and D: --sent/--sent-bytes from the sender's MessageStats,
 * --received from the receiver's, --traced/--traced-recv from send/receive trace events.
 * Streams (socket wrappers, trace subtypes 8 and 9) by thread name; --streams-match checks that
 * each direction's offsets are contiguous, that every receive's end lies in a send's range on
 * its stream (read no earlier than that send began, within a process), and that every stream
 * event is inside a socket call region (kind 5) of its direction. --join-pairs N: N joins, each
 * acquire of a thread object (kind 6) paired with the release at the end of the joined thread,
 * no later. --coarse-deltas: every nonzero time step between a thread's events is at least half
 * of CLOCK_MONOTONIC_COARSE's resolution (and there is one).
 * --cpu-samples MS: each process has CpuSamples (record 21); with 10 or more, the 10th percentile
 * of its steps at most 2·MS and their lower quartile at least MS/2, every sampled thread is one of its ThreadInfos, each thread's CPU time never decreases.
 * --cpu-intervals FILE: FILE holds "spin_start sleep_start sleep_end spin_end" (CLOCK_MONOTONIC
 * ns, written by the program): thread 0's samples inside the sleep add < 20 ms of CPU, inside
 * each spin ≥ 200 ms.
 * --stack-samples N: call-stack sampling (PLX_SAMPLE): every thread with a ThreadProfile has one
 * SampleTree (record 80), each tree's frames name an earlier frame as parent (or none, then a
 * node of its ThreadProfile or none), their samples add up to the tree's `samples`, and the
 * experiment holds N samples or more. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "plx_walk.h"

#define MAXR 65536
static char *region_name[MAXR];
static int region_kind[MAXR];
static uint64_t calls_by_region[MAXR];
static uint64_t incl_by_region[MAXR], excl_by_region[MAXR];
static int processes, threads, ended, end_signal = -1, errors;
static uint64_t trace_enters, trace_events;
static char thread_names[32768][64];
static unsigned thread_name_count;
static int printing;
/* SampleTree records: trees, samples, malformed trees, ThreadProfiles (to compare) */
static uint64_t sample_trees, stack_samples, bad_trees, thread_profiles;

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
/* CpuSamples of every process: one row per (sample, thread); calibration per process */
struct csample { int proc; uint64_t ticks; uint32_t thread; uint64_t cpu; };
static struct csample *csamples;
static size_t ncsamples, capcsamples;
static uint64_t calib_first[2][1024], calib_last[2][1024]; /* [ticks/ns][proc] */
static int calib_seen[1024];
static unsigned char thread_known[1024][4096]; /* [proc][thread index] has a ThreadInfo */
static struct pending pend[65536];
static int npend;

/* ProcessInfo.clock: of the first process read (-1 before); clock_mixed when another differs */
static int clock_seen = -1, clock_mixed;
/* time steps between consecutive events of a thread */
static uint64_t zero_steps, nonzero_steps, min_nonzero_step = UINT64_MAX;

/* Trace events, by thread slot (name_base + thread index): the open regions and the serial
 * number of the last event, for stream and join checks. */
#define MAXSLOT 32768
#define MAXDEPTH 1024
struct frame { uint32_t region; uint64_t t; long ev; };
static struct tstate { struct frame *stack; unsigned depth; uint64_t last_serial; } tstates[MAXSLOT];
static uint64_t serial;
static int proc_index;

struct sev { /* a stream event */
    int proc, sub, in_socket, kind_ok;
    unsigned slot;
    uint64_t stream, end, bytes, t, t_enter, t_exit;
};
static struct sev *sevs;
static size_t nsevs, capsevs;

struct jev { /* an acquire or release of a thread object */
    int proc, sub, matched;
    unsigned slot;
    uint32_t object;
    uint64_t t, serial;
};
static struct jev *jevs;
static size_t njevs, capjevs;

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

/* A str field as a C string (malloc'd). */
static char *sdup(const struct plx_val *v)
{
    char *s = malloc(v->n + 1);
    memcpy(s, v->p, v->n);
    s[v->n] = 0;
    return s;
}

static uint64_t at(const unsigned char *p, size_t off, size_t n)
{
    uint64_t v = 0;
    memcpy(&v, p + off, n);
    return v;
}

static void *grow(void *p, size_t *cap, size_t n, size_t item);

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
        if (!b || len < PLX_LIVE_HEADER_SIZE || memcmp(b, "PLXL", 4) != 0) {
            free(b);
            continue;
        }
        size_t item = (size_t)at(b, PLX_LIVE_HEADER_OFF_ITEM_SIZE, 2);
        uint32_t count = (uint32_t)at(b, PLX_LIVE_HEADER_OFF_COUNT, 4);
        const unsigned char *items = b + PLX_LIVE_HEADER_SIZE;
        size_t room = (len - PLX_LIVE_HEADER_SIZE) / (item ? item : 1);
        if (count > room)
            count = (uint32_t)room;
        if (strcmp(kind, "nodes") == 0 && !profiled[thread] && item == PLX_LIVE_NODES_ITEM_SIZE) {
            for (uint32_t i = 1; i < count; i++) {
                const unsigned char *x = items + (size_t)i * item;
                uint32_t region = (uint32_t)at(x, PLX_LIVE_NODES_OFF_REGION, 4);
                if (region < MAXR)
                    calls_by_region[region] += at(x, PLX_LIVE_NODES_OFF_CALLS, 8);
            }
            if (printing)
                printf("recovered live.%u.nodes\n", thread);
        } else if (strcmp(kind, "sync") == 0 && item == PLX_LIVE_SYNC_ITEM_SIZE) {
            live_sync[thread] = 1;
            for (uint32_t i = 0; i < count; i++) {
                const unsigned char *x = items + (size_t)i * item;
                uint32_t id = (uint32_t)at(x, PLX_LIVE_SYNC_OFF_OBJECT, 4);
                if (!at(x, PLX_LIVE_SYNC_OFF_USED, 2) || id >= MAXOBJ)
                    continue;
                sobjs[id].acq += at(x, PLX_LIVE_SYNC_OFF_ACQUISITIONS, 8);
                sobjs[id].contended += at(x, PLX_LIVE_SYNC_OFF_CONTENDED, 8);
                sobjs[id].wait += at(x, PLX_LIVE_SYNC_OFF_WAIT_TICKS, 8);
                sobjs[id].hold += at(x, PLX_LIVE_SYNC_OFF_HOLD_TICKS, 8);
                sobjs[id].releases += at(x, PLX_LIVE_SYNC_OFF_RELEASES, 8);
            }
        } else if (strcmp(kind, "mpi") == 0 && item == PLX_LIVE_MPI_ITEM_SIZE) {
            live_mpi[thread] = 1;
            for (uint32_t i = 0; i < count; i++) {
                const unsigned char *x = items + (size_t)i * item;
                uint32_t peer = (uint32_t)at(x, PLX_LIVE_MPI_OFF_PEER, 4);
                if (at(x, PLX_LIVE_MPI_OFF_USED, 4) && peer != 0xFFFFFFFFu && npend < 65536)
                    pend[npend++] = (struct pending){0xFFFFFFFFu, peer,
                                                     (uint8_t)at(x, PLX_LIVE_MPI_OFF_DIRECTION, 1),
                                                     at(x, PLX_LIVE_MPI_OFF_COUNT, 8),
                                                     at(x, PLX_LIVE_MPI_OFF_BYTES, 8)};
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
    proc_index = processes;
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
        if (off + PLX_RECORD_HEADER_SIZE + plen > len) {
            fprintf(stderr, "plx_check: %s: truncated record at %zu\n", path, off);
            break;
        }
        const unsigned char *payload = buf + off + PLX_RECORD_HEADER_SIZE;
        const struct plx_record_def *d = plx_walk_def(type);
        struct plx_val v[64];
        if (!d || type == PLX_REC_TRACE_CHUNK) { /* unknown here: skipped by its length */
            off += PLX_RECORD_HEADER_SIZE + plen;
            continue;
        }
        if (plx_walk_record(d, payload, plen, v) != 0) {
            fprintf(stderr, "plx_check: %s: %s record at %zu: a field runs past its %u bytes\n", path,
                    d->name, off, plen);
            errors++;
            off += PLX_RECORD_HEADER_SIZE + plen;
            continue;
        }
#define F(REC, FIELD) v[PLX_F_##REC##_##FIELD].u
#define ITEM(REC, FIELD, I, SUB) plx_walk_item(d, PLX_F_##REC##_##FIELD, v, I, PLX_F_##REC##_##FIELD##_##SUB)
        switch (type) {
        case PLX_REC_PROCESS_INFO: {
            int clock = (int)F(PROCESS_INFO, CLOCK);
            if (clock_seen < 0)
                clock_seen = clock;
            else if (clock != clock_seen)
                clock_mixed = 1;
            break;
        }
        case PLX_REC_REGION_DEF: {
            uint32_t id = (uint32_t)F(REGION_DEF, REGION_ID);
            char *name = sdup(&v[PLX_F_REGION_DEF_NAME]);
            if (id < MAXR && !region_name[id]) {
                region_name[id] = name;
                region_kind[id] = (int)F(REGION_DEF, KIND);
            } else {
                free(name);
            }
            if (printing)
                printf("region %u %s\n", id, name);
            break;
        }
        case PLX_REC_CALIBRATION: {
            uint64_t tk = F(CALIBRATION, TICKS), ns = F(CALIBRATION, MONOTONIC_NS);
            if (proc_index < 1024) {
                if (!calib_seen[proc_index]) {
                    calib_first[0][proc_index] = tk;
                    calib_first[1][proc_index] = ns;
                }
                calib_seen[proc_index] = 1;
                calib_last[0][proc_index] = tk;
                calib_last[1][proc_index] = ns;
            }
            break;
        }
        case PLX_REC_CPU_SAMPLES: {
            uint64_t tk = F(CPU_SAMPLES, TICKS);
            uint32_t n = (uint32_t)F(CPU_SAMPLES, COUNT);
            if (PLX_CPU_SAMPLES_FIXED_SIZE + (uint64_t)n * PLX_CPU_SAMPLES_ENTRIES_ITEM_SIZE != plen) {
                fprintf(stderr, "plx_check: CpuSamples of %u threads in %u bytes\n", n, plen);
                errors++;
                break;
            }
            for (uint32_t i = 0; i < n; i++) {
                csamples = grow(csamples, &capcsamples, ncsamples, sizeof *csamples);
                struct csample *x = &csamples[ncsamples++];
                x->proc = proc_index;
                x->ticks = tk;
                x->thread = (uint32_t)ITEM(CPU_SAMPLES, ENTRIES, i, THREAD);
                x->cpu = ITEM(CPU_SAMPLES, ENTRIES, i, CPU_NS);
            }
            if (n == 0) { /* a sample of no thread still counts as a sample */
                csamples = grow(csamples, &capcsamples, ncsamples, sizeof *csamples);
                csamples[ncsamples++] = (struct csample){proc_index, tk, 0xFFFFFFFFu, 0};
            }
            break;
        }
        case PLX_REC_THREAD_INFO: {
            uint32_t idx = (uint32_t)F(THREAD_INFO, THREAD);
            if (proc_index < 1024 && idx < 4096)
                thread_known[proc_index][idx] = 1;
            char *name = sdup(&v[PLX_F_THREAD_INFO_NAME]);
            threads++;
            if (name_base + idx < 32768) {
                snprintf(thread_names[name_base + idx], 64, "%s", name);
                if (name_base + idx + 1 > thread_name_count)
                    thread_name_count = name_base + idx + 1;
            }
            free(name);
            break;
        }
        case PLX_REC_THREAD_NAME: {
            uint32_t idx = (uint32_t)F(THREAD_NAME, THREAD);
            char *name = sdup(&v[PLX_F_THREAD_NAME_NAME]);
            if (name_base + idx < 32768)
                snprintf(thread_names[name_base + idx], 64, "%s", name);
            free(name);
            break;
        }
        case PLX_REC_SAMPLE_TREE: {
            uint32_t n = (uint32_t)F(SAMPLE_TREE, COUNT);
            uint64_t sum = 0;
            int bad = 0;
            for (uint32_t i = 0; i < n; i++) {
                uint32_t parent = (uint32_t)ITEM(SAMPLE_TREE, FRAMES, i, PARENT);
                if (parent != 0xFFFFFFFFu && parent >= i)
                    bad = 1;
                sum += ITEM(SAMPLE_TREE, FRAMES, i, SAMPLES);
            }
            if (sum != F(SAMPLE_TREE, SAMPLES))
                bad = 1;
            if (printing)
                printf("sample tree: thread %u, %llu samples, %u frames, lost %llu+%llu\n",
                       (unsigned)F(SAMPLE_TREE, THREAD), (unsigned long long)F(SAMPLE_TREE, SAMPLES), n,
                       (unsigned long long)F(SAMPLE_TREE, LOST_FULL),
                       (unsigned long long)F(SAMPLE_TREE, LOST_LOADER));
            sample_trees++;
            stack_samples += F(SAMPLE_TREE, SAMPLES);
            bad_trees += bad;
            break;
        }
        case PLX_REC_THREAD_PROFILE: {
            thread_profiles++;
            uint32_t pt = (uint32_t)F(THREAD_PROFILE, THREAD);
            if (pt < 65536)
                profiled[pt] = 1;
            uint32_t n = (uint32_t)F(THREAD_PROFILE, NODE_COUNT);
            for (uint32_t i = 0; i < n; i++) {
                uint32_t region = (uint32_t)ITEM(THREAD_PROFILE, NODES, i, REGION);
                if (i < (1u << 16))
                    node_region[i] = region;
                uint64_t calls = ITEM(THREAD_PROFILE, NODES, i, CALLS);
                uint64_t incl = ITEM(THREAD_PROFILE, NODES, i, INCLUSIVE_TICKS);
                uint64_t excl = ITEM(THREAD_PROFILE, NODES, i, EXCLUSIVE_TICKS);
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
        case PLX_REC_SYNC_OBJECT: {
            uint32_t id = (uint32_t)F(SYNC_OBJECT, OBJECT);
            if (id < MAXOBJ) {
                sobjs[id].kind = (int)F(SYNC_OBJECT, KIND);
                sobjs[id].by_init = F(SYNC_OBJECT, NAMED_BY) == 0;
                if ((int)id >= nsobjs)
                    nsobjs = (int)id + 1;
            }
            break;
        }
        case PLX_REC_SYNC_STATS: {
            uint32_t th = (uint32_t)F(SYNC_STATS, THREAD);
            if (th < 65536)
                has_sync[th] = 1;
            if (nsrecs < 65536)
                srecs[nsrecs++] = (struct srec){th, (uint32_t)F(SYNC_STATS, OBJECT),
                                                {F(SYNC_STATS, ACQUISITIONS), F(SYNC_STATS, CONTENDED),
                                                 F(SYNC_STATS, WAIT_TICKS), F(SYNC_STATS, HOLD_TICKS),
                                                 F(SYNC_STATS, RELEASES)}};
            break;
        }
        case PLX_REC_NODE_CPU: { /* NodeCpu follows its thread's ThreadProfile */
            uint32_t n = (uint32_t)F(NODE_CPU, COUNT);
            for (uint32_t i = 0; i < n; i++) {
                uint64_t node = ITEM(NODE_CPU, ENTRIES, i, NODE);
                if (node < (1u << 16) && node_region[node] < MAXR)
                    cpu_by_region[node_region[node]] += ITEM(NODE_CPU, ENTRIES, i, CPU_NS);
            }
            break;
        }
        case PLX_REC_MPI_INIT:
            cur_rank = (int)F(MPI_INIT, RANK);
            ranks_seen++;
            break;
        case PLX_REC_MESSAGE_STATS: {
            uint32_t st = (uint32_t)F(MESSAGE_STATS, THREAD), peer = (uint32_t)F(MESSAGE_STATS, PEER);
            if (st < 65536)
                has_stats[st] = 1;
            if (peer != 0xFFFFFFFFu && npend < 65536)
                pend[npend++] = (struct pending){st, peer, (uint8_t)F(MESSAGE_STATS, DIRECTION),
                                                 F(MESSAGE_STATS, COUNT), F(MESSAGE_STATS, BYTES)};
            break;
        }
        case PLX_REC_PROCESS_END:
            ended++;
            if (F(PROCESS_END, REASON) == 1)
                end_signal = (int)(int32_t)F(PROCESS_END, STATUS);
            break;
        default:
            break;
        }
#undef F
#undef ITEM
        off += PLX_RECORD_HEADER_SIZE + plen;
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

static int name_in(const char *name, const char *const *list)
{
    for (; name && *list; list++)
        if (strcmp(name, *list) == 0)
            return 1;
    return 0;
}
static const char *const send_calls[] = {"send", "sendto", "sendmsg", "write", "writev", NULL};
static const char *const recv_calls[] = {"recv", "recvfrom", "recvmsg", "read", "readv", NULL};
/* The calls that open a connection: their events are of 0 bytes at end 0. */
static const char *const connect_calls[] = {"connect", NULL};
static const char *const accept_calls[] = {"accept", "accept4", NULL};

static void *grow(void *p, size_t *cap, size_t n, size_t item)
{
    if (n < *cap)
        return p;
    *cap = *cap ? *cap * 2 : 1024;
    p = realloc(p, *cap * item);
    if (!p) {
        fprintf(stderr, "plx_check: out of memory\n");
        exit(2);
    }
    return p;
}

static void read_trace(const char *path)
{
    size_t len;
    unsigned char *buf = slurp(path, &len);
    if (!buf)
        return;
    size_t off = PLX_FILE_HEADER_SIZE;
    const struct plx_record_def *chunk = plx_walk_def(PLX_REC_TRACE_CHUNK);
    while (off + PLX_RECORD_HEADER_SIZE <= len) {
        uint16_t type;
        uint32_t plen;
        memcpy(&type, buf + off, 2);
        memcpy(&plen, buf + off + 4, 4);
        if (off + PLX_RECORD_HEADER_SIZE + plen > len)
            break;
        struct plx_val v[8];
        if (type == PLX_REC_TRACE_CHUNK &&
            plx_walk_record(chunk, buf + off + PLX_RECORD_HEADER_SIZE, plen, v) == 0) {
            uint32_t thread = (uint32_t)v[PLX_F_TRACE_CHUNK_THREAD].u;
            uint32_t count = (uint32_t)v[PLX_F_TRACE_CHUNK_EVENT_COUNT].u;
            uint64_t t = v[PLX_F_TRACE_CHUNK_BASE_TICKS].u;
            if (PLX_TRACE_CHUNK_FIXED_SIZE + (uint64_t)count * 8 > plen)
                count = (plen - PLX_TRACE_CHUNK_FIXED_SIZE) / 8;
            unsigned slot = name_base + thread;
            struct tstate *ts = slot < MAXSLOT ? &tstates[slot] : NULL;
            if (ts && !ts->stack)
                ts->stack = calloc(MAXDEPTH, sizeof *ts->stack);
            const unsigned char *ev = v[PLX_F_TRACE_CHUNK_EVENTS].p;
            for (uint32_t i = 0; i < count; i++) {
                uint64_t w;
                memcpy(&w, ev + 8 * i, 8);
                unsigned kind = (unsigned)(w >> PLX_EV_KIND_SHIFT);
                uint64_t step = w & PLX_EV_DELTA_MAX;
                t += step;
                if (step) {
                    nonzero_steps++;
                    if (step < min_nonzero_step)
                        min_nonzero_step = step;
                } else {
                    zero_steps++;
                }
                trace_events++;
                serial++;
                if (ts)
                    ts->last_serial = serial;
                if (kind == PLX_EV_ENTER) {
                    uint32_t region = (uint32_t)((w >> PLX_EV_REGION_SHIFT) & ((1u << PLX_EV_REGION_BITS) - 1));
                    trace_enters++;
                    if (region < MAXR)
                        calls_by_region[region]++;
                    if (ts && ts->depth < MAXDEPTH)
                        ts->stack[ts->depth] = (struct frame){region, t, -1};
                    if (ts)
                        ts->depth++;
                } else if (kind == PLX_EV_EXIT) {
                    if (ts && ts->depth > 0 && --ts->depth < MAXDEPTH && ts->stack[ts->depth].ev >= 0)
                        sevs[ts->stack[ts->depth].ev].t_exit = t;
                } else if (kind == PLX_EV_EXT) {
                    unsigned sub = (unsigned)((w >> PLX_EV_SUBTYPE_SHIFT) & ((1u << PLX_EV_SUBTYPE_BITS) - 1));
                    unsigned words = (unsigned)((w >> PLX_EV_WORDS_SHIFT) & ((1u << PLX_EV_WORDS_BITS) - 1));
                    uint64_t p[8] = {0};
                    for (unsigned k = 0; k < words && k < 8 && i + 1 + k < count; k++)
                        memcpy(&p[k], ev + 8 * (i + 1 + k), 8);
                    const struct plx_subtype_def *st = plx_walk_subtype(sub);
                    if (i + words >= count || !st || words < st->words)
                        st = NULL; /* unknown, or cut by the chunk's end: skipped by its count */
#define SF(SUB, FIELD) plx_walk_subfield(st, p, PLX_SF_##SUB##_##FIELD)
                    if (st && sub == PLX_EXT_TIME_RESET)
                        t = SF(TIME_RESET, TICKS);
                    if (st && (sub == PLX_EXT_SEND || sub == PLX_EXT_RECV) && cur_rank >= 0 &&
                        cur_rank < MAXRANK) {
                        uint64_t peer = sub == PLX_EXT_SEND ? SF(SEND, PEER) : SF(RECV, PEER);
                        if (peer < MAXRANK) {
                            if (sub == PLX_EXT_SEND)
                                tsent[cur_rank][peer]++;
                            else
                                trecvd[peer][cur_rank]++;
                        }
                    }
                    if (st && (sub == PLX_EXT_STREAM_SEND || sub == PLX_EXT_STREAM_RECV)) {
                        _Static_assert(PLX_SF_STREAM_SEND_STREAM == PLX_SF_STREAM_RECV_STREAM &&
                                       PLX_SF_STREAM_SEND_END == PLX_SF_STREAM_RECV_END &&
                                       PLX_SF_STREAM_SEND_BYTES == PLX_SF_STREAM_RECV_BYTES, "stream fields");
                        sevs = grow(sevs, &capsevs, nsevs, sizeof *sevs);
                        struct sev *e = &sevs[nsevs];
                        *e = (struct sev){proc_index, (int)sub, 0, 0, slot, SF(STREAM_SEND, STREAM),
                                          SF(STREAM_SEND, END), SF(STREAM_SEND, BYTES), t, 0, 0};
                        if (ts && ts->depth > 0 && ts->depth <= MAXDEPTH) {
                            struct frame *f = &ts->stack[ts->depth - 1];
                            const char *name = f->region < MAXR ? region_name[f->region] : NULL;
                            e->in_socket = f->region < MAXR && region_kind[f->region] == 5;
                            int open = e->bytes == 0 && e->end == 0;
                            const char *const *calls = sub == PLX_EXT_STREAM_SEND
                                                           ? (open ? connect_calls : send_calls)
                                                           : (open ? accept_calls : recv_calls);
                            e->kind_ok = name_in(name, calls) && f->ev < 0;
                            e->t_enter = f->t;
                            f->ev = (long)nsevs;
                        }
                        nsevs++;
                    }
                    if (st && (sub == PLX_EXT_ACQUIRE || sub == PLX_EXT_RELEASE)) {
                        _Static_assert(PLX_SF_ACQUIRE_OBJECT == PLX_SF_RELEASE_OBJECT &&
                                       PLX_SF_ACQUIRE_KIND == PLX_SF_RELEASE_KIND, "sync fields");
                        if (SF(ACQUIRE, KIND) == 6) {
                            jevs = grow(jevs, &capjevs, njevs, sizeof *jevs);
                            jevs[njevs++] = (struct jev){proc_index, (int)sub, 0, slot,
                                                         (uint32_t)SF(ACQUIRE, OBJECT), t, serial};
                        }
                    }
#undef SF
                    i += words;
                }
            }
        }
        off += PLX_RECORD_HEADER_SIZE + plen;
    }
    free(buf);
}

/* Region ids are per process: totals are kept by name. */
static struct { char *name; uint64_t calls, cpu; int kind; } totals[MAXR]; /* kind -2: mixed */
static int ntotals;

static void fold_process(void)
{
    for (int i = 0; i < MAXR; i++) {
        if (!region_name[i])
            continue;
        int j = 0;
        while (j < ntotals && strcmp(totals[j].name, region_name[i]) != 0)
            j++;
        if (j == ntotals && ntotals < MAXR) {
            totals[ntotals].kind = region_kind[i];
            totals[ntotals++].name = strdup(region_name[i]);
        } else if (totals[j].kind != region_kind[i]) {
            totals[j].kind = -2;
        }
        totals[j].calls += calls_by_region[i];
        totals[j].cpu += cpu_by_region[i];
        cpu_by_region[i] = 0;
        if (printing && calls_by_region[i])
            printf("%-40s calls=%llu incl=%llu excl=%llu\n", region_name[i],
                   (unsigned long long)calls_by_region[i], (unsigned long long)incl_by_region[i],
                   (unsigned long long)excl_by_region[i]);
        free(region_name[i]);
        region_name[i] = NULL;
        region_kind[i] = 0;
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

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* `--counts`: the experiment as stable text, the counts only (no times, pids or sizes that
 * vary from run to run): processes, processes ended and the signal that ended them, threads,
 * the calls of each region (runtime regions, whose flushes vary, left out) by name, and the
 * threads of each name. The e2e cases (case.sh) compare it with their blessed files. */
static void print_counts(FILE *out)
{
    fprintf(out, "processes %d\nended %d\n", processes, ended);
    if (end_signal >= 0)
        fprintf(out, "end signal %d\n", end_signal);
    fprintf(out, "threads %d\n", threads);
    char **names = malloc(sizeof(char *) * (ntotals + thread_name_count + 1));
    int n = 0;
    for (int j = 0; j < ntotals; j++)
        if (totals[j].calls && totals[j].kind != 3)
            names[n++] = totals[j].name;
    qsort(names, n, sizeof *names, by_name);
    for (int j = 0; j < n; j++)
        fprintf(out, "calls %s %llu\n", names[j], (unsigned long long)calls_of(names[j]));
    n = 0;
    for (unsigned t = 0; t < thread_name_count; t++)
        if (thread_names[t][0])
            names[n++] = thread_names[t];
    qsort(names, n, sizeof *names, by_name);
    for (int j = 0; j < n;) {
        int k = j;
        while (k < n && strcmp(names[k], names[j]) == 0)
            k++;
        fprintf(out, "thread name %s %d\n", names[j], k - j);
        j = k;
    }
    free(names);
}

static int expect(const char *what, long long got, long long want)
{
    if (got == want)
        return 0;
    fprintf(stderr, "plx_check: %s: got %lld, expected %lld\n", what, got, want);
    return 1;
}

/* Stream events of the threads named `name` that moved bytes (opens: the 0-byte events of
 * connect and accept, both subtypes): their count, or (bytes) their bytes. */
static long long stream_total(const char *name, int sub, int bytes, int opens)
{
    long long n = 0;
    for (size_t i = 0; i < nsevs; i++)
        if ((opens || sevs[i].sub == sub) && (sevs[i].bytes == 0) == opens && sevs[i].slot < 32768 &&
            strcmp(thread_names[sevs[i].slot], name) == 0)
            n += bytes ? (long long)sevs[i].bytes : 1;
    return n;
}

static int by_stream(const void *a, const void *b)
{
    const struct sev *x = a, *y = b;
    if (x->stream != y->stream)
        return x->stream < y->stream ? -1 : 1;
    if (x->sub != y->sub)
        return x->sub - y->sub;
    return x->end < y->end ? -1 : x->end > y->end;
}

static long long distinct_streams(void)
{
    qsort(sevs, nsevs, sizeof *sevs, by_stream);
    long long n = 0;
    for (size_t i = 0; i < nsevs; i++)
        n += i == 0 || sevs[i].stream != sevs[i - 1].stream;
    return n;
}

/* Each direction's offsets contiguous from 0; as many bytes read as written; every receive's
 * end E in some send's range (end - bytes, end], and (same process) the receive's call ended no
 * earlier than that send's began; every event inside a socket call of its direction. */
static int streams_match(void)
{
    int fails = 0;
    qsort(sevs, nsevs, sizeof *sevs, by_stream);
    for (size_t i = 0; i < nsevs;) {
        size_t j = i, k;
        while (j < nsevs && sevs[j].stream == sevs[i].stream && sevs[j].sub == 8)
            j++;
        k = j; /* sends [i, j), receives [j, k) */
        while (k < nsevs && sevs[k].stream == sevs[i].stream)
            k++;
        unsigned long long stream = (unsigned long long)sevs[i].stream;
        for (size_t x = i; x < k; x++) {
            const struct sev *e = &sevs[x];
            uint64_t start = x == i || x == j ? 0 : sevs[x - 1].end;
            if (e->end < e->bytes || e->end - e->bytes != start) {
                fprintf(stderr, "plx_check: stream %016llx %s: range (%llu, %llu] does not follow %llu\n",
                        stream, e->sub == 8 ? "send" : "receive", (unsigned long long)(e->end - e->bytes),
                        (unsigned long long)e->end, (unsigned long long)start);
                fails++;
            }
            if (!e->in_socket || !e->kind_ok) {
                fprintf(stderr, "plx_check: stream %016llx: event at end %llu not inside a socket %s call\n",
                        stream, (unsigned long long)e->end, e->sub == 8 ? "send" : "receive");
                fails++;
            }
        }
        uint64_t wrote = j > i ? sevs[j - 1].end : 0, read = k > j ? sevs[k - 1].end : 0;
        if (wrote != read) {
            fprintf(stderr, "plx_check: stream %016llx: %llu bytes sent, %llu received\n", stream,
                    (unsigned long long)wrote, (unsigned long long)read);
            fails++;
        }
        for (size_t r = j; r < k; r++) {
            size_t lo = i, hi = j; /* first send with end >= the receive's end */
            while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                if (sevs[mid].end < sevs[r].end)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            const struct sev *snd = lo < j ? &sevs[lo] : NULL;
            if (sevs[r].end == 0) {
                /* an accept: its connect, if measured and blocking, is the stream's first send */
                if (i < j && sevs[i].end == 0 && sevs[r].t_exit && sevs[r].t_exit < sevs[i].t_enter &&
                    sevs[i].proc == sevs[r].proc) {
                    fprintf(stderr, "plx_check: stream %016llx: accept returned before its connect began\n",
                            stream);
                    fails++;
                }
            } else if (!snd || snd->end - snd->bytes >= sevs[r].end) {
                fprintf(stderr, "plx_check: stream %016llx: receive ending at %llu has no send\n", stream,
                        (unsigned long long)sevs[r].end);
                fails++;
            } else if (snd->proc == sevs[r].proc && sevs[r].t_exit && sevs[r].t_exit < snd->t_enter) {
                fprintf(stderr, "plx_check: stream %016llx: receive ending at %llu returned before its send began\n",
                        stream, (unsigned long long)sevs[r].end);
                fails++;
            }
        }
        i = k;
    }
    return fails;
}

/* Each acquire of a thread object pairs with the latest unpaired release of the same object no
 * later than it, which is the last event of another thread (its end). */
static int join_pairs(long long want)
{
    int fails = 0;
    long long acquires = 0, releases = 0, paired = 0;
    for (size_t a = 0; a < njevs; a++) {
        if (jevs[a].sub != 5) {
            releases++;
            continue;
        }
        acquires++;
        struct jev *best = NULL;
        for (size_t r = 0; r < njevs; r++) {
            struct jev *e = &jevs[r];
            if (e->sub == 6 && !e->matched && e->proc == jevs[a].proc && e->object == jevs[a].object &&
                e->t <= jevs[a].t && (!best || e->t > best->t || (e->t == best->t && e->serial > best->serial)))
                best = e;
        }
        if (!best) {
            fprintf(stderr, "plx_check: join of object %u at %llu: no thread end released it before\n",
                    jevs[a].object, (unsigned long long)jevs[a].t);
            fails++;
            continue;
        }
        best->matched = 1;
        if (best->slot == jevs[a].slot || best->slot >= MAXSLOT || tstates[best->slot].last_serial != best->serial) {
            fprintf(stderr, "plx_check: join of object %u: its release is not the end of another thread\n",
                    jevs[a].object);
            fails++;
            continue;
        }
        paired++;
    }
    fails += expect("thread-object acquires (joins)", acquires, want);
    fails += expect("thread-object releases (thread ends)", releases, want);
    fails += expect("joins paired with a thread end", paired, want);
    return fails;
}

/* Every nonzero step between a thread's events is at least half the coarse clock's resolution. */
static int coarse_deltas(void)
{
    struct timespec res;
    if (clock_getres(CLOCK_MONOTONIC_COARSE, &res) != 0) {
        fprintf(stderr, "plx_check: no CLOCK_MONOTONIC_COARSE here\n");
        return 1;
    }
    uint64_t ns = (uint64_t)res.tv_sec * 1000000000ull + (uint64_t)res.tv_nsec;
    if (printing)
        printf("steps: %llu zero, %llu nonzero, smallest %llu; resolution %llu ns\n",
               (unsigned long long)zero_steps, (unsigned long long)nonzero_steps,
               (unsigned long long)min_nonzero_step, (unsigned long long)ns);
    if (nonzero_steps == 0 || min_nonzero_step < ns / 2) {
        fprintf(stderr, "plx_check: %llu nonzero time steps, the smallest %llu ticks; expected at least one, "
                "none under %llu ns (half the coarse resolution)\n", (unsigned long long)nonzero_steps,
                (unsigned long long)(nonzero_steps ? min_nonzero_step : 0), (unsigned long long)(ns / 2));
        return 1;
    }
    return 0;
}

static int by_cpu_sample(const void *a, const void *b)
{
    const struct csample *x = a, *y = b;
    if (x->proc != y->proc)
        return x->proc - y->proc;
    if (x->thread != y->thread)
        return x->thread < y->thread ? -1 : 1;
    return x->ticks < y->ticks ? -1 : x->ticks > y->ticks;
}

static int by_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* CLOCK_MONOTONIC ns of a process's ticks: the line through its first and last calibrations. */
static double sample_ns(int proc, uint64_t ticks)
{
    double t0 = (double)calib_first[0][proc], n0 = (double)calib_first[1][proc];
    double t1 = (double)calib_last[0][proc], n1 = (double)calib_last[1][proc];
    double rate = t1 > t0 ? (n1 - n0) / (t1 - t0) : 1.0;
    return n0 + ((double)ticks - t0) * rate;
}

static int cpu_samples_check(double ms)
{
    int fails = 0;
    qsort(csamples, ncsamples, sizeof *csamples, by_cpu_sample);
    for (int p = 1; p <= processes && p < 1024; p++) {
        /* distinct sample times of the process */
        uint64_t *times = NULL;
        size_t nt = 0, capt = 0;
        for (size_t i = 0; i < ncsamples; i++)
            if (csamples[i].proc == p) {
                times = grow(times, &capt, nt, sizeof *times);
                times[nt++] = csamples[i].ticks;
            }
        qsort(times, nt, sizeof *times, by_u64);
        size_t nd = 0;
        for (size_t i = 0; i < nt; i++)
            if (i == 0 || times[i] != times[i - 1])
                times[nd++] = times[i];
        if (nd < 10) { /* a short process: at least the final sample */
            if (nd == 0) {
                fprintf(stderr, "plx_check: process %d: no CPU samples\n", p);
                fails++;
            }
            free(times);
            continue;
        }
        double *steps = malloc((nd - 1) * sizeof *steps);
        for (size_t i = 1; i < nd; i++)
            steps[i - 1] = (sample_ns(p, times[i]) - sample_ns(p, times[i - 1])) / 1e6;
        for (size_t i = 1; i < nd - 1; i++) /* insertion sort: few hundred */
            for (size_t j = i; j > 0 && steps[j] < steps[j - 1]; j--) {
                double x = steps[j];
                steps[j] = steps[j - 1];
                steps[j - 1] = x;
            }
        /* Not the median: on a loaded machine (2 CI cores, a sanitizer's slower samples) the
         * sampler wakes late, and each late wake lengthens its step (medians of 3 and 12 ms for
         * a 1 ms period were seen with 16 threads runnable on 2 cores). With absolute deadlines a
         * late wake shortens no step below the period but by its predecessor's lateness, so
         * sampling slower than asked shows as the 10th percentile of the steps over twice the
         * period (a tenth of the wakes on time suffices), sampling faster as the lower quartile
         * under half of it. (Not the shortest step: the final sample at the process's end comes
         * any time after the last periodic one.) A wrong period (the 10 ms default for 1, or ten
         * times too fast) fails either. */
        double decile = steps[(nd - 1) / 10], quartile = steps[(nd - 1) / 4];
        if (printing)
            printf("process %d: %zu CPU samples, steps: 10th percentile %.3f ms, lower quartile "
                   "%.3f ms, median %.3f ms\n", p, nd, decile, quartile, steps[(nd - 1) / 2]);
        if (decile > ms * 2 || quartile < ms / 2) {
            fprintf(stderr, "plx_check: process %d: steps between CPU samples: 10th percentile "
                    "%.3f ms, lower quartile %.3f ms, expected ~%.0f\n", p, decile, quartile, ms);
            fails++;
        }
        free(steps);
        free(times);
    }
    for (size_t i = 0; i < ncsamples; i++) {
        const struct csample *x = &csamples[i];
        if (x->thread == 0xFFFFFFFFu)
            continue;
        if (x->proc >= 1024 || x->thread >= 4096 || !thread_known[x->proc][x->thread]) {
            fprintf(stderr, "plx_check: process %d: CPU sample of thread %u, which has no ThreadInfo\n",
                    x->proc, x->thread);
            fails++;
        }
        if (i > 0 && csamples[i - 1].proc == x->proc && csamples[i - 1].thread == x->thread &&
            csamples[i - 1].cpu > x->cpu) {
            fprintf(stderr, "plx_check: process %d thread %u: CPU time went back from %llu to %llu ns\n",
                    x->proc, x->thread, (unsigned long long)csamples[i - 1].cpu, (unsigned long long)x->cpu);
            fails++;
        }
    }
    return fails;
}

/* CPU ns thread 0 of process 1 added between its first sample at or after a and its last at or
 * before b (CLOCK_MONOTONIC ns); -1 without two such samples. */
static double cpu_added(double a, double b)
{
    const struct csample *first = NULL, *last = NULL;
    for (size_t i = 0; i < ncsamples; i++) {
        const struct csample *x = &csamples[i];
        if (x->proc != 1 || x->thread != 0)
            continue;
        double t = sample_ns(1, x->ticks);
        if (t >= a && t <= b) {
            if (!first)
                first = x;
            last = x;
        }
    }
    if (!first || first == last)
        return -1;
    return (double)(last->cpu - first->cpu);
}

static int cpu_intervals_check(const char *file)
{
    FILE *f = fopen(file, "r");
    double t[4];
    if (!f || fscanf(f, "%lf %lf %lf %lf", &t[0], &t[1], &t[2], &t[3]) != 4) {
        fprintf(stderr, "plx_check: cannot read four times from %s\n", file);
        if (f)
            fclose(f);
        return 1;
    }
    fclose(f);
    qsort(csamples, ncsamples, sizeof *csamples, by_cpu_sample);
    int fails = 0;
    static const char *const what[3] = {"first spin", "sleep", "second spin"};
    for (int k = 0; k < 3; k++) {
        double added = cpu_added(t[k], t[k + 1]) / 1e6;
        if (printing)
            printf("%s: %.3f ms wall, %.3f ms CPU sampled\n", what[k], (t[k + 1] - t[k]) / 1e6, added);
        int bad = added < 0 || (k == 1 ? added >= 20 : added < 200);
        if (bad) {
            fprintf(stderr, "plx_check: %s (%.1f ms): samples add %.3f ms of CPU, expected %s\n", what[k],
                    (t[k + 1] - t[k]) / 1e6, added, k == 1 ? "< 20" : ">= 200");
            fails++;
        }
    }
    return fails;
}

/* The experiment's records and events as the golden dumps hold them (plx_walk_dump); with
 * `expected`, compared with that file: 0 when identical, else the first differing line. */
static int dump(const char *dir, const char *expected)
{
    if (!expected) {
        plx_walk_dump(dir, stdout);
        return 0;
    }
    char *got = NULL;
    size_t ngot = 0;
    FILE *m = open_memstream(&got, &ngot);
    plx_walk_dump(dir, m);
    fclose(m);
    size_t nwant;
    unsigned char *want = slurp(expected, &nwant);
    if (!want) {
        fprintf(stderr, "plx_check: cannot read %s\n", expected);
        return 2;
    }
    size_t i = 0, line = 1, start = 0;
    while (i < ngot && i < nwant && got[i] == (char)want[i]) {
        if (got[i] == '\n') {
            line++;
            start = i + 1;
        }
        i++;
    }
    int same = i == ngot && i == nwant;
    if (!same) {
        size_t ge = start, we = start;
        while (ge < ngot && got[ge] != '\n')
            ge++;
        while (we < nwant && want[we] != '\n')
            we++;
        fprintf(stderr, "plx_check: %s differs from %s at line %zu:\n  got:      %.*s\n  expected: %.*s\n",
                dir, expected, line, (int)(ge - start), got + start, (int)(we - start),
                (const char *)want + start);
    }
    free(got);
    free(want);
    return same ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: plx_check DIR [expectations] | plx_check --dump DIR [--expect FILE]\n");
        return 2;
    }
    if (strcmp(argv[1], "--dump") == 0 && argc >= 3)
        return dump(argv[2], argc >= 5 && strcmp(argv[3], "--expect") == 0 ? argv[4] : NULL);
    int counts = 0; /* --counts, anywhere after DIR */
    for (int i = 2; i < argc; i++)
        counts |= strcmp(argv[i], "--counts") == 0;
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
    if (counts) {
        print_counts(stdout);
        return errors ? 1 : 0;
    }
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
        } else if (strcmp(a, "--region-kind") == 0) {
            char name[512];
            const char *eq = strrchr(v, '=');
            if (!eq) { fprintf(stderr, "plx_check: bad %s %s\n", a, v); return 2; }
            snprintf(name, sizeof name, "%.*s", (int)(eq - v), v);
            int got = -1;
            for (int j = 0; j < ntotals; j++)
                if (strcmp(totals[j].name, name) == 0)
                    got = totals[j].kind;
            char what[600];
            snprintf(what, sizeof what, "kind of region %s", name);
            fails += expect(what, got, atoll(eq + 1));
            i++;
        } else if (strcmp(a, "--clock") == 0) {
            fails += expect("ProcessInfo.clock", clock_mixed ? -2 : clock_seen, atoll(v));
            i++;
        } else if (strcmp(a, "--stack-samples") == 0) {
            fails += expect("SampleTree records (one per ThreadProfile)", (long long)sample_trees,
                            (long long)thread_profiles);
            fails += expect("malformed SampleTree records", (long long)bad_trees, 0);
            if (stack_samples < (uint64_t)atoll(v)) {
                fprintf(stderr, "plx_check: %llu call-stack samples, expected at least %s\n",
                        (unsigned long long)stack_samples, v);
                fails++;
            }
            i++;
        } else if (strcmp(a, "--cpu-samples") == 0) {
            fails += cpu_samples_check(atof(v));
            i++;
        } else if (strcmp(a, "--cpu-intervals") == 0) {
            fails += cpu_intervals_check(v);
            i++;
        } else if (strcmp(a, "--coarse-deltas") == 0) {
            fails += coarse_deltas();
        } else if (strcmp(a, "--join-pairs") == 0) {
            fails += join_pairs(atoll(v));
            i++;
        } else if (strcmp(a, "--streams") == 0) {
            fails += expect("distinct streams", distinct_streams(), atoll(v));
            i++;
        } else if (strcmp(a, "--streams-match") == 0) {
            fails += streams_match();
        } else if (strncmp(a, "--stream-", 9) == 0) {
            /* --stream-sends, --stream-recvs, --stream-bytes-sent, --stream-bytes-recvd,
             * --stream-opens THREAD=N */
            char name[512];
            const char *eq = strrchr(v, '=');
            if (!eq) { fprintf(stderr, "plx_check: bad %s %s\n", a, v); return 2; }
            snprintf(name, sizeof name, "%.*s", (int)(eq - v), v);
            int bytes = strncmp(a + 9, "bytes", 5) == 0;
            int sub = strstr(a, "sent") || strstr(a, "sends") ? 8 : 9;
            char what[600];
            snprintf(what, sizeof what, "%s %s", a + 2, name);
            int opens = strcmp(a, "--stream-opens") == 0;
            fails += expect(what, stream_total(name, sub, bytes, opens), atoll(eq + 1));
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
