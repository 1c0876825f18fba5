/* A small zlib (RFC 1950/1951) inflater for compressed debug sections: bounds-checked, slow,
 * never on the hot path. */
#ifndef PLX_INFLATE_H
#define PLX_INFLATE_H

#include <stddef.h>

/* Inflates a zlib stream into exactly outlen bytes (Adler-32 checked); 0 on success. */
__attribute__((visibility("hidden")))
int plx_zlib_inflate(unsigned char *out, size_t outlen, const unsigned char *in, size_t inlen);

#endif
