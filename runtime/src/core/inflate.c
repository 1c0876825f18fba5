/* zlib inflater for compressed debug sections (see inflate.h). */
#include "inflate.h"

#include <stdint.h>
#include <string.h>

/* Inflate (RFC 1951) after the manner of zlib's puff.c: canonical Huffman decoding bit by bit,
 * every input read and output write bounds-checked. Enough for debug sections, off the hot path. */

struct inflater {
    const unsigned char *in;
    size_t inlen, inpos;
    unsigned char *out;
    size_t outlen, outpos;
    uint32_t bitbuf;
    unsigned bitcnt;
    int bad;
};

struct huff {
    short count[16];  /* number of codes of each length */
    short symbol[320]; /* symbols ordered by code */
};

static unsigned inf_bits(struct inflater *s, unsigned need)
{
    uint32_t val = s->bitbuf;
    while (s->bitcnt < need) {
        if (s->inpos >= s->inlen) {
            s->bad = 1;
            return 0;
        }
        val |= (uint32_t)s->in[s->inpos++] << s->bitcnt;
        s->bitcnt += 8;
    }
    s->bitbuf = need < 32 ? val >> need : 0;
    s->bitcnt -= need;
    return val & ((1u << need) - 1);
}

static int inf_stored(struct inflater *s)
{
    s->bitbuf = 0;
    s->bitcnt = 0;
    if (s->inlen - s->inpos < 4)
        return -1;
    unsigned len = s->in[s->inpos] | (unsigned)s->in[s->inpos + 1] << 8;
    unsigned nlen = s->in[s->inpos + 2] | (unsigned)s->in[s->inpos + 3] << 8;
    s->inpos += 4;
    if (len != (~nlen & 0xffffu))
        return -1;
    if (s->inlen - s->inpos < len || s->outlen - s->outpos < len)
        return -1;
    memcpy(s->out + s->outpos, s->in + s->inpos, len);
    s->inpos += len;
    s->outpos += len;
    return 0;
}

static int inf_decode(struct inflater *s, const struct huff *h)
{
    int code = 0, first = 0, index = 0;
    for (int len = 1; len <= 15; len++) {
        code |= (int)inf_bits(s, 1);
        if (s->bad)
            return -1;
        int count = h->count[len];
        if (code - count < first)
            return h->symbol[index + (code - first)];
        index += count;
        first += count;
        first <<= 1;
        code <<= 1;
    }
    return -1; /* ran out of codes */
}

/* Builds the decoding tables from code lengths; 0 if complete or incomplete, -1 if
 * over-subscribed. Incomplete codes are accepted; unused codes fail at decode time. */
static int inf_construct(struct huff *h, const short *length, int n)
{
    short offs[16];
    for (int len = 0; len <= 15; len++)
        h->count[len] = 0;
    for (int i = 0; i < n; i++)
        h->count[length[i]]++;
    if (h->count[0] == n)
        return 0;
    int left = 1;
    for (int len = 1; len <= 15; len++) {
        left <<= 1;
        left -= h->count[len];
        if (left < 0)
            return -1;
    }
    offs[1] = 0;
    for (int len = 1; len < 15; len++)
        offs[len + 1] = (short)(offs[len] + h->count[len]);
    for (int i = 0; i < n; i++)
        if (length[i] != 0)
            h->symbol[offs[length[i]]++] = (short)i;
    return 0;
}

static int inf_codes(struct inflater *s, const struct huff *lencode, const struct huff *distcode)
{
    static const short lbase[29] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                                    31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
    static const short lext[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                   2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
    static const short dbase[30] = {1,   2,   3,   4,   5,   7,    9,    13,   17,   25,
                                    33,  49,  65,  97,  129, 193,  257,  385,  513,  769,
                                    1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
    static const short dext[30] = {0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                   6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};
    for (;;) {
        int sym = inf_decode(s, lencode);
        if (sym < 0)
            return -1;
        if (sym < 256) {
            if (s->outpos >= s->outlen)
                return -1;
            s->out[s->outpos++] = (unsigned char)sym;
        } else if (sym == 256) {
            return 0;
        } else {
            sym -= 257;
            if (sym >= 29)
                return -1;
            size_t len = (size_t)lbase[sym] + inf_bits(s, (unsigned)lext[sym]);
            int dsym = inf_decode(s, distcode);
            if (dsym < 0 || dsym >= 30)
                return -1;
            size_t dist = (size_t)dbase[dsym] + inf_bits(s, (unsigned)dext[dsym]);
            if (s->bad || dist > s->outpos || s->outlen - s->outpos < len)
                return -1;
            for (size_t i = 0; i < len; i++, s->outpos++)
                s->out[s->outpos] = s->out[s->outpos - dist];
        }
    }
}

static int inf_fixed(struct inflater *s)
{
    struct huff l, d;
    short lengths[288];
    int i;
    for (i = 0; i < 144; i++)
        lengths[i] = 8;
    for (; i < 256; i++)
        lengths[i] = 9;
    for (; i < 280; i++)
        lengths[i] = 7;
    for (; i < 288; i++)
        lengths[i] = 8;
    inf_construct(&l, lengths, 288);
    for (i = 0; i < 30; i++)
        lengths[i] = 5;
    inf_construct(&d, lengths, 30);
    return inf_codes(s, &l, &d);
}

static int inf_dynamic(struct inflater *s)
{
    static const short order[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};
    short lengths[320];
    struct huff lencode, distcode;
    int nlen = (int)inf_bits(s, 5) + 257;
    int ndist = (int)inf_bits(s, 5) + 1;
    int ncode = (int)inf_bits(s, 4) + 4;
    if (s->bad || nlen > 286 || ndist > 30)
        return -1;
    int index;
    for (index = 0; index < ncode; index++)
        lengths[order[index]] = (short)inf_bits(s, 3);
    for (; index < 19; index++)
        lengths[order[index]] = 0;
    if (s->bad || inf_construct(&lencode, lengths, 19) != 0)
        return -1;
    index = 0;
    while (index < nlen + ndist) {
        int sym = inf_decode(s, &lencode);
        if (sym < 0)
            return -1;
        if (sym < 16) {
            lengths[index++] = (short)sym;
        } else {
            short len = 0;
            int rep;
            if (sym == 16) {
                if (index == 0)
                    return -1;
                len = lengths[index - 1];
                rep = 3 + (int)inf_bits(s, 2);
            } else if (sym == 17) {
                rep = 3 + (int)inf_bits(s, 3);
            } else {
                rep = 11 + (int)inf_bits(s, 7);
            }
            if (s->bad || index + rep > nlen + ndist)
                return -1;
            while (rep--)
                lengths[index++] = len;
        }
    }
    if (lengths[256] == 0)
        return -1;
    if (inf_construct(&lencode, lengths, nlen) != 0)
        return -1;
    if (inf_construct(&distcode, lengths + nlen, ndist) != 0)
        return -1;
    return inf_codes(s, &lencode, &distcode);
}

/* Inflates a zlib stream (RFC 1950) into exactly outlen bytes; 0 on success. */
int plx_zlib_inflate(unsigned char *out, size_t outlen, const unsigned char *in, size_t inlen)
{
    if (inlen < 6)
        return -1;
    unsigned cmf = in[0], flg = in[1];
    if ((cmf & 0x0f) != 8 || (cmf >> 4) > 7 || ((cmf << 8) | flg) % 31 != 0 || (flg & 0x20))
        return -1;
    struct inflater s = {.in = in, .inlen = inlen, .inpos = 2, .out = out, .outlen = outlen};
    int last;
    do {
        last = (int)inf_bits(&s, 1);
        unsigned type = inf_bits(&s, 2);
        if (s.bad)
            return -1;
        int err = type == 0 ? inf_stored(&s) : type == 1 ? inf_fixed(&s) : type == 2 ? inf_dynamic(&s) : -1;
        if (err || s.bad)
            return -1;
    } while (!last);
    if (s.outpos != outlen)
        return -1;
    /* Adler-32 trailer, after the bits of the last byte */
    if (s.inlen - s.inpos < 4)
        return -1;
    uint32_t want = (uint32_t)in[s.inpos] << 24 | (uint32_t)in[s.inpos + 1] << 16 |
                    (uint32_t)in[s.inpos + 2] << 8 | in[s.inpos + 3];
    uint32_t a = 1, b = 0;
    for (size_t i = 0; i < outlen;) {
        size_t n = outlen - i < 5552 ? outlen - i : 5552;
        for (size_t k = 0; k < n; k++, i++) {
            a += out[i];
            b += a;
        }
        a %= 65521;
        b %= 65521;
    }
    return ((b << 16) | a) == want ? 0 : -1;
}

