/* A thread's trace buffer: the slow paths of its event words (a full buffer, a time reset,
 * extended events) and writing it as a chunk. Only the owning thread touches it. */
#include "hotpath.h"

#include <errno.h>
#include <string.h>

void plx_trace_write_chunk(struct plx_thread *t)
{
    uint32_t count = (uint32_t)(t->pos - t->buf);
    if (count == 0)
        return;
    unsigned char head[36];
    uint64_t ct = plx_ticks(), cm = plx_monotonic_ns();
    memcpy(head, &t->index, 4);
    memcpy(head + 4, &count, 4);
    memcpy(head + 8, &t->base, 8);
    memcpy(head + 16, &ct, 8);
    memcpy(head + 24, &cm, 8);
    plx_write_record2(1, PLX_REC_TRACE_CHUNK, head, 32, t->buf, count * 8u);
    t->trace_events += count;
    t->pos = t->buf;
    t->base = t->last;
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
    uint64_t t1 = plx_ticks();
    if (t1 - t0 > PLX_EV_DELTA_MAX)
        t1 = t0;
    *t->pos++ = (PLX_EV_ENTER << 62) | ((uint64_t)PLX_REGION_FLUSH << 40) | (t0 - t->last);
    *t->pos++ = (PLX_EV_EXIT << 62) | ((uint64_t)PLX_REGION_FLUSH << 40) | (t1 - t0);
    t->last = t1;
    t->guard--;
    errno = saved;
}

void plx_trace_time_reset(struct plx_thread *t, uint64_t now)
{
    *t->pos++ = (PLX_EV_EXT << 62) | ((uint64_t)PLX_EXT_TIME_RESET << 56) | (1ull << 48);
    *t->pos++ = now;
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
        plx_trace_slow(t, PLX_EV_EXT << 62, now);
    else
        plx_trace_put(t, PLX_EV_EXT, 0, now);
    t->pos[-1] |= ((uint64_t)subtype << 56) | ((uint64_t)words << 48);
    for (unsigned i = 0; i < words; i++)
        *t->pos++ = payload[i];
}
