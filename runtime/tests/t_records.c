/* The generated encoders (records.h) against the generated reader table (plx_walk.c): what one
 * writes the other reads field by field; a record whose repeated items do not match its count,
 * or that does not fit a fixed buffer, is dropped whole and the records before it are kept. */
#include <stdio.h>
#include <string.h>

#include "plx_walk.h"

static int fails;
#define CHECK(c)                                                                               \
    do {                                                                                       \
        if (!(c)) {                                                                            \
            fprintf(stderr, "t_records: %s:%d: %s\n", __FILE__, __LINE__, #c);                 \
            fails++;                                                                           \
        }                                                                                      \
    } while (0)

/* The record at `off` of a buffer: its type, payload and length. */
static const unsigned char *record_at(const unsigned char *b, uint32_t off, uint16_t *type, uint32_t *len)
{
    memcpy(type, b + off, 2);
    memcpy(len, b + off + 4, 4);
    return b + off + PLX_RECORD_HEADER_SIZE;
}

int main(void)
{
    unsigned char buf[256];
    struct plx_rec r;
    struct plx_val v[16];
    uint16_t type;
    uint32_t len;

    /* CommDef: the repeated ranks from an array; MpiInit: a string */
    plx_rec_over(&r, buf, 0, sizeof buf);
    const uint32_t ranks[3] = {4, 0, 2};
    plx_enc_comm_def(&r, 7, 1, 3, ranks);
    plx_enc_mpi_init(&r, 1, 2, 3, 123456789, "lib \"x\"");
    plx_rec_end(&r);
    CHECK(r.dropped == 0);
    const unsigned char *p = record_at(buf, 0, &type, &len);
    CHECK(type == PLX_REC_COMM_DEF && len == PLX_COMM_DEF_FIXED_SIZE + 3 * PLX_COMM_DEF_RANKS_ITEM_SIZE);
    const struct plx_record_def *d = plx_walk_def(type);
    CHECK(d && plx_walk_record(d, p, len, v) == 0);
    CHECK(v[PLX_F_COMM_DEF_COMM].u == 7 && v[PLX_F_COMM_DEF_ORDINAL].u == 1 && v[PLX_F_COMM_DEF_SIZE].u == 3);
    CHECK(plx_walk_item(d, PLX_F_COMM_DEF_RANKS, v, 0, 0) == 4 && plx_walk_item(d, PLX_F_COMM_DEF_RANKS, v, 2, 0) == 2);
    uint32_t second = PLX_RECORD_HEADER_SIZE + len;
    p = record_at(buf, second, &type, &len);
    d = plx_walk_def(type);
    CHECK(type == PLX_REC_MPI_INIT && plx_walk_record(d, p, len, v) == 0);
    CHECK(v[PLX_F_MPI_INIT_TICKS].u == 123456789 && v[PLX_F_MPI_INIT_LIBRARY].n == 7 &&
          memcmp(v[PLX_F_MPI_INIT_LIBRARY].p, "lib \"x\"", 7) == 0);
    CHECK(r.len == second + PLX_RECORD_HEADER_SIZE + len);

    /* ThreadProfile announcing 2 nodes with 1 appended: dropped, the records before kept */
    uint32_t kept = r.len;
    plx_enc_thread_profile(&r, 0, 1, 2, 3, 4, 5, 2);
    plx_enc_thread_profile_nodes(&r, 0xFFFFFFFFu, 9, 1, 0, 10, 10);
    plx_rec_end(&r);
    CHECK(r.dropped == 1 && r.len == kept);

    /* a record that does not fit the fixed buffer: dropped */
    plx_rec_over(&r, buf, 0, 40);
    plx_enc_calibration(&r, 5, 6);
    plx_enc_filter(&r, "exclude std::* and a rule longer than the room left");
    plx_rec_end(&r);
    CHECK(r.dropped == 1 && r.len == PLX_RECORD_HEADER_SIZE + 16);

    /* a TraceChunk: the length counts the events the writer appends */
    plx_rec_over(&r, buf, 0, sizeof buf);
    plx_enc_trace_chunk(&r, 3, 5, 100, 200, 300);
    plx_rec_end(&r);
    record_at(buf, 0, &type, &len);
    CHECK(type == PLX_REC_TRACE_CHUNK && len == PLX_TRACE_CHUNK_FIXED_SIZE + 5 * 8 && r.len == 8 + 32);

    /* payload packers against the subtype table: signed and narrow fields */
    uint64_t w[PLX_EXT_SEND_WORDS];
    plx_ext_pack_send(w, 1, -5, 4096, 2);
    const struct plx_subtype_def *st = plx_walk_subtype(PLX_EXT_SEND);
    CHECK(st && st->words == PLX_EXT_SEND_WORDS);
    CHECK(plx_walk_subfield(st, w, PLX_SF_SEND_PEER) == 1 && (int64_t)plx_walk_subfield(st, w, PLX_SF_SEND_TAG) == -5);
    CHECK(plx_walk_subfield(st, w, PLX_SF_SEND_BYTES) == 4096 && plx_walk_subfield(st, w, PLX_SF_SEND_COMM) == 2);
    uint64_t a[PLX_EXT_ACQUIRE_WORDS];
    plx_ext_pack_acquire(a, 0xFFFFFFFFu, 6, 0xABCDEF, 77, 1);
    st = plx_walk_subtype(PLX_EXT_ACQUIRE);
    CHECK(a[0] == (0xFFFFFFFFull | 6ull << 32 | 0xABCDEFull << 40) &&
          plx_walk_subfield(st, a, PLX_SF_ACQUIRE_KIND) == 6 &&
          plx_walk_subfield(st, a, PLX_SF_ACQUIRE_HOLDER) == 0xABCDEF);
    CHECK(a[1] == (77ull | 1ull << 63) && plx_walk_subfield(st, a, PLX_SF_ACQUIRE_WAIT_TICKS) == 77 &&
          plx_walk_subfield(st, a, PLX_SF_ACQUIRE_SHARED) == 1);
    CHECK(plx_walk_subtype(63) == NULL && plx_walk_def(999) == NULL);

    if (!fails)
        printf("t_records: ok\n");
    return fails ? 1 : 0;
}
