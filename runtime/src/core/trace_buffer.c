/* A thread's trace buffer: the slow paths of its event words (a full buffer, a time reset,
 * extended events) and writing it as a chunk. Only the owning thread touches it. */
#include "hotpath.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

/* The "trace" live file (spec/format.md "Live files"): word 0 is the base ticks of the events
 * from word 1 on, 0 while they are being written as a chunk; the words past the last event are
 * zero (the file starts zeroed and a written chunk's words are zeroed again). */
void plx_trace_buffer_map(struct plx_thread *t, uint64_t *mem, size_t words, int in_file)
{
    uint32_t room; /* all of it: the file backs the whole buffer, or the buffer is memory */
    uint64_t *w = in_file ? plx_live_take("trace", t->index, 8, (uint32_t)(words + 1),
                                          (uint32_t)(words + 1), &t->live_trace, &room)
                          : NULL;
    if (w) {
        t->live_trace->count = t->live_trace->capacity;
        w[0] = t->base;
        t->buf = w + 1;
    } else {
        t->buf = mem;
    }
    t->pos = t->buf;
    /* Room is kept past `end` for the largest single event: a time reset (2 words), then an
     * extended event with up to 5 payload words; writers check `pos < end` first. */
    t->end = t->buf + words - 8;
}

/* The thread's events are all in chunks (its buffer zeroed): the file goes back to the pool. */
void plx_trace_buffer_unmap(struct plx_thread *t)
{
    plx_live_give("trace", t->live_trace);
    t->live_trace = NULL;
}

void plx_trace_write_chunk(struct plx_thread *t)
{
    uint32_t count = (uint32_t)(t->pos - t->buf);
    if (count == 0)
        return;
    if (t->live_trace)
        t->buf[-1] = 0; /* in flight: a reader takes them from the chunk, or loses them */
    uint64_t ct = plx_ticks(), cm = plx_monotonic_ns();
    struct plx_rec rec;
    plx_rec_init(&rec);
    plx_enc_trace_chunk(&rec, t->index, count, t->base, ct, cm);
    /* a chunk the file did not take is lost, and counted so (the trace holds trace_events) */
    if (plx_rec_write_bulk(&rec, 1, t->buf) == 0)
        t->trace_events += count;
    else
        t->lost_events += count;
    t->pos = t->buf;
    t->base = t->last;
    if (t->live_trace) {
        memset(t->buf, 0, (size_t)count * 8);
        t->buf[-1] = t->base;
    }
}

/* Writes the buffer as one chunk; the write is recorded as region plx_flush in the next one. */
void plx_trace_flush(struct plx_thread *t)
{
    int saved = errno;
    t->guard++;
    uint64_t t0 = plx_ticks();
    if (t0 - t->last > PLX_EV_DELTA_MAX)
        t0 = t->last; /* the reset comes with the next event */
    plx_trace_write_chunk(t);
    plx_stack_sampler_check();
    uint64_t t1 = plx_ticks();
    if (t1 - t0 > PLX_EV_DELTA_MAX)
        t1 = t0;
    *t->pos++ = (PLX_EV_ENTER << PLX_EV_KIND_SHIFT) | ((uint64_t)PLX_REGION_FLUSH << PLX_EV_REGION_SHIFT) |
                (t0 - t->last);
    *t->pos++ = (PLX_EV_EXIT << PLX_EV_KIND_SHIFT) | ((uint64_t)PLX_REGION_FLUSH << PLX_EV_REGION_SHIFT) |
                (t1 - t0);
    t->last = t1;
    t->guard--;
    errno = saved;
}

void plx_trace_time_reset(struct plx_thread *t, uint64_t now)
{
    *t->pos++ = (PLX_EV_EXT << PLX_EV_KIND_SHIFT) | ((uint64_t)PLX_EXT_TIME_RESET << PLX_EV_SUBTYPE_SHIFT) |
                ((uint64_t)PLX_EXT_TIME_RESET_WORDS << PLX_EV_WORDS_SHIFT);
    plx_ext_pack_time_reset(t->pos, now);
    t->pos += PLX_EXT_TIME_RESET_WORDS;
    t->last = now;
}

void plx_trace_slow(struct plx_thread *t, uint64_t word, uint64_t now)
{
    if (t->pos >= t->end)
        plx_trace_flush(t);
    if ((int64_t)(now - t->last) < 0)
        now = t->last; /* the thread moved to a core whose counter lags: keep its events in order */
    uint64_t d = now - t->last;
    if (d > PLX_EV_DELTA_MAX) {
        plx_trace_time_reset(t, now);
        d = 0;
    }
    *t->pos++ = (word & ~PLX_EV_DELTA_MAX) | d;
    t->last = now;
}

/* An extended event now (trace mode only): subtype, then up to 5 payload words. */
void plx_trace_ext(struct plx_thread *t, unsigned subtype, const uint64_t *payload, unsigned words)
{
    if (t->buf)
        plx_trace_ext_at(t, plx_ticks(), subtype, payload, words);
}

/* The same at `now`, a clock value the caller read (one earlier than the thread's last event
 * is moved to that event's time, as in plx_trace_slow). */
void plx_trace_ext_at(struct plx_thread *t, uint64_t now, unsigned subtype, const uint64_t *payload,
                      unsigned words)
{
    if (!t->buf || words > 5)
        return;
    if (t->pos >= t->end || now - t->last > PLX_EV_DELTA_MAX)
        plx_trace_slow(t, PLX_EV_EXT << PLX_EV_KIND_SHIFT, now);
    else
        plx_trace_put(t, PLX_EV_EXT, 0, now);
    t->pos[-1] |= ((uint64_t)subtype << PLX_EV_SUBTYPE_SHIFT) | ((uint64_t)words << PLX_EV_WORDS_SHIFT);
    for (unsigned i = 0; i < words; i++)
        *t->pos++ = payload[i];
}
