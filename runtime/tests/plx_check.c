/* plx_check: reads an experiment by the schema (spec/records.toml, through plx_walk.h) and
 * prints it as stable text; it checks nothing itself (the runtime tests compare its output with
 * blessed files: case.sh). It runs without the engine, under the sanitizers.
 *
 *   plx_check DIR          the experiment's counts, one "KEY VALUE" a line (print_counts)
 *   plx_check --dump DIR   every record and event, as spec/golden's .expected files hold them
 *
 * Calls come from the profile, or from the trace's enter events when the profile has none.
 * Streams (socket wrappers, trace subtypes 8 and 9): "stream mismatches" counts the failures of
 * streams_match (each named on stderr). Joins: each acquire of a thread object (kind 6) paired
 * with the release at the end of the joined thread, no later. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "plx_walk.h"

#define MAXR 65536
static char *region_name[MAXR];
/* RegionDef kind of the runtime's own regions (plx_flush, plx_symbols): core/plx_internal.h */
enum { RUNTIME_KIND = 3 };
static int region_kind[MAXR];
static uint64_t calls_by_region[MAXR];
static int processes, threads, ended, end_signal = -1, errors;
static uint64_t trace_enters, trace_events;
static char thread_names[32768][64];
static unsigned thread_name_count;
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
#define MAXOBJ 16384
struct sobj { int kind, by_init; uint64_t acq, contended, wait, hold, releases; };
static struct sobj sobjs[MAXOBJ], all_sobjs[65536];
static int nsobjs, nall_sobjs;
static unsigned char has_sync[65536];
static unsigned char profiled[65536], has_stats[65536]; /* by thread index, this process */
/* CPU ns of `cputime` functions by region name: NodeCpu needs the nodes' regions */
static uint32_t node_region[1 << 16];
static uint64_t cpu_by_region[MAXR];
static unsigned char cpu_seen[MAXR]; /* the region has NodeCpu entries */
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
                if (region < MAXR)
                    calls_by_region[region] += calls;
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
                if (node < (1u << 16) && node_region[node] < MAXR) {
                    cpu_by_region[node_region[node]] += ITEM(NODE_CPU, ENTRIES, i, CPU_NS);
                    cpu_seen[node_region[node]] = 1;
                }
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
static struct { char *name; uint64_t calls, cpu; int kind, has_cpu; } totals[MAXR]; /* kind -2: mixed */
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
        totals[j].has_cpu |= cpu_seen[i];
        cpu_by_region[i] = 0;
        cpu_seen[i] = 0;
        free(region_name[i]);
        region_name[i] = NULL;
        region_kind[i] = 0;
        calls_by_region[i] = 0;
    }
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
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
static long long join_pairs(long long *acquires_out, long long *releases_out)
{
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
            continue;
        }
        best->matched = 1;
        if (best->slot == jevs[a].slot || best->slot >= MAXSLOT || tstates[best->slot].last_serial != best->serial) {
            fprintf(stderr, "plx_check: join of object %u: its release is not the end of another thread\n",
                    jevs[a].object);
            continue;
        }
        paired++;
    }
    *acquires_out = acquires;
    *releases_out = releases;
    return paired;
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

static int by_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
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

/* The C++ library's own template instances (std::, __gnu_cxx::) vary with the compiler and its
 * flags: the dump leaves them out. The qualified name is the word before the top-level '('. */
static int cxx_library(const char *name)
{
    const char *open = NULL;
    int depth = 0;
    for (const char *p = name; *p && !open; p++) {
        depth += *p == '<';
        depth -= *p == '>';
        if (*p == '(' && depth == 0 && p > name)
            open = p;
    }
    if (!open)
        open = name + strlen(name);
    const char *q = open;
    depth = 0;
    while (q > name && (depth > 0 || q[-1] != ' ')) {
        depth += q[-1] == '>';
        depth -= q[-1] == '<';
        q--;
    }
    return strncmp(q, "std::", 5) == 0 || strncmp(q, "__gnu_cxx::", 11) == 0;
}

/* Regions by name (runtime regions, whose flushes vary, and the C++ library's left out): their
 * calls; the kind of those called, when not a function; their CPU ms when `cputime` selected them. */
static void print_regions(FILE *out)
{
    int *idx = malloc(sizeof(int) * (ntotals + 1)), n = 0;
    for (int j = 0; j < ntotals; j++)
        if (totals[j].kind != RUNTIME_KIND && !cxx_library(totals[j].name))
            idx[n++] = j;
    for (int a = 1; a < n; a++) /* by name */
        for (int b = a; b > 0 && strcmp(totals[idx[b]].name, totals[idx[b - 1]].name) < 0; b--) {
            int x = idx[b];
            idx[b] = idx[b - 1];
            idx[b - 1] = x;
        }
    for (int k = 0; k < n; k++)
        if (totals[idx[k]].calls)
            fprintf(out, "calls %s %llu\n", totals[idx[k]].name, (unsigned long long)totals[idx[k]].calls);
    for (int k = 0; k < n; k++)
        if (totals[idx[k]].kind != 0 && totals[idx[k]].calls)
            fprintf(out, "region kind %s %d\n", totals[idx[k]].name, totals[idx[k]].kind);
    for (int k = 0; k < n; k++)
        if (totals[idx[k]].has_cpu)
            fprintf(out, "cpu ms %s %llu\n", totals[idx[k]].name,
                    (unsigned long long)(totals[idx[k]].cpu / 1000000));
    free(idx);
}

static void print_thread_names(FILE *out)
{
    char **names = malloc(sizeof(char *) * (thread_name_count + 1));
    int n = 0;
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

/* What groups objects: a condition variable's signals (releases; its acquisitions are returns
 * from waits, spurious wakeups included), any other object's acquisitions. */
static uint64_t sobj_uses(const struct sobj *o)
{
    return o->kind == 2 ? o->releases : o->acq;
}

static int by_sobj(const void *a, const void *b)
{
    const struct sobj *x = a, *y = b;
    if (x->kind != y->kind)
        return x->kind - y->kind;
    if (sobj_uses(x) != sobj_uses(y))
        return sobj_uses(x) < sobj_uses(y) ? -1 : 1;
    return x->by_init - y->by_init;
}

/* Synchronization objects (kinds: 0 mutex, 1 rwlock, 2 cond, 3 barrier, 4 sem, 5 spin, 6
 * thread): acquisitions and releases per kind; the objects grouped by kind, acquisitions (a
 * condition variable's signals) and what named them (the init call or the first use), with how
 * many of them were never contended nor waited (quiet) and how many were contended and waited. */
static void print_sync(FILE *out)
{
    int n = 0; /* the objects used (a sanitizer's own thread is one never joined) */
    for (int k = 0; k < nall_sobjs; k++)
        if (all_sobjs[k].acq || all_sobjs[k].releases)
            all_sobjs[n++] = all_sobjs[k];
    nall_sobjs = n;
    for (int kind = 0; kind <= 6; kind++) {
        uint64_t acq = 0, rel = 0;
        int any = 0;
        for (int k = 0; k < nall_sobjs; k++)
            if (all_sobjs[k].kind == kind) {
                any = 1;
                acq += all_sobjs[k].acq;
                rel += all_sobjs[k].releases;
            }
        if (any)
            fprintf(out, "sync kind %d acquisitions %llu\nsync kind %d releases %llu\n", kind,
                    (unsigned long long)acq, kind, (unsigned long long)rel);
    }
    qsort(all_sobjs, nall_sobjs, sizeof *all_sobjs, by_sobj);
    for (int j = 0; j < nall_sobjs;) {
        int k = j, quiet = 0, waited = 0;
        for (; k < nall_sobjs && by_sobj(&all_sobjs[k], &all_sobjs[j]) == 0; k++) {
            quiet += all_sobjs[k].contended == 0 && all_sobjs[k].wait == 0;
            waited += all_sobjs[k].contended > 0 && all_sobjs[k].wait > 0;
        }
        const struct sobj *o = &all_sobjs[j];
        char key[128];
        snprintf(key, sizeof key, "sync objects kind %d %s %llu named by %s", o->kind,
                 o->kind == 2 ? "signals" : "acquisitions", (unsigned long long)sobj_uses(o),
                 o->by_init ? "init" : "use");
        fprintf(out, "%s %d\n%s quiet %d\n%s waited %d\n", key, k - j, key, quiet, key, waited);
        j = k;
    }
}

/* Messages between world ranks S and D: sent (count and bytes) from the sender's MessageStats,
 * received from the receiver's, traced from send/receive trace events; pairs of none left out. */
static void print_messages(FILE *out)
{
    if (ranks_seen)
        fprintf(out, "ranks %d\n", ranks_seen);
    static const char *const what[5] = {"sent", "sent bytes", "received", "traced sends", "traced receives"};
    uint64_t(*const m[5])[MAXRANK] = {sent, sent_bytes, recvd, tsent, trecvd};
    for (int w = 0; w < 5; w++)
        for (int s = 0; s < MAXRANK; s++)
            for (int d = 0; d < MAXRANK; d++)
                if (m[w][s][d])
                    fprintf(out, "%s %d:%d %llu\n", what[w], s, d, (unsigned long long)m[w][s][d]);
}

/* Streams (socket wrappers, trace subtypes 8 and 9): distinct streams, the failures of
 * streams_match, and per thread name the events that moved bytes, their bytes, and the opens. */
static void print_streams(FILE *out)
{
    if (!nsevs)
        return;
    fprintf(out, "streams %lld\n", distinct_streams());
    fprintf(out, "stream mismatches %d\n", streams_match());
    char **names = malloc(sizeof(char *) * nsevs);
    size_t n = 0;
    for (size_t i = 0; i < nsevs; i++)
        if (sevs[i].slot < MAXSLOT)
            names[n++] = thread_names[sevs[i].slot];
    qsort(names, n, sizeof *names, by_name);
    for (size_t j = 0; j < n; j++) {
        if (j > 0 && strcmp(names[j], names[j - 1]) == 0)
            continue;
        fprintf(out, "stream sends %s %lld\nstream receives %s %lld\n", names[j],
                stream_total(names[j], 8, 0, 0), names[j], stream_total(names[j], 9, 0, 0));
        fprintf(out, "stream bytes sent %s %lld\nstream bytes received %s %lld\n", names[j],
                stream_total(names[j], 8, 1, 0), names[j], stream_total(names[j], 9, 1, 0));
        fprintf(out, "stream opens %s %lld\n", names[j], stream_total(names[j], 8, 0, 1));
    }
    free(names);
}

/* The coarse clock (ProcessInfo.clock 2): nonzero time steps between a thread's events under
 * half of CLOCK_MONOTONIC_COARSE's resolution (none expected), and whether there is one. */
static void print_coarse_steps(FILE *out)
{
    struct timespec res;
    if (clock_seen != 2 || clock_mixed || !trace_events || clock_getres(CLOCK_MONOTONIC_COARSE, &res) != 0)
        return;
    uint64_t ns = (uint64_t)res.tv_sec * 1000000000ull + (uint64_t)res.tv_nsec;
    fprintf(out, "coarse steps under half the resolution %d\n",
            nonzero_steps > 0 && min_nonzero_step < ns / 2);
    fprintf(out, "coarse nonzero steps %s\n", nonzero_steps ? "yes" : "no");
}

/* CPU samples (record 21) of each process: with 10 or more distinct sample times, the period
 * asked for (PLX_CPU_SAMPLE in the run's environment, which run_case.sh passes on) must bound the
 * steps between them: the 10th percentile at most 2·MS and the lower
 * quartile at least MS/2. Not the median: on a loaded machine the sampler wakes late, and each
 * late wake lengthens its step; with absolute deadlines a late wake shortens no step below the
 * period but by its predecessor's lateness, so sampling slower than asked shows as the 10th
 * percentile over twice the period, faster as the lower quartile under half of it. */
static int off_period(int p, double ms)
{
    uint64_t *times = NULL;
    size_t nt = 0, capt = 0, nd = 0;
    for (size_t i = 0; i < ncsamples; i++)
        if (csamples[i].proc == p) {
            times = grow(times, &capt, nt, sizeof *times);
            times[nt++] = csamples[i].ticks;
        }
    qsort(times, nt, sizeof *times, by_u64);
    for (size_t i = 0; i < nt; i++)
        if (i == 0 || times[i] != times[i - 1])
            times[nd++] = times[i];
    int off = 0;
    if (nd >= 10 && ms > 0) {
        double *steps = malloc((nd - 1) * sizeof *steps);
        for (size_t i = 1; i < nd; i++)
            steps[i - 1] = (sample_ns(p, times[i]) - sample_ns(p, times[i - 1])) / 1e6;
        qsort(steps, nd - 1, sizeof *steps, by_double);
        double decile = steps[(nd - 1) / 10], quartile = steps[(nd - 1) / 4];
        off = decile > ms * 2 || quartile < ms / 2;
        if (off)
            fprintf(stderr, "plx_check: process %d: steps between CPU samples: 10th percentile %.3f ms, "
                    "lower quartile %.3f ms, expected ~%.0f\n", p, decile, quartile, ms);
        free(steps);
    }
    free(times);
    return off;
}

static void print_cpu_samples(FILE *out)
{
    if (!ncsamples)
        return;
    const char *env = getenv("PLX_CPU_SAMPLE");
    double ms = env ? atof(env) : 0;
    qsort(csamples, ncsamples, sizeof *csamples, by_cpu_sample);
    int with = 0, off = 0, unknown = 0, back = 0;
    for (int p = 1; p <= processes && p < 1024; p++) {
        int any = 0;
        for (size_t i = 0; i < ncsamples && !any; i++)
            any = csamples[i].proc == p;
        with += any;
        off += any && off_period(p, ms);
    }
    for (size_t i = 0; i < ncsamples; i++) {
        const struct csample *x = &csamples[i];
        if (x->thread == 0xFFFFFFFFu)
            continue;
        unknown += x->proc >= 1024 || x->thread >= 4096 || !thread_known[x->proc][x->thread];
        back += i > 0 && csamples[i - 1].proc == x->proc && csamples[i - 1].thread == x->thread &&
                csamples[i - 1].cpu > x->cpu;
    }
    fprintf(out, "cpu sampled processes %d\n", with);
    if (ms > 0)
        fprintf(out, "cpu sampled processes off the period %d\n", off);
    fprintf(out, "cpu samples of threads without a ThreadInfo %d\ncpu times going back %d\n", unknown, back);
}

/* DIR.times, when the program wrote it beside the experiment: "spin_start sleep_start
 * sleep_end spin_end" (CLOCK_MONOTONIC ns); the CPU ms thread 0's samples add in each. */
static void print_cpu_intervals(FILE *out, const char *dir)
{
    char path[8192];
    snprintf(path, sizeof path, "%s.times", dir);
    FILE *f = fopen(path, "r");
    double t[4];
    if (!f)
        return;
    int got = fscanf(f, "%lf %lf %lf %lf", &t[0], &t[1], &t[2], &t[3]);
    fclose(f);
    if (got != 4) {
        fprintf(out, "cpu intervals unreadable %s\n", path);
        return;
    }
    qsort(csamples, ncsamples, sizeof *csamples, by_cpu_sample);
    static const char *const what[3] = {"first spin", "sleep", "second spin"};
    for (int k = 0; k < 3; k++)
        fprintf(out, "cpu ms sampled in the %s %lld\n", what[k], (long long)(cpu_added(t[k], t[k + 1]) / 1e6));
}

/* The experiment as stable text, counts only (no times, pids or sizes that vary from run to
 * run), one "KEY VALUE" a line. The blessed cases (case.sh) compare it with their files. */
static void print_counts(FILE *out, const char *dir)
{
    fprintf(out, "processes %d\nended %d\n", processes, ended);
    if (end_signal >= 0)
        fprintf(out, "end signal %d\n", end_signal);
    if (clock_mixed)
        fprintf(out, "clock mixed\n");
    else if (clock_seen > 0) /* 0, TSC ticks, is the default */
        fprintf(out, "clock %d\n", clock_seen);
    fprintf(out, "threads %d\n", threads);
    if (trace_events) {
        /* the program's events: the runtime's own regions (plx_flush, plx_symbols) are left
         * out, as from the calls, since which thread resolves symbols first varies from run to run */
        unsigned long long own = 0;
        for (int j = 0; j < ntotals; j++)
            if (totals[j].kind == RUNTIME_KIND)
                own += 2 * totals[j].calls;
        fprintf(out, "trace events %llu\n", (unsigned long long)(trace_events - own));
    }
    print_regions(out);
    print_thread_names(out);
    print_sync(out);
    print_messages(out);
    print_streams(out);
    if (njevs) {
        long long joins = 0, ends = 0, paired = join_pairs(&joins, &ends);
        fprintf(out, "joins %lld\nthread ends %lld\njoins paired with a thread end %lld\n", joins, ends, paired);
    }
    print_coarse_steps(out);
    print_cpu_samples(out);
    print_cpu_intervals(out, dir);
    if (sample_trees || thread_profiles)
        fprintf(out, "thread profiles %llu\nsample trees %llu\n", (unsigned long long)thread_profiles,
                (unsigned long long)sample_trees);
    if (sample_trees)
        fprintf(out, "malformed sample trees %llu\nstack samples %llu\n", (unsigned long long)bad_trees,
                (unsigned long long)stack_samples);
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--dump") == 0) {
        plx_walk_dump(argv[2], stdout);
        return 0;
    }
    if (argc != 2) {
        fprintf(stderr, "usage: plx_check DIR | plx_check --dump DIR\n");
        return 2;
    }
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
    print_counts(stdout, argv[1]);
    return errors ? 1 : 0;
}
